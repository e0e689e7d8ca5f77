/**
 * The simulated network: one per world, every node's `Network` service a view of it (`service(address)`).
 * Delivery runs on the world's clock (`SimClock.schedule`), and every choice — each link's latency, each
 * message's jitter, loss, duplication and channel breaks — is drawn from one seeded `Prng`, so a run
 * replays exactly from its seed.
 *
 * What it models, and how (see Network.ts for the two shapes of traffic):
 * - latency: each directed link draws a base one-way latency once (`latencyMs`), and each message adds a
 *   jitter (`jitterMs`), so requests on one link can overtake each other (reordering);
 * - requests: a request or its reply may be lost (the sender times out) or the request duplicated (the
 *   handler runs twice; the later reply is dropped, as a client drops a reply it no longer waits for);
 * - channels: messages arrive in order, each no earlier than the one before; a channel may break at a
 *   message (`breakChance`), and then both ends fail with `NetworkClosed` — the receiving end after it
 *   has read what arrived before the break;
 * - partitions, one-way or both ways, and isolating a node (every link to and from it cut): requests
 *   across a cut are lost; channel messages across a cut are held, as TCP retransmits, and flow once the
 *   cut heals, unless the cut lasts `channelGiveUpMs`, when the channel breaks, as TCP gives up;
 * - nodes: a node serves with `serve` on its own fibers; a request to an address nobody serves is refused
 *   (`NetworkUnreachable`, after one trip); a crashed node (its scheduler crashed) is an unreachable host:
 *   requests to it time out and channels to it break after `channelGiveUpMs`.
 *
 * Handlers run on the receiving node's scheduler, clock and `Random` (the runtime captured by `serve`),
 * never inside the clock callback that delivers the message.
 */
import { Effect, Exit, FiberRef, Runtime, type Scope } from "effect"
import {
  NetworkClosed,
  NetworkUnreachable,
  timedOut,
  type NetworkTimedOut,
  type Channel,
  type NetworkHandlers,
  type NetworkService,
  type PeerAddress
} from "../Network.js"
import type { Prng } from "../Prng.js"
import type { SimClock } from "./SimClock.js"
import { SimScheduler } from "./SimScheduler.js"

export interface SimNetworkFaults {
  /** Chance that a request, or its reply, is lost. */
  readonly lossChance: number
  /** Chance that a request is delivered twice. */
  readonly duplicateChance: number
  /** Chance that a channel breaks at a message instead of delivering it. */
  readonly breakChance: number
}

export const NoNetworkFaults: SimNetworkFaults = { lossChance: 0, duplicateChance: 0, breakChance: 0 }

export interface SimNetworkOptions {
  readonly clock: SimClock
  readonly prng: Prng
  /** The range each directed link's base one-way latency is drawn from, in ms (default 1..5). */
  readonly latencyMs?: { readonly min: number; readonly max: number }
  /** Each message's extra delay is drawn from 0..jitterMs (default 3). */
  readonly jitterMs?: number
  readonly faults?: SimNetworkFaults
  /** How long a channel waits across a cut or for a dead host before it breaks (default 10 s). */
  readonly channelGiveUpMs?: number
  /** Called with a line for every fault injected (lost, duplicated, broken, held), for the run's trace. */
  readonly trace?: (line: string) => void
}

/** Counts of what the network did, for tests and reports. */
export interface SimNetworkStats {
  requests: number
  requestsLost: number
  requestsDuplicated: number
  requestsRefused: number
  channelsOpened: number
  channelMessages: number
  channelsBroken: number
}

interface Server {
  readonly runtime: Runtime.Runtime<never>
  readonly scheduler: SimScheduler | undefined
  readonly handlers: NetworkHandlers
}

/** Whether the fiber's node has crashed (a scheduler that is not a `SimScheduler` never does). */
const isDown = (scheduler: SimScheduler | undefined): boolean => scheduler !== undefined && scheduler.isCrashed

const currentSimScheduler = Effect.map(FiberRef.get(FiberRef.currentScheduler), (s) =>
  s instanceof SimScheduler ? s : undefined
)

export class SimNetwork {
  readonly stats: SimNetworkStats = {
    requests: 0,
    requestsLost: 0,
    requestsDuplicated: 0,
    requestsRefused: 0,
    channelsOpened: 0,
    channelMessages: 0,
    channelsBroken: 0
  }
  faults: SimNetworkFaults
  readonly clock: SimClock
  private readonly prng: Prng
  private readonly latency: { readonly min: number; readonly max: number }
  private readonly jitterMs: number
  readonly channelGiveUpMs: number
  private readonly trace: (line: string) => void
  private readonly servers = new Map<PeerAddress, Server>()
  private readonly linkLatency = new Map<string, number>()
  /** Directed cuts, "from->to". */
  private readonly cuts = new Set<string>()
  private readonly isolated = new Set<PeerAddress>()
  /** Channel ends holding messages across a cut or for a dead host, to retry when the network changes. */
  private readonly holding = new Set<SimChannelEnd>()

