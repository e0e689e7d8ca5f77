/**
 * The live adapter: serves a request processor over node:http. Each request's body is read up to the
 * limit; the processor's plain form (`answer`, Answer.ts) is called with the services of the runtime the
 * server was started in: a Reply is written at once, a later one when it is delivered, and only an Effect
 * runs, in a fiber on that runtime (a processor without a plain form runs in a fiber too). The Reply is written
 * with its reason phrase in `res.statusMessage` (the reference carries error text there; @effect/platform-node
 * has no place for it). A client that goes away interrupts its request's fiber (long polls end with it); a
 * reply delivered after the client has gone is dropped.
 *
 * Limits, so that no client can hold the node's memory, event loop or file descriptors:
 * - a body over `maxRequestBodyBytes` (by its Content-Length, or counted as it streams in) is handed to
 *   the processor as `bodyTooLarge` at once, without the body; what else the client sends is discarded
 *   unread for a short while, so that it reads the 413 rather than a reset, then the connection closes
 *   (the 413 says `Connection: close`, so a keep-alive client does not reuse the connection);
 * - headers over 16 KiB get a 431 and a clean close (a reset would hide the answer);
 * - node:http's header and request timeouts cut off clients that send their headers or body too slowly
 *   (408); they count until the request has arrived, so long polls are not cut;
 * - idle keep-alive connections close after `keepAliveTimeoutMillis`;
 * - past `maxConnections` open connections, new ones are closed as they arrive.
 *
 * Closing the scope is a graceful stop: the server stops accepting connections, requests already running
 * (an append waiting for its batch to be durable) are given `drainMillis` to finish and be answered, then
 * whatever is left (long polls) is interrupted and every connection closed.
 */
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { Effect, Fiber, Runtime, type Scope } from "effect"
import type { HttpRequest } from "../HttpRequest.js"
import type { Reply } from "../Reply.js"
import { LaterReply, type Answer, type Delivered, type Surroundings } from "../Answer.js"
import { defaultHttpSettings } from "../HttpConfig.js"
import { ListenFailed } from "../ListenFailed.js"

export interface ServeOptions<R> {
  readonly host: string
  readonly port: number
  /** The request processor; its plain form (`answer`, Answer.ts), when it has one, is what is called. */
  readonly handle: ((request: HttpRequest) => Effect.Effect<Reply, never, R>) & {
    readonly answer?: (request: HttpRequest, surroundings: Surroundings<R>) => Answer<R>
  }
  /** Bodies larger than this are handed over as `bodyTooLarge` (default: the pipeline's default limit). */
  readonly maxRequestBodyBytes?: number
  /** Time a client has to send its request headers (default 10 s; at most the request timeout). */
  readonly headersTimeoutMillis?: number
  /** Time a client has to send its whole request, headers and body (default 60 s). */
  readonly requestTimeoutMillis?: number
  /** How long an idle keep-alive connection stays open (default 65 s). */
  readonly keepAliveTimeoutMillis?: number
  /** Open connections at most; more are closed as they arrive (default 500). */
  readonly maxConnections?: number
  /** How long a stop waits for running requests before interrupting them (default 5 s). */
  readonly drainMillis?: number
  /** Told the number of open connections each time one opens or closes (the node's metrics). */
  readonly onConnections?: (open: number) => void
}

export const defaultServeLimits = {
  headersTimeoutMillis: 10_000,
  requestTimeoutMillis: 60_000,
  keepAliveTimeoutMillis: 65_000,
  maxConnections: 500
} as const

/** Largest request head (request line and headers) node:http parses; more is a 431. */
const MAX_HEADER_BYTES = 16 * 1024
/** How long the rest of a refused request is read and discarded before the connection is closed. */
const DISCARD_MILLIS = 5_000

