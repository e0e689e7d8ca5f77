/**
 * The live adapter: serves a request processor over node:http. Each request's body is read (up to the
 * limit: a bigger body is answered 413 without reading the rest), the processor runs on the runtime the
 * server was started in, and the Reply is written with its reason phrase in `res.statusMessage` (the
 * reference carries error text there; @effect/platform-node has no place for it). A client that goes away
 * interrupts its request's fiber (long polls end with it).
 *
 * Closing the scope is a graceful stop: the server stops accepting connections, requests already running
 * (an append waiting for its batch to be durable) are given `drainMillis` to finish and be answered, then
 * whatever is left (long polls) is interrupted and every connection closed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Effect, Fiber, Runtime, type Scope } from "effect"
import type { HttpRequest } from "../HttpRequest.js"
import type { Reply } from "../Reply.js"
import { defaultHttpSettings } from "../HttpConfig.js"
import { ListenFailed } from "../ListenFailed.js"

export interface ServeOptions<R> {
  readonly host: string
  readonly port: number
  readonly handle: (request: HttpRequest) => Effect.Effect<Reply, never, R>
  /** Bodies larger than this are refused with 413 while reading (default: the pipeline's default limit). */
  readonly maxRequestBodyBytes?: number
  /** How long a stop waits for running requests before interrupting them (default 5 s). */
  readonly drainMillis?: number
  /** Told the number of open connections each time one opens or closes (the node's metrics). */
  readonly onConnections?: (open: number) => void
}

const writeReply = (res: ServerResponse, reply: Reply): void => {
  try {
    res.statusCode = reply.status
    res.statusMessage = reply.reason ?? ""
    for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value as string | Array<string>)
    res.end(reply.body === undefined ? undefined : typeof reply.body === "string" ? Buffer.from(reply.body, "utf8") : reply.body)
  } catch {
    // A header value Node refuses (control characters): answer plainly rather than leave the client hanging.
    if (!res.headersSent) {
      res.removeHeader("Content-Length")
      res.writeHead(500, "Internal Server Error", { "Content-Length": "0" })
    }
    res.end()
  }
}

const tooLarge = (res: ServerResponse, limit: number) => {
  res.writeHead(413, `Request body too large. Limit is ${limit} bytes.`, { "Content-Length": "0", Connection: "close" })
  res.end()
}

/**
 * Starts an HTTP server for the scope's lifetime; requests run on the runtime of the calling fiber. Fails
 * with ListenFailed when the address cannot be bound.
 */
export const serveHttp = <R>(options: ServeOptions<R>): Effect.Effect<void, ListenFailed, Scope.Scope | R> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<R>()
    const limit = options.maxRequestBodyBytes ?? defaultHttpSettings.maxRequestBodyBytes
    const running = new Set<Fiber.RuntimeFiber<Reply, never>>()
    let drained: (() => void) | undefined

    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Array<Buffer> = []
      let size = 0
      let refused = false
      req.on("data", (chunk: Buffer) => {
        if (refused) return
        size += chunk.length
        if (size > limit) {
          refused = true
          chunks.length = 0
          tooLarge(res, limit)
          req.resume()
          return
        }
        chunks.push(chunk)
      })
      req.on("error", () => res.destroy())
      req.on("end", () => {
        if (refused) return
        const request: HttpRequest = {
          method: req.method ?? "GET",
          url: req.url ?? "/",
          headers: req.headers,
          body: size === 0 && req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined ? undefined : Buffer.concat(chunks),
          ...(req.socket.remoteAddress !== undefined ? { remote: req.socket.remoteAddress } : {})
        }
        const fiber = Runtime.runFork(runtime)(options.handle(request))
        running.add(fiber)
        res.on("close", () => {
          if (!res.writableFinished) Effect.runFork(Fiber.interrupt(fiber))
        })
        fiber.addObserver((exit) => {
          running.delete(fiber)
          if (running.size === 0) drained?.()
          if (exit._tag === "Success") writeReply(res, exit.value)
          else if (!res.writableEnded && !res.destroyed) writeReply(res, { status: 500, reason: "Internal Server Error", headers: { "Content-Length": "0" } })
        })
      })
    }

    const server = createServer(onRequest)
    let openConnections = 0
    server.on("connection", (socket) => {
      options.onConnections?.(++openConnections)
      socket.once("close", () => options.onConnections?.(--openConnections))
    })
    yield* Effect.acquireRelease(
      Effect.async<void, ListenFailed>((resume) => {
        const onError = (error: Error & { readonly code?: string }) =>
          resume(Effect.fail(new ListenFailed({ host: options.host, port: options.port, code: error.code, detail: error.message })))
        server.once("error", onError)
        server.listen(options.port, options.host, () => {
          server.off("error", onError)
          resume(Effect.void)
        })
      }),
      () => Effect.gen(function*() {
        let closed = false
        let onClosed: (() => void) | undefined
        server.close(() => {
          closed = true
          onClosed?.()
        })
        server.closeIdleConnections()
        yield* Effect.async<void>((resume) => {
          if (running.size === 0) return resume(Effect.void)
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