  constructor(options: SimNetworkOptions) {
    this.clock = options.clock
    this.prng = options.prng
    this.latency = options.latencyMs ?? { min: 1, max: 5 }
    this.jitterMs = options.jitterMs ?? 3
    this.faults = options.faults ?? NoNetworkFaults
    this.channelGiveUpMs = options.channelGiveUpMs ?? 10_000
    this.trace = options.trace ?? (() => {})
  }

  /** The `Network` service of the node whose internal address is `address`. */
  service(address: PeerAddress): NetworkService {
    return {
      self: address,
      request: (peer, message, timeoutMillis) => this.request(address, peer, message, timeoutMillis),
      open: (peer, timeoutMillis) => this.open(address, peer, timeoutMillis),
      serve: (handlers) => this.serve(address, handlers)
    }
  }

  // ---- faults ----

  /** Cuts the link from `a` to `b`, and from `b` to `a` unless `oneWay`. */
  partition(a: PeerAddress, b: PeerAddress, oneWay = false): void {
    this.cuts.add(`${a}->${b}`)
    if (!oneWay) this.cuts.add(`${b}->${a}`)
    this.trace(`network partition ${a} ${oneWay ? "->" : "<->"} ${b}`)
  }

  /** Cuts every link to and from the node. */
  isolate(address: PeerAddress): void {
    this.isolated.add(address)
    this.trace(`network isolate ${address}`)
  }

  /** Removes every cut and isolation; held channel messages flow again. */
  heal(): void {
    this.cuts.clear()
    this.isolated.clear()
    this.trace("network heal")
    for (const end of [...this.holding]) end.flushHeld()
  }

  /** Whether a message from `from` can reach `to` now. */
  connected(from: PeerAddress, to: PeerAddress): boolean {
    return !this.isolated.has(from) && !this.isolated.has(to) && !this.cuts.has(`${from}->${to}`)
  }

  // ---- internals shared with the channel ends ----

  /** One-way delay of a message from `from` to `to`: the link's base latency plus a jitter. */
  delay(from: PeerAddress, to: PeerAddress): number {
    const key = `${from}->${to}`
    let base = this.linkLatency.get(key)
    if (base === undefined) {
      base = this.prng.fork(`link:${key}`).int(this.latency.min, this.latency.max)
      this.linkLatency.set(key, base)
    }
    return base + (this.jitterMs > 0 ? this.prng.int(0, this.jitterMs) : 0)
  }

  chance(p: number): boolean {
    return p > 0 && this.prng.chance(p)
  }

  note(line: string): void {
    this.trace(line)
  }

  hold(end: SimChannelEnd): void {
    this.holding.add(end)
  }

  release(end: SimChannelEnd): void {
    this.holding.delete(end)
  }

  liveServer(address: PeerAddress): Server | "refused" | "down" {
    const server = this.servers.get(address)
    if (server === undefined) return "refused"
    return isDown(server.scheduler) ? "down" : server
  }

  // ---- the service ----