const writeReply = (res: ServerResponse, reply: Reply): void => {
  try {
    // The headers go to writeHead as they are (no per-header setHeader); the reason is set first so that an
    // empty one is replaced by the standard phrase, as an implicit head does.
    res.statusMessage = reply.reason ?? ""
    res.writeHead(reply.status, reply.headers as OutgoingHttpHeaders)
    const body = reply.body
    // An empty body ends the response with its head alone: one write instead of a writev of the head and an
    // empty chunk (the same bytes).
    if (body === undefined || body.length === 0) res.end()
    else res.end(typeof body === "string" ? Buffer.from(body, "utf8") : body)
  } catch {
    // A header value Node refuses (control characters): answer plainly rather than leave the client hanging.
    if (!res.headersSent) {
      res.removeHeader("Content-Length")
      res.writeHead(500, "Internal Server Error", { "Content-Length": "0" })
    }
    res.end()
  }
}

/**
 * Reads and drops what the client still sends, then closes: a client that writes its whole request before
 * reading sees the answer, where closing at once would reset the connection under it. Bounded in time.
 */
const discardThenClose = (socket: Socket, onInput?: IncomingMessage) => {
  const timer = setTimeout(() => socket.destroy(), DISCARD_MILLIS)
  timer.unref()
  socket.once("close", () => clearTimeout(timer))
  // The client has closed its side too: nothing more can arrive.
  socket.once("end", () => socket.destroy())
  if (onInput !== undefined) {
    onInput.resume()
    if (onInput.complete) socket.end()
    else onInput.once("end", () => socket.end())
  } else {
    socket.on("data", () => {
      /* dropped */
    })
    socket.resume()
  }
}

/** The answer node:http would write for a request it could not parse, or undefined to just close. */
const clientErrorAnswer = (error: NodeJS.ErrnoException): string | undefined => {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    case "ECONNRESET":
      return undefined
    default:
      return "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
  }
}

/**
 * Starts an HTTP server for the scope's lifetime; requests run on the runtime of the calling fiber. Fails
 * with ListenFailed when the address cannot be bound.
 */
