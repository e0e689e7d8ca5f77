/**
 * A client of the simulated cluster: it owns a few streams and, one operation at a time, appends to them
 * (fresh event ids, under every kind of expected version) or reads one back, each time from a node of its
 * choosing, following 307s to the leader (router.ts). Answers are checked as they come:
 *
 * - a write's outcome against the reference model (`StoreModel.possibleDecisions`): the leader decides the
 *   expected version over the committed history, whichever node the client reached first;
 * - an acknowledged append joins the stream's history (`AckLedger.written`) with its bound, the acknowledging
 *   leader's committed position;
 * - a read, from any node, must be a prefix of the history (plus the write in doubt), and complete up to
 *   every append whose bound the serving node's committed position had reached when it began.
 *
 * A write cut off (no answer within the hop timeout) or left on a 5xx is in doubt: the client leaves that
 * stream alone until the run settles it (`Settlement`).
 */
import { Effect } from "effect"
import type { Prng } from "@vellum/platform"
import type { ProposedEvent } from "@vellum/storage"
import { ExpectedAny, ExpectedNoStream, ExpectedStreamExists, outcomeOf, type StoreModel } from "../model.js"
import { writeMatches } from "../readChecks.js"
import { httpStore } from "../httpStore.js"
import { indentedJson, type Auditor } from "../client.js"
import type { ObservedEvent } from "../simStore.js"
import type { AckLedger } from "./ackLedger.js"
import { routed, Trip, type ClusterAccess, type InFlight, type RouterOptions } from "./router.js"

/** A write in doubt: its request may still run where the client stopped waiting. */
export interface Doubtful {
  readonly stream: string
  readonly expected: number
  readonly events: ReadonlyArray<ProposedEvent>
  readonly unfinished: InFlight | undefined
  /** `Sequencer.next` when the run first saw the request over (ended, or its node's lifetime gone). */
  overAt: number | undefined
}

/** Numbers every request a client sends and every acknowledgement, in the order they happened. */
export class Sequencer {
  private n = 0
  /** Acknowledged appends: when each was sent, and its bound. */
  readonly acks: Array<{ readonly sentAt: number; readonly bound: number }> = []
  next(): number {
    return this.n++
  }
}

const hex = (n: number, width: number) => (n >>> 0).toString(16).padStart(width, "0")

export class ClusterClient {
  readonly streams: ReadonlyArray<string>
  readonly doubts = new Map<string, Doubtful>()
  private seq = 0

  constructor(
    readonly id: number,
    private readonly prng: Prng,
    streamCount: number,
    private readonly access: ClusterAccess,
    private readonly router: RouterOptions,
    private readonly auditor: Auditor,
    private readonly ledger: AckLedger,
    private readonly sequencer: Sequencer
  ) {
    this.streams = Array.from({ length: streamCount }, (_, i) => `k${id}-s${i}`)
  }

  private uuid(): string {
    const p = this.prng
    return `${hex(p.nextU32(), 8)}-${hex(p.nextU32() & 0xffff, 4)}-4${hex(p.nextU32() & 0xfff, 3)}-${hex((p.nextU32() & 0x3fff) | 0x8000, 4)}-${hex(p.nextU32() & 0xffff, 4)}${hex(p.nextU32(), 8)}`
  }

  private newEvents(count: number): Array<ProposedEvent> {
    const seq = this.seq++
    return Array.from({ length: count }, (_, i) => ({
      eventId: this.uuid(),
      eventType: "E",
      isJson: true,
      data: Buffer.from(indentedJson({ k: this.id, s: seq, i, pad: "x".repeat(this.prng.int(0, 60)) })),
      metadata: Buffer.alloc(0)
    }))
  }

  private pickExpected(model: StoreModel, stream: string): number {
    const current = model.lastEventNumber(stream)
    const r = this.prng.next()
    if (r < 0.6) return current
    if (r < 0.75) return ExpectedAny
    if (r < 0.82) return ExpectedNoStream
    if (r < 0.88) return ExpectedStreamExists
    return Math.max(-1, current + this.prng.pick([-1, 1, 2]))
  }

  /** One operation. */
  step(): Effect.Effect<void> {
    const free = this.streams.filter((s) => !this.doubts.has(s))
    if (free.length > 0 && this.prng.chance(0.65)) return this.append(this.prng.pick(free))
    return this.read(this.prng.pick(this.streams))
  }