  private serve(self: PeerAddress, handlers: NetworkHandlers): Effect.Effect<void, NetworkUnreachable, Scope.Scope> {
    return Effect.gen(this, function* () {
      const existing = this.servers.get(self)
      if (existing !== undefined && !isDown(existing.scheduler)) {
        return yield* new NetworkUnreachable({ peer: self, message: `the address ${self} is already being served` })
      }
      const server: Server = {
        runtime: yield* Effect.runtime<never>(),
        scheduler: yield* currentSimScheduler,
        handlers
      }
      this.servers.set(self, server)
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (this.servers.get(self) === server) this.servers.delete(self)
        })
      )
    })
  }

  /** Sends `deliver` from `from` to `to` after a delay, unless the message is lost or the link cut. */
  private transmit(from: PeerAddress, to: PeerAddress, what: string, deliver: () => void): void {
    if (!this.connected(from, to)) return
    if (this.chance(this.faults.lossChance)) {
      this.stats.requestsLost++
      this.trace(`network lost ${what} ${from}->${to}`)
      return
    }
    this.clock.schedule(this.delay(from, to), deliver)
  }

  private request(
    from: PeerAddress,
    to: PeerAddress,
    message: Uint8Array,
    timeoutMillis: number
  ): Effect.Effect<Uint8Array, NetworkUnreachable | NetworkTimedOut> {
    const timeout = () => timedOut(to, timeoutMillis, `no reply from ${to}`)
    return this.awaitWithin<Uint8Array>(timeoutMillis, timeout, (finish) => {
      this.stats.requests++
      const arrive = () => {
        const server = this.liveServer(to)
        if (server === "down") return // an unreachable host: the sender times out
        if (server === "refused") {
          this.stats.requestsRefused++
          return this.transmit(to, from, "refusal", () =>
            finish(Effect.fail(new NetworkUnreachable({ peer: to, message: `nothing serves ${to}` })))
          )
        }
        const answer = server.handlers.onRequest(from, message).pipe(
          Effect.flatMap((reply) =>
            Effect.sync(() => this.transmit(to, from, "reply", () => finish(Effect.succeed(reply))))
          ),
          Effect.catchAllCause(() => Effect.void) // a failed handler sends no reply: the sender times out
        )
        Runtime.runFork(server.runtime)(answer, { immediate: false })
      }
      this.transmit(from, to, "request", arrive)
      if (this.chance(this.faults.duplicateChance)) {
        this.stats.requestsDuplicated++
        this.trace(`network duplicated request ${from}->${to}`)
        this.transmit(from, to, "request", arrive)
      }
    })
  }

  /**
   * Waits for `register`'s `finish` to be called, or fails with `timeout()` after `afterMillis` on the world's
   * clock; `finish` answers false once the wait is over (timed out, finished or interrupted). The error is
   * made only if the wait times out: a tagged error costs a schema check and a stack trace, and nearly
   * every wait ends otherwise.
   */
  private awaitWithin<A>(
    afterMillis: number,
    timeout: () => NetworkTimedOut,
    register: (finish: (result: Effect.Effect<A, NetworkUnreachable | NetworkTimedOut>) => boolean) => void
  ): Effect.Effect<A, NetworkUnreachable | NetworkTimedOut> {
    return Effect.async<A, NetworkUnreachable | NetworkTimedOut>((resume) => {
      let done = false
      const finish = (result: Effect.Effect<A, NetworkUnreachable | NetworkTimedOut>) => {
        if (done) return false
        done = true
        this.clock.cancelTimer(timer)
        resume(result)
        return true
      }
      const timer = this.clock.schedule(afterMillis, () => finish(Effect.fail(timeout())))
      register(finish)
      return Effect.sync(() => {
        done = true
        this.clock.cancelTimer(timer)
      })
    })
  }

  private open(
    from: PeerAddress,
    to: PeerAddress,
    timeoutMillis: number
  ): Effect.Effect<Channel, NetworkUnreachable | NetworkTimedOut, Scope.Scope> {
    const timeout = () => timedOut(to, timeoutMillis, `${to} did not accept a channel`)
    const connect = Effect.flatMap(currentSimScheduler, (scheduler) =>
      this.awaitWithin<SimChannelEnd>(timeoutMillis, timeout, (finish) => {
        // Connection set-up is one round trip across the links as they are; it is not lost or duplicated
        // (TCP retransmits its handshake), but it cannot cross a cut.
        if (!this.connected(from, to)) return
        this.clock.schedule(this.delay(from, to), () => {
          const server = this.liveServer(to)
          if (server === "down" || !this.connected(to, from)) return
          if (server === "refused") {
            return this.clock.schedule(this.delay(to, from), () =>
              finish(Effect.fail(new NetworkUnreachable({ peer: to, message: `nothing serves ${to}` })))
            )
          }
          const client = new SimChannelEnd(this, from, to, scheduler)
          const accepted = new SimChannelEnd(this, to, from, server.scheduler)
          client.other = accepted
          accepted.other = client
          this.clock.schedule(this.delay(to, from), () => {
            if (!finish(Effect.succeed(client))) return accepted.breakBoth("the opener gave up waiting")
            this.stats.channelsOpened++
            const serving = Effect.ensuring(server.handlers.onChannel(accepted), accepted.close).pipe(
              Effect.catchAllCause(() => Effect.void)
            )
            Runtime.runFork(server.runtime)(serving, { immediate: false })
          })
        })
      })
    )
    return Effect.acquireRelease(connect, (end) => end.close)
  }
}

/** A message in flight on a channel, or the end of the stream (a close from the other side). */
type Frame = { readonly message: Uint8Array } | { readonly closed: true }

/** One end of a simulated channel: what it sends goes, in order, to `other`'s inbox. */
export class SimChannelEnd implements Channel {
  other!: SimChannelEnd
  private readonly inbox: Array<Uint8Array> = []
  private waiter: ((result: Effect.Effect<Uint8Array, NetworkClosed>) => void) | undefined
  private closedLocally = false
  private remoteClosed = false
  private broken: NetworkClosed | undefined
  /** The earliest time the next frame may arrive at the other end: frames never overtake each other. */
  private nextArrival = 0
  /** Frames waiting for a cut to heal or a dead host to come back, oldest first. */
  private held: Array<Frame> = []
  private giveUp: ReturnType<SimClock["schedule"]> | undefined

