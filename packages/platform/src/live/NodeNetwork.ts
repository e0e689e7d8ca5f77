/**
 * NodeNetwork: the live `Network` over TCP (node:net), with length-prefixed frames (network/frames.ts).
 *
 * Every connection starts with a mutual proof of the cluster secret, so a node serves gossip, elections
 * and replication only to members of its cluster:
 *   client → HELLO(kind, its address, nonce c)
 *   server → CHALLENGE(nonce s, HMAC(secret, "server" · c · s))        the client checks it
 *   client → PROOF(HMAC(secret, "client" · s · c · its address))        the server checks it
 *   server → WELCOME, or REFUSED(reason) and the connection closes.
 * Neither side learns anything it could replay: each proof covers a nonce the other side just chose. The
 * traffic itself is not encrypted; the internal address belongs on a private network (docs/decisions.md).
 *
 * Requests to one peer share one connection (opened on first use, reopened after it drops), multiplexed
 * by request id; a channel is a connection of its own, so a slow replication stream never delays gossip.
 * Handlers run as fibers of the runtime that called `serve`.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as net from "node:net"
import { Effect, Layer, Runtime, type Scope } from "effect"
import {
  Network,
  NetworkClosed,
  NetworkUnreachable,
  timedOut,
  type NetworkTimedOut,
  type Channel,
  type NetworkHandlers,
  type NetworkService,
  type PeerAddress
} from "../Network.js"
import {
  ConnectionKind,
  FrameError,
  FrameReader,
  FrameType,
  decodeHello,
  decodeNumbered,
  encodeFrame,
  encodeHello,
  u32,
  type Frame
} from "../network/frames.js"

export interface NodeNetworkOptions {
  /** The address peers reach this node at, "host:port". */
  readonly self: PeerAddress
  /** Where to listen; default the host and port of `self`. */
  readonly listen?: { readonly host: string; readonly port: number }
  /** The secret every member of the cluster shares. */
  readonly clusterSecret: string
  /** How long a connection may take to prove itself (default 5 s). */
  readonly handshakeTimeoutMillis?: number
}

const NonceBytes = 16

const hostPort = (address: PeerAddress): { host: string; port: number } | undefined => {
  const at = address.lastIndexOf(":")
  const port = Number(address.slice(at + 1))
  if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) return undefined
  return { host: address.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port }
}

const proof = (secret: string, role: string, ...parts: ReadonlyArray<Uint8Array | string>): Buffer => {
  const hmac = createHmac("sha256", secret).update(role)
  for (const p of parts) hmac.update(p)
  return hmac.digest()
}

const sameProof = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && timingSafeEqual(a, b)

/** A socket that proved itself, with the frames that arrived with its last handshake chunk. */
interface Link {
  readonly socket: net.Socket
  readonly reader: FrameReader
  readonly early: Array<Frame>
}

/** Feeds a socket's frames to `onFrame` until it closes; a malformed frame destroys it. */
const readFrames = (link: Link, onFrame: (frame: Frame) => void, onClose: (why: string) => void): void => {
  let closed = false
  const close = (why: string) => {
    if (closed) return
    closed = true
    onClose(why)
  }
  link.socket.on("data", (chunk: Buffer) => {
    let frames: Array<Frame>
    try {
      frames = link.reader.push(chunk)
    } catch (e) {
      link.socket.destroy()
      return close(e instanceof FrameError ? `the peer sent ${e.message}` : String(e))
    }
    for (const frame of frames) onFrame(frame)
  })
  link.socket.on("close", () => close("the connection closed"))
  link.socket.on("error", (e) => close(e.message))
  for (const frame of link.early.splice(0)) onFrame(frame)
}

/**
 * Runs the handshake on a fresh socket, calling `step` with each frame until it returns a result; fails
 * on close, timeout or a malformed frame.
 */