  private trip(): { readonly trip: Trip; readonly store: ReturnType<typeof httpStore>; readonly sentAt: number } {
    const trip = new Trip()
    const entry = this.prng.pick(this.access.nodes)
    const handler = routed(this.access, entry, trip, this.router, this.prng)
    return { trip, store: httpStore(handler), sentAt: this.sequencer.next() }
  }

  private markTrip(trip: Trip): void {
    const coverage = this.auditor.coverage
    if (trip.count(307) > 0) coverage.hit("cluster.redirectFollowed", trip.count(307))
    if (trip.count(503) > 0) coverage.hit("cluster.unavailable503", trip.count(503))
  }

  private append(stream: string): Effect.Effect<void> {
    const auditor = this.auditor
    const model = auditor.model
    const expected = this.pickExpected(model, stream)
    const events = this.newEvents(this.prng.int(1, 3))
    const { trip, store, sentAt } = this.trip()
    const what = `k${this.id} append ${stream} exp=${expected}`
    const ids = events.map((e) => e.eventId)
    return Effect.gen(this, function* () {
      // In flight, the write may show on a node before its answer reaches the client.
      this.ledger.doubt(stream, ids)
      const result = yield* Effect.either(store.append(stream, expected, events))
      this.markTrip(trip)
      if (result._tag === "Left") {
        const failure = result.left
        if (failure._tag === "Unexpected") return auditor.fail(`${what}: ${failure.description}`)
        // The node's own 408 is CommitTimeout (not on a quorum in time); the client's cut-off is a "timeout" hop.
        if (trip.last?.status === 408) auditor.coverage.hit("cluster.commitTimeout")
        auditor.indeterminate++
        auditor.coverage.hit("append.indeterminate")
        // Nothing left running (every hop answered or found its node down): over now.
        const overAt = trip.unfinished === undefined ? this.sequencer.next() : undefined
        this.doubts.set(stream, { stream, expected, events, unfinished: trip.unfinished, overAt })
        return auditor.trace(`${what} in doubt: ${failure.reason}`)
      }
      const outcome = result.right
      const possible = model.possibleDecisions(stream, expected, ids)
      const consistent = possible.filter((p) => writeMatches(outcomeOf(p.decision, events.length), outcome))
      auditor.trace(
        `${what} -> ${JSON.stringify(outcome)} via ${trip.hops.map((h) => `${h.node}:${h.status}`).join(">")}`
      )
      if (consistent.length === 0) {
        return auditor.fail(
          `${what}: got ${JSON.stringify(outcome)}, the model allows ${JSON.stringify(possible.map((p) => outcomeOf(p.decision, events.length)))}`
        )
      }
      auditor.acknowledged++
      model.learnCache(consistent)
      model.applyAppend(stream, consistent[0]!.decision, events, 0)
      const last = trip.last
      const bound = last?.committedAfter
      const problem =
        outcome._tag !== "Appended"
          ? this.ledger.settle(stream, false)
          : (this.ledger.written({ stream, first: outcome.first, eventIds: ids, bound, node: last?.node ?? "?" }) ??
            this.ledger.settle(stream, true))
      if (problem !== undefined) return auditor.fail(problem)
      if (outcome._tag === "Appended" && bound !== undefined) this.sequencer.acks.push({ sentAt, bound })
    })
  }

  private read(stream: string): Effect.Effect<void> {
    const auditor = this.auditor
    const { trip, store } = this.trip()
    return Effect.gen(this, function* () {
      const result = yield* Effect.either(store.readStream({ stream, direction: "forward", from: 0, count: 500 }))
      this.markTrip(trip)
      const last = trip.last
      if (result._tag === "Left") {
        if (result.left._tag === "Unexpected")
          return auditor.fail(`k${this.id} read ${stream}: ${result.left.description}`)
        return auditor.trace(`k${this.id} read ${stream} failed: ${result.left.reason}`)
      }
      const read = result.right
      const events: ReadonlyArray<ObservedEvent> = read._tag === "Success" ? read.events : []
      if (read._tag === "StreamDeleted")
        return auditor.fail(`k${this.id} read ${stream}: deleted, but nothing deletes it`)
      auditor.coverage.hit("read.forward")
      auditor.trace(`k${this.id} read ${stream} on ${last?.node} -> ${events.length} events`)
      const problem = this.ledger.checkServed(
        `${last?.node ?? "?"} (over HTTP)`,
        stream,
        events.map((e) => ({ eventNumber: e.eventNumber, eventId: e.eventId })),
        last?.committedBefore
      )
      if (problem !== undefined) auditor.fail(problem)
    })
  }
}