  constructor(
    private readonly network: SimNetwork,
    readonly self: PeerAddress,
    readonly peer: PeerAddress,
    private readonly scheduler: SimScheduler | undefined
  ) {}

  readonly send = (message: Uint8Array): Effect.Effect<void, NetworkClosed> =>
    Effect.suspend(() => {
      const refused = this.refusal()
      if (refused !== undefined) return Effect.fail(refused)
      this.network.stats.channelMessages++
      if (this.network.chance(this.network.faults.breakChance)) {
        this.breakBoth("the connection was reset")
        return Effect.void // the sender learns of the break at its next operation, as with TCP
      }
      this.push({ message })
      return Effect.void
    })

  readonly receive: Effect.Effect<Uint8Array, NetworkClosed> = Effect.suspend(() => {
    const next = this.inbox.shift()
    if (next !== undefined) return Effect.succeed(next)
    const refused = this.refusal() ?? (this.remoteClosed ? this.closedError("the peer closed the channel") : undefined)
    if (refused !== undefined) return Effect.fail(refused)
    return Effect.async<Uint8Array, NetworkClosed>((resume) => {
      this.waiter = resume
      return Effect.sync(() => {
        if (this.waiter === resume) this.waiter = undefined
      })
    })
  })

  readonly close: Effect.Effect<void> = Effect.sync(() => {
    if (this.closedLocally) return
    this.closedLocally = true
    if (this.broken === undefined) this.push({ closed: true })
    this.wake(Exit.fail(this.closedError("the channel was closed")))
  })

  /** Breaks the channel at both ends: this one now, the other after one trip. */
  breakBoth(why: string): void {
    if (this.broken !== undefined) return
    this.network.stats.channelsBroken++
    this.network.note(`network channel ${this.self}<->${this.peer} broke: ${why}`)
    this.breakHere(why)
    const other = this.other
    this.network.clock.schedule(this.network.delay(this.self, this.peer), () => other.breakHere(why))
  }

  /** Delivers what was held once the way is open again. */
  flushHeld(): void {
    if (this.broken !== undefined) return this.network.release(this)
    const held = this.held
    this.held = []
    if (this.giveUp !== undefined) this.network.clock.cancelTimer(this.giveUp)
    this.giveUp = undefined
    this.network.release(this)
    for (const frame of held) this.push(frame)
  }

  private breakHere(why: string): void {
    if (this.broken !== undefined) return
    this.broken = this.closedError(`the channel broke: ${why}`)
    this.held = []
    if (this.giveUp !== undefined) this.network.clock.cancelTimer(this.giveUp)
    this.network.release(this)
    this.wake(Exit.fail(this.broken))
  }

  private push(frame: Frame): void {
    if (this.held.length > 0 || !this.network.connected(this.self, this.peer)) return this.holdFrame(frame)
    const clock = this.network.clock
    const arrival = Math.max(this.nextArrival, clock.currentMillis + this.network.delay(this.self, this.peer))
    this.nextArrival = arrival
    clock.schedule(arrival - clock.currentMillis, () => this.other.arrive(frame, this))
  }

  private holdFrame(frame: Frame): void {
    this.held.push(frame)
    this.network.hold(this)
    if (this.giveUp === undefined) {
      this.network.note(`network holding ${this.self}->${this.peer}`)
      this.giveUp = this.network.clock.schedule(this.network.channelGiveUpMs, () =>
        this.breakBoth(`no way through to ${this.peer} for ${this.network.channelGiveUpMs} ms`)
      )
    }
  }

  /** A frame reaches this end; a dead host never takes it, so the sender holds it until it gives up. */
  private arrive(frame: Frame, from: SimChannelEnd): void {
    if (this.broken !== undefined) return
    if (isDown(this.scheduler)) return from.holdFrame(frame)
    if ("closed" in frame) {
      this.remoteClosed = true
      if (this.inbox.length === 0) this.wake(Exit.fail(this.closedError("the peer closed the channel")))
      return
    }
    if (this.closedLocally) return
    if (this.waiter !== undefined) return this.wake(Exit.succeed(frame.message))
    this.inbox.push(frame.message)
  }

  private wake(result: Exit.Exit<Uint8Array, NetworkClosed>): void {
    const waiter = this.waiter
    if (waiter === undefined) return
    this.waiter = undefined
    waiter(result)
  }

  private refusal(): NetworkClosed | undefined {
    if (this.broken !== undefined) return this.broken
    if (this.closedLocally) return this.closedError("the channel was closed")
    return undefined
  }

  private closedError(message: string): NetworkClosed {
    return new NetworkClosed({ peer: this.peer, message })
  }
}
