/**
 * Retries that overlap an earlier append of the same stream, wholly or in part. Each client keeps the last
 * few appends it sent to each of its streams (answered or not) and, now and then, sends one again: all of
 * it, a prefix, a suffix or a middle slice of its events, its events followed or preceded by new ones, its
 * events in another order, or one of its ids among new ones — under Any, NoStream, StreamExists, the
 * original expected version, the stream's current version, the version just before the retried ids'
 * stored position ("aligned", which an explicit-version retry of a slice must use to be idempotent), and
 * others. The model (`decideCommit`) says exactly what each must get.
 *
 * A partial retry keeps the old events' ids but carries a payload describing the batch it is in (client,
 * batch sequence, index, count), as every client event does, so the `$all` checks can still tell one write
 * from another when it is written again; idempotency looks at ids only. An exact retry resends the very
 * same events.
 */
import type { Prng } from "@vellum/platform"
import type { ProposedEvent } from "@vellum/storage"
import type { CoverageMark } from "./coverage.js"
import {
  ExpectedAny,
  ExpectedNoStream,
  ExpectedStreamExists,
  LongMax,
  type Decision,
  type StoreModel
} from "./model.js"

interface SentAppend {
  readonly expected: number
  readonly events: ReadonlyArray<ProposedEvent>
}

export type OverlapKind =
  | "same"
  | "prefix"
  | "suffix"
  | "middle"
  | "oldThenNew"
  | "newThenOld"
  | "reordered"
  | "oneOldAmongNew"
  | "newInside"
  | "foreignId"

type VersionKind = "any" | "noStream" | "streamExists" | "original" | "current" | "aligned" | "other"

export interface Retry {
  readonly stream: string
  readonly expected: number
  readonly events: ReadonlyArray<ProposedEvent>
  /** Counts what this retry exercised, once the store's answer matched the model's decision. */
  readonly observed: (decision: Decision) => ReadonlyArray<CoverageMark>
}

/** How many appends per stream a client remembers for retries. */
const HistoryLength = 4

export class RetryPlanner {
  private readonly history = new Map<string, Array<SentAppend>>()

  /**
   * @param prng the retries' own stream of choices
   * @param fresh new events (new ids, a new batch payload), as the client makes them
   */
  constructor(
    private readonly prng: Prng,
    private readonly fresh: (count: number) => Array<ProposedEvent>
  ) {}

  /** An append was sent to `stream` (whatever its answer, or none): it may be retried later. */
  sent(stream: string, expected: number, events: ReadonlyArray<ProposedEvent>): void {
    let appends = this.history.get(stream)
    if (appends === undefined) this.history.set(stream, (appends = []))
    appends.push({ expected, events })
    if (appends.length > HistoryLength) appends.shift()
  }

  /** A retry of an earlier append to one of `streams`, or undefined when none has been sent. */
  plan(model: StoreModel, streams: ReadonlyArray<string>): Retry | undefined {
    const candidates = streams.filter((s) => (this.history.get(s)?.length ?? 0) > 0)
    if (candidates.length === 0) return undefined
    const p = this.prng
    const stream = p.pick(candidates)
    const appends = this.history.get(stream)!
    const older = appends.length > 1 && p.chance(0.4)
    const original = older ? appends[p.int(0, appends.length - 2)]! : appends[appends.length - 1]!
    const foreign = this.foreignIds(stream)
    const kind = this.pickKind(original.events.length, foreign.length > 0)
    const events = this.overlap(kind, original.events, foreign)
    const { expected, version } = this.pickExpected(model, stream, original.expected, events)
    if (kind !== "same") this.sent(stream, expected, events)
    const oldIds = new Set(original.events.map((e) => e.eventId))
    const ids = events.map((e) => e.eventId)
    // What the decision rests on, taken now: the stream is this client's alone until the answer comes.
    const firstMatched = firstIdMatches(model, stream, expected, ids)
    const storedBefore = new Set(model.eventsOf(stream).map((e) => e.eventId))
    const observed = (decision: Decision): Array<CoverageMark> => {
      const marks: Array<CoverageMark> = [`retry.${kind}`, `retry.expected.${version}`]
      if (older) marks.push("retry.older")
      if (decision._tag === "Idempotent" && kind !== "same") marks.push("retry.partial.idempotent")
      if (decision._tag === "Ok" && ids.some((id) => oldIds.has(id) && storedBefore.has(id)))
        marks.push("retry.duplicated")
      if (decision._tag === "WrongExpectedVersion" && firstMatched) {
        const family =
          expected === ExpectedAny ? "any" : expected === ExpectedStreamExists ? "streamExists" : "explicit"
        marks.push(`retry.corrupted.${family}`)
      }
      return marks
    }
    return { stream, expected, events, observed }
  }