const handshake = (
  socket: net.Socket,
  timeoutMillis: number,
  step: (frame: Frame) => "more" | { ok: true } | { ok: false; why: string },
  done: (result: { ok: true; link: Link } | { ok: false; why: string }) => void
): void => {
  const reader = new FrameReader()
  let finished = false
  const finish = (result: { ok: true; link: Link } | { ok: false; why: string }) => {
    if (finished) return
    finished = true
    clearTimeout(timer)
    socket.removeListener("data", onData)
    socket.removeListener("close", onClose)
    socket.removeListener("error", onError)
    if (!result.ok) socket.destroy()
    done(result)
  }
  const timer = setTimeout(() => finish({ ok: false, why: `no handshake within ${timeoutMillis} ms` }), timeoutMillis)
  const onData = (chunk: Buffer) => {
    let frames: Array<Frame>
    try {
      frames = reader.push(chunk)
    } catch (e) {
      return finish({ ok: false, why: e instanceof Error ? e.message : String(e) })
    }
    while (frames.length > 0) {
      const outcome = step(frames.shift()!)
      if (outcome === "more") continue
      if (!outcome.ok) return finish(outcome)
      return finish({ ok: true, link: { socket, reader, early: frames } })
    }
  }
  const onClose = () => finish({ ok: false, why: "the connection closed during the handshake" })
  const onError = (e: Error) => finish({ ok: false, why: e.message })
  socket.on("data", onData)
  socket.on("close", onClose)
  socket.on("error", onError)
}

/** Connects to `peer` and proves membership both ways. */
const dial = (
  options: NodeNetworkOptions,
  peer: PeerAddress,
  kind: ConnectionKind,
  done: (result: { ok: true; link: Link } | { ok: false; why: string }) => void
): (() => void) => {
  const target = hostPort(peer)
  if (target === undefined) {
    done({ ok: false, why: `"${peer}" is not a host:port address` })
    return () => {}
  }
  const socket = net.connect({ host: target.host, port: target.port })
  socket.setNoDelay(true)
  const clientNonce = randomBytes(NonceBytes)
  socket.once("connect", () => socket.write(encodeHello(kind, options.self, clientNonce)))
  let serverNonce: Uint8Array | undefined
  handshake(
    socket,
    options.handshakeTimeoutMillis ?? 5000,
    (frame) => {
      if (frame.type === FrameType.Refused) return { ok: false, why: Buffer.from(frame.body).toString("utf8") }
      if (serverNonce === undefined) {
        if (frame.type !== FrameType.Challenge || frame.body.length !== NonceBytes + 32)
          return { ok: false, why: "the peer did not answer with a challenge" }
        serverNonce = frame.body.subarray(0, NonceBytes)
        const expected = proof(options.clusterSecret, "server", clientNonce, serverNonce)
        if (!sameProof(frame.body.subarray(NonceBytes), expected))
          return { ok: false, why: `${peer} does not know this cluster's secret` }
        socket.write(
          encodeFrame(FrameType.Proof, proof(options.clusterSecret, "client", serverNonce, clientNonce, options.self))
        )
        return "more"
      }
      return frame.type === FrameType.Welcome ? { ok: true } : { ok: false, why: "the peer did not welcome us" }
    },
    done
  )
  return () => socket.destroy()
}

/** One connection carrying requests to a peer, multiplexed by id. */
class RequestsConnection {
  private readonly waiting = new Map<number, (reply: Uint8Array | NetworkUnreachable) => void>()
  private nextId = 1
  closed = false

  constructor(
    private readonly link: Link,
    private readonly peer: PeerAddress,
    onClosed: () => void
  ) {
    readFrames(
      link,
      (frame) => {
        if (frame.type !== FrameType.Reply) return
        const reply = decodeNumbered(frame.body)
        if (reply === undefined) return
        const waiter = this.waiting.get(reply.id)
        this.waiting.delete(reply.id)
        waiter?.(Uint8Array.from(reply.message))
      },
      (why) => {
        this.closed = true
        onClosed()
        const lost = new NetworkUnreachable({ peer: this.peer, message: `lost the connection to ${this.peer}: ${why}` })
        for (const waiter of this.waiting.values()) waiter(lost)
        this.waiting.clear()
      }
    )
  }

  send(message: Uint8Array, onReply: (reply: Uint8Array | NetworkUnreachable) => void): number {
    const id = this.nextId
    this.nextId = this.nextId === 0xffffffff ? 1 : this.nextId + 1
    this.waiting.set(id, onReply)
    this.link.socket.write(encodeFrame(FrameType.Request, u32(id), message))
    return id
  }

  forget(id: number): void {
    this.waiting.delete(id)
  }

  destroy(): void {
    this.link.socket.destroy()
  }
}

/** A channel over its own connection. */
class SocketChannel implements Channel {
  private readonly inbox: Array<Uint8Array> = []
  private waiter: ((result: Effect.Effect<Uint8Array, NetworkClosed>) => void) | undefined
  private ended: NetworkClosed | undefined