export const serveHttp = <R>(options: ServeOptions<R>): Effect.Effect<void, ListenFailed, Scope.Scope | R> =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<R>()
    const surroundings: Surroundings<R> = { context: runtime.context, clock: yield* Effect.clock }
    const answerOf = options.handle.answer
    const limit = options.maxRequestBodyBytes ?? defaultHttpSettings.maxRequestBodyBytes
    const running = new Set<Fiber.RuntimeFiber<Reply, never>>()
    /** Requests answered in plain code that wait for their reply (an append for its batch). */
    let waiting = 0
    let drained: (() => void) | undefined
    const settle = () => {
      if (running.size === 0 && waiting === 0) drained?.()
    }

    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      // The request has arrived: no idle limit from here on (a long poll is idle until it is answered).
      req.socket.setTimeout(0)
      /** Runs an Effect answer in a fiber of its own, interrupted when the client goes away. */
      const runFiber = (effect: Effect.Effect<Reply, never, R>) => {
        const fiber = Runtime.runFork(runtime)(effect)
        running.add(fiber)
        res.on("close", () => {
          if (!res.writableFinished) Effect.runFork(Fiber.interrupt(fiber))
        })
        fiber.addObserver((exit) => {
          running.delete(fiber)
          settle()
          if (exit._tag === "Success") writeReply(res, exit.value)
          else if (!res.writableEnded && !res.destroyed)
            writeReply(res, { status: 500, reason: "Internal Server Error", headers: { "Content-Length": "0" } })
        })
      }
      /** A reply delivered later: written unless the client has gone. */
      const delivered = (reply: Delivered<R>) => {
        waiting--
        if (Effect.isEffect(reply)) runFiber(reply)
        else if (!res.destroyed && !res.writableEnded) writeReply(res, reply)
        settle()
      }
      const dispatch = (body: Uint8Array | undefined, bodyTooLarge: boolean) => {
        const request: HttpRequest = {
          method: req.method ?? "GET",
          url: req.url ?? "/",
          headers: req.headers,
          body,
          ...(bodyTooLarge ? { bodyTooLarge } : {}),
          ...(req.socket.remoteAddress !== undefined ? { remote: req.socket.remoteAddress } : {})
        }
        if (answerOf === undefined) return runFiber(options.handle(request))
        let answer: Answer<R>
        try {
          answer = answerOf(request, surroundings)
        } catch (defect) {
          // What the processor's fiber would have died of: the same plain 500 (never a throw into node:http).
          answer = Effect.die(defect)
        }
        if (answer instanceof LaterReply) {
          waiting++
          return answer.onReply(delivered)
        }
        if (Effect.isEffect(answer)) return runFiber(answer)
        writeReply(res, answer)
      }

      let refused = false
      const refuse = () => {
        refused = true
        // The connection ends after this answer: say so, or a keep-alive client sends its next request on
        // it and gets a hang-up. The closing itself is discardThenClose's (after the rest of the body),
        // not node:http's, which would close at once and reset a client still sending.
        res.setHeader("Connection", "close")
        req.socket.destroySoon = () => {}
        discardThenClose(req.socket, req)
        dispatch(undefined, true)
      }
      const declared = Number(req.headers["content-length"])
      if (declared > limit) return refuse()

      const chunks: Array<Buffer> = []
      let size = 0
      req.on("data", (chunk: Buffer) => {
        if (refused) return
        size += chunk.length
        if (size > limit) {
          chunks.length = 0
          refuse()
          return
        }
        chunks.push(chunk)
      })
      req.on("error", () => res.destroy())
      req.on("end", () => {
        if (refused) return
        const empty =
          size === 0 && req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined
        // A body that came in one chunk is that chunk (no copy): nothing writes to a request's body.
        dispatch(empty ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), false)
      })
    }

    const requestTimeout = options.requestTimeoutMillis ?? defaultServeLimits.requestTimeoutMillis
    // node:http refuses a header timeout longer than the request timeout.
    const headersTimeout = Math.min(
      options.headersTimeoutMillis ?? defaultServeLimits.headersTimeoutMillis,
      requestTimeout
    )
    const server = createServer(
      {
        requestTimeout,
        headersTimeout,
        keepAliveTimeout: options.keepAliveTimeoutMillis ?? defaultServeLimits.keepAliveTimeoutMillis,
        // How often node:http looks for timed-out requests (30 s by default, which would stretch every timeout).
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
        maxHeaderSize: MAX_HEADER_BYTES
      },
      onRequest
    )
    server.maxConnections = options.maxConnections ?? defaultServeLimits.maxConnections
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
      const answer = clientErrorAnswer(error)
      if (answer === undefined || !socket.writable) return socket.destroy()
      socket.write(answer)
      discardThenClose(socket)
      socket.end()
    })
    let openConnections = 0
    server.on("connection", (socket: Socket) => {
      // A connection that has not sent a request within the header timeout is closed (node:http closes a
      // socket on timeout). node:http's own header check was seen to leave 300 silent connections open
      // for good when 200 slow ones arrived first, so the cap stayed full; this does not depend on it.
      socket.setTimeout(headersTimeout)
      options.onConnections?.(++openConnections)
      socket.once("close", () => options.onConnections?.(--openConnections))
    })
    yield* Effect.acquireRelease(
      Effect.async<void, ListenFailed>((resume) => {
        const onError = (error: Error & { readonly code?: string }) =>
          resume(
            Effect.fail(
              new ListenFailed({
                host: options.host,
                port: options.port,
                code: error.code,
                detail: error.message,
                cause: error
              })
            )
          )
        server.once("error", onError)
        server.listen(options.port, options.host, () => {
          server.off("error", onError)
          resume(Effect.void)
        })
      }),
      () =>
        Effect.gen(function* () {
          let closed = false
          let onClosed: (() => void) | undefined
          server.close(() => {
            closed = true
            onClosed?.()
          })
          server.closeIdleConnections()
          yield* Effect.async<void>((resume) => {
            if (running.size === 0 && waiting === 0) return resume(Effect.void)
            drained = () => resume(Effect.void)
          }).pipe(Effect.timeout(options.drainMillis ?? 5000), Effect.ignore)
          yield* Effect.forEach([...running], Fiber.interrupt, { discard: true })
          server.closeAllConnections()
          yield* Effect.async<void>((resume) => {
            if (closed) return resume(Effect.void)
            onClosed = () => resume(Effect.void)
          })
        })
    )
  })