  private pickKind(length: number, foreign: boolean): OverlapKind {
    const kinds: Array<OverlapKind> = ["same", "oldThenNew", "newThenOld", "oneOldAmongNew"]
    if (length >= 2) kinds.push("prefix", "suffix", "reordered", "newInside")
    if (length >= 3) kinds.push("middle")
    if (foreign) kinds.push("foreignId")
    return this.prng.pick(kinds)
  }

  /** Ids this client sent to its other streams (cached, if at all, for another stream). */
  private foreignIds(stream: string): Array<string> {
    const ids: Array<string> = []
    for (const [s, appends] of this.history)
      if (s !== stream) for (const a of appends) for (const e of a.events) ids.push(e.eventId)
    return ids
  }

  /** The retry's events: old ids where the kind puts them, new events elsewhere, in a batch of its own. */
  private overlap(
    kind: OverlapKind,
    old: ReadonlyArray<ProposedEvent>,
    foreign: ReadonlyArray<string>
  ): ReadonlyArray<ProposedEvent> {
    const p = this.prng
    const n = old.length
    const oldIds = old.map((e) => e.eventId)
    const withIds = (ids: ReadonlyArray<string | undefined>) =>
      this.fresh(ids.length).map((e, i) => (ids[i] === undefined ? e : { ...e, eventId: ids[i]! }))
    const news = (count: number): Array<undefined> => new Array<undefined>(count).fill(undefined)
    switch (kind) {
      case "same":
        return old
      case "prefix":
        return withIds(oldIds.slice(0, p.int(1, n - 1)))
      case "suffix":
        return withIds(oldIds.slice(p.int(1, n - 1)))
      case "middle": {
        const from = p.int(1, n - 2)
        return withIds(oldIds.slice(from, p.int(from + 1, n - 1)))
      }
      case "oldThenNew":
        return withIds([...oldIds, ...news(p.int(1, 2))])
      case "newThenOld":
        return withIds([...news(p.int(1, 2)), ...oldIds])
      case "reordered": {
        // A rotation by 1..n-1: never the original order.
        const by = p.int(1, n - 1)
        return withIds([...oldIds.slice(by), ...oldIds.slice(0, by)])
      }
      case "oneOldAmongNew": {
        const ids: Array<string | undefined> = news(p.int(1, 3))
        ids.splice(p.int(0, ids.length), 0, p.pick(oldIds))
        return withIds(ids)
      }
      case "newInside": {
        // The first and last ids old, new ones between: the cache holds both ends but not the middle.
        const ids: Array<string | undefined> = [...oldIds]
        for (let k = p.int(1, 2); k > 0; k--) ids.splice(p.int(1, ids.length - 1), 0, undefined)
        return withIds(ids)
      }
      case "foreignId": {
        // An id sent to another stream: cached, if at all, for that stream, which counts as not cached here.
        const ids: Array<string | undefined> = [...oldIds]
        ids.splice(p.int(0, ids.length), 0, p.pick(foreign))
        return withIds(ids)
      }
    }
  }

  private pickExpected(
    model: StoreModel,
    stream: string,
    original: number,
    events: ReadonlyArray<ProposedEvent>
  ): { expected: number; version: VersionKind } {
    const p = this.prng
    const current = model.lastEventNumber(stream)
    const r = p.next()
    if (r < 0.2) return { expected: ExpectedAny, version: "any" }
    if (r < 0.3) return { expected: ExpectedNoStream, version: "noStream" }
    if (r < 0.4) return { expected: ExpectedStreamExists, version: "streamExists" }
    if (r < 0.55) return { expected: original, version: "original" }
    if (r < 0.7 && current !== LongMax) return { expected: current, version: "current" }
    if (r < 0.9) {
      const stored = storedNumberOf(model, stream, events[0]!.eventId)
      if (stored !== undefined) return { expected: stored - 1, version: "aligned" }
    }
    const base = current === LongMax ? -1 : current
    return { expected: p.pick([base + 1, Math.max(-1, base - 1), p.int(0, 5)]), version: "other" }
  }
}

/** The newest event number `eventId` is stored at in `stream`, by the model. */
const storedNumberOf = (model: StoreModel, stream: string, eventId: string): number | undefined => {
  const events = model.eventsOf(stream)
  for (let n = events.length - 1; n >= 0; n--) if (events[n]!.eventId === eventId) return n
  return undefined
}

/**
 * Whether the retry's first id passes the idempotency check (so a refusal is corrupted idempotency, not a
 * plain wrong version): cached for this stream under Any and StreamExists, stored right after the
 * expected version under an explicit one.
 */
const firstIdMatches = (model: StoreModel, stream: string, expected: number, ids: ReadonlyArray<string>): boolean => {
  const view = model.view()
  if (ids.length === 0) return false
  if (expected === ExpectedAny || expected === ExpectedStreamExists) return view.cached(ids[0]!)?.stream === stream
  return view.storedEventId(stream, expected + 1) === ids[0]
}