  constructor(
    private readonly link: Link,
    readonly peer: PeerAddress
  ) {
    readFrames(
      link,
      (frame) => {
        if (frame.type !== FrameType.Message) return
        const message = Uint8Array.from(frame.body)
        const waiter = this.waiter
        this.waiter = undefined
        if (waiter !== undefined) waiter(Effect.succeed(message))
        else this.inbox.push(message)
      },
      (why) => {
        this.ended ??= new NetworkClosed({ peer, message: `the channel to ${peer} ended: ${why}` })
        const waiter = this.waiter
        this.waiter = undefined
        waiter?.(Effect.fail(this.ended))
      }
    )
  }

  readonly send = (message: Uint8Array): Effect.Effect<void, NetworkClosed> =>
    Effect.async<void, NetworkClosed>((resume) => {
      if (this.ended !== undefined) return resume(Effect.fail(this.ended))
      if (this.link.socket.write(encodeFrame(FrameType.Message, message))) return resume(Effect.void)
      this.link.socket.once("drain", () => resume(Effect.void))
    })

  readonly receive: Effect.Effect<Uint8Array, NetworkClosed> = Effect.suspend(() => {
    const next = this.inbox.shift()
    if (next !== undefined) return Effect.succeed(next)
    if (this.ended !== undefined) return Effect.fail(this.ended)
    return Effect.async<Uint8Array, NetworkClosed>((resume) => {
      this.waiter = resume
      return Effect.sync(() => {
        if (this.waiter === resume) this.waiter = undefined
      })
    })
  })

  readonly close: Effect.Effect<void> = Effect.sync(() => {
    this.ended ??= new NetworkClosed({ peer: this.peer, message: "the channel was closed" })
    this.link.socket.end()
  })
}

/** The live network of one node. Connections it opened are destroyed when the scope closes. */
export const make = (options: NodeNetworkOptions): Effect.Effect<NetworkService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const pool = new Map<PeerAddress, RequestsConnection>()
    const connecting = new Map<PeerAddress, Array<(c: RequestsConnection | NetworkUnreachable) => void>>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const c of pool.values()) c.destroy()
        pool.clear()
      })
    )

    /** The pooled connection to `peer`, opening it if needed (one dial however many ask at once). */
    const connection = (peer: PeerAddress, then: (c: RequestsConnection | NetworkUnreachable) => void): void => {
      const open = pool.get(peer)
      if (open !== undefined && !open.closed) return then(open)
      const queue = connecting.get(peer)
      if (queue !== undefined) return void queue.push(then)
      connecting.set(peer, [then])
      dial(options, peer, ConnectionKind.Requests, (result) => {
        const waiters = connecting.get(peer) ?? []
        connecting.delete(peer)
        if (!result.ok) {
          const error = new NetworkUnreachable({ peer, message: `cannot reach ${peer}: ${result.why}` })
          return waiters.forEach((w) => w(error))
        }
        const c: RequestsConnection = new RequestsConnection(result.link, peer, () => {
          if (pool.get(peer) === c) pool.delete(peer)
        })
        pool.set(peer, c)
        waiters.forEach((w) => w(c))
      })
    }

    const request = (
      peer: PeerAddress,
      message: Uint8Array,
      timeoutMillis: number
    ): Effect.Effect<Uint8Array, NetworkUnreachable | NetworkTimedOut> =>
      Effect.async<Uint8Array, NetworkUnreachable | NetworkTimedOut>((resume) => {
        let sent: { c: RequestsConnection; id: number } | undefined
        connection(peer, (c) => {
          if (c instanceof NetworkUnreachable) return resume(Effect.fail(c))
          const id = c.send(message, (reply) =>
            resume(reply instanceof NetworkUnreachable ? Effect.fail(reply) : Effect.succeed(reply))
          )
          sent = { c, id }
        })
        return Effect.sync(() => sent?.c.forget(sent.id))
      }).pipe(
        Effect.timeoutFail({
          duration: timeoutMillis,
          onTimeout: () => timedOut(peer, timeoutMillis, `no reply from ${peer}`)
        })
      )

    const open = (
      peer: PeerAddress,
      timeoutMillis: number
    ): Effect.Effect<Channel, NetworkUnreachable | NetworkTimedOut, Scope.Scope> =>
      Effect.acquireRelease(
        Effect.async<Channel, NetworkUnreachable>((resume) => {
          const cancel = dial(options, peer, ConnectionKind.Channel, (result) =>
            resume(
              result.ok
                ? Effect.succeed(new SocketChannel(result.link, peer))
                : Effect.fail(
                    new NetworkUnreachable({ peer, message: `cannot open a channel to ${peer}: ${result.why}` })
                  )
            )
          )
          return Effect.sync(cancel)
        }).pipe(
          Effect.timeoutFail({
            duration: timeoutMillis,
            onTimeout: () => timedOut(peer, timeoutMillis, `${peer} did not accept a channel`)
          })
        ),
        (channel) => channel.close
      )

    const serve = (handlers: NetworkHandlers): Effect.Effect<void, NetworkUnreachable, Scope.Scope> =>
      Effect.gen(function* () {
        const runtime = yield* Effect.runtime<never>()
        const run = Runtime.runFork(runtime)
        const where = options.listen ?? hostPort(options.self)
        if (where === undefined)
          return yield* new NetworkUnreachable({
            peer: options.self,
            message: `"${options.self}" is not a host:port address`
          })
        const sockets = new Set<net.Socket>()
        const accept = (socket: net.Socket) => {
          socket.setNoDelay(true)
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
          const serverNonce = randomBytes(NonceBytes)
          let hello: { kind: ConnectionKind; address: string; nonce: Uint8Array } | undefined
          const refuse = (why: string) => {
            socket.end(encodeFrame(FrameType.Refused, Buffer.from(why, "utf8")))
            return { ok: false as const, why }
          }
          handshake(
            socket,
            options.handshakeTimeoutMillis ?? 5000,
            (frame) => {
              if (hello === undefined) {
                hello = frame.type === FrameType.Hello ? decodeHello(frame.body) : undefined
                if (hello === undefined) return refuse("the connection did not start with a hello")
                socket.write(
                  encodeFrame(
                    FrameType.Challenge,
                    serverNonce,
                    proof(options.clusterSecret, "server", hello.nonce, serverNonce)
                  )
                )
                return "more"
              }
              const expected = proof(options.clusterSecret, "client", serverNonce, hello.nonce, hello.address)
              if (frame.type !== FrameType.Proof || !sameProof(frame.body, expected))
                return refuse("not a member of this cluster: the proof of the cluster secret did not match")
              socket.write(encodeFrame(FrameType.Welcome))
              return { ok: true }
            },
            (result) => {
              if (!result.ok || hello === undefined) return
              const from = hello.address
              if (hello.kind === ConnectionKind.Channel) {
                const channel = new SocketChannel(result.link, from)
                run(
                  Effect.ensuring(handlers.onChannel(channel), channel.close).pipe(
                    Effect.catchAllCause(() => Effect.void)
                  )
                )
                return
              }
              readFrames(
                result.link,
                (frame) => {
                  const request = frame.type === FrameType.Request ? decodeNumbered(frame.body) : undefined
                  if (request === undefined) return
                  const message = Uint8Array.from(request.message)
                  run(
                    handlers.onRequest(from, message).pipe(
                      Effect.flatMap((reply) =>
                        Effect.sync(() => socket.write(encodeFrame(FrameType.Reply, u32(request.id), reply)))
                      ),
                      Effect.catchAllCause(() => Effect.void) // no reply: the sender times out
                    )
                  )
                },
                () => {}
              )
            }
          )
        }
        const server = net.createServer(accept)
        yield* Effect.acquireRelease(
          Effect.async<net.Server, NetworkUnreachable>((resume) => {
            server.once("error", (e) =>
              resume(
                Effect.fail(
                  new NetworkUnreachable({
                    peer: options.self,
                    message: `cannot listen on ${where.host}:${where.port}: ${e.message}`,
                    cause: e
                  })
                )
              )
            )
            server.listen(where.port, where.host, () => resume(Effect.succeed(server)))
          }),
          (s) =>
            Effect.async<void>((resume) => {
              for (const socket of sockets) socket.destroy()
              s.close(() => resume(Effect.void))
            })
        )
      })

    const service: NetworkService = { self: options.self, request, open, serve }
    return service
  })

export const layer = (options: NodeNetworkOptions): Layer.Layer<Network> => Layer.scoped(Network, make(options))
