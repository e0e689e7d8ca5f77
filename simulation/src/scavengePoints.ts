/**
 * What a scavenge may remove, in the model: an event may go only if it was hidden at a scavenge point the
 * node wrote, judged under the stream's state AT that point —
 *
 *   - the metadata in force then (the last `$$S` event before the point): `$maxCount` counted back from the
 *     stream's last event before the point, `$tb`, and `$maxAge` judged at the point's EffectiveNow (not the
 *     clock of the run: a run resumed minutes later judges as its point does);
 *   - a soft delete (`$tb` = long.MaxValue) or a hard delete (tombstone) before the point: every event;
 *   - a metastream keeps only its last event before the point;
 *   - an event written after the point is never removed by it.
 *
 * The reference's scavenger keeps more (each stream's last event; whole chunks below the threshold): the
 * model says what MAY go, and the checkers fail on the removal of anything else.
 *
 * The points are learned from the node's `$scavengePoints` stream (`learnScavengePoints`, before every check
 * that allows an event to be missing): position and EffectiveNow. Which model events lie before a point:
 * by log position where learned (read from the index when the point is learned, for events whose timing
 * alone does not tell), else by time — acknowledged before the point's EffectiveNow (the point is written
 * after it is stamped) → before; sent after the point was seen → after; otherwise (in flight, or
 * indeterminate) possibly before. Possibly-before events are the one over-approximation: every cut of the
 * stream and of its metastream they allow is tried, and an event hidden under any of them may go. `$maxAge`
 * uses the creation bracket of expiry.ts: an event possibly created before EffectiveNow − maxAge may go.
 */
import { Effect } from "effect"
import { RecordKind, ScavengePointsStream, type EventStoreService } from "@vellum/storage"
import type { Coverage } from "./coverage.js"
import type { EventTimes } from "./expiry.js"
import {
  LongMax,
  isMetastream,
  metastreamOf,
  originalStreamOf,
  parseModelMetadata,
  type DiscardRule,
  type ModelEvent,
  type StoreModel
} from "./model.js"

/** What learning points needs of the auditor (client.ts). */
export interface PointLearner {
  readonly scavengePoints: ScavengePoints
  readonly times: EventTimes
  readonly coverage: Coverage
  readonly trace: (line: string) => void
}

export interface LearnedPoint {
  readonly position: number
  readonly effectiveNowMicros: number
  /** When the simulator first saw it (EventTimes' order): writes sent later are after it. */
  readonly seenSeq: number
}

type Side = "before" | "after" | "maybe"

/** Per stream: the discard prefix of the stream and of its metastream, for one state of the model. */
interface Cached {
  readonly key: string
  readonly stream: number
  readonly meta: number
  /** The part of `stream` that only `$maxAge` made discardable (coverage). */
  readonly byMaxAge: number
}

export class ScavengePoints implements DiscardRule {
  readonly points: Array<LearnedPoint> = []
  private readonly positions = new WeakMap<ModelEvent, number>()
  private version = 0
  private readonly cache = new Map<string, Cached>()

  constructor(
    private readonly model: StoreModel,
    private readonly times: EventTimes,
    private readonly onExpiredGone: () => void = () => {}
  ) {}

  /** A point seen for the first time (its position is its identity). */
  learn(point: LearnedPoint): boolean {
    if (this.points.some((p) => p.position === point.position)) return false
    this.points.push(point)
    this.version++
    return true
  }

  /** The event's log position, read from the index. */
  learnPosition(event: ModelEvent, position: number): void {
    this.positions.set(event, position)
    this.version++
  }

  /** Events whose side of some point only their position can tell (their position is then worth reading). */
  undecided(point: LearnedPoint): Array<ModelEvent> {
    return this.model.log.filter((e) => !this.positions.has(e) && this.timedSide(e, point) === "maybe")
  }

  isDiscardable = (event: ModelEvent): boolean => {
    const below = this.below(isMetastream(event.stream) ? originalStreamOf(event.stream) : event.stream)
    return event.eventNumber < (isMetastream(event.stream) ? below.meta : below.stream)
  }

  gone = (event: ModelEvent): void => {
    if (isMetastream(event.stream)) return
    const below = this.below(event.stream)
    if (event.eventNumber >= below.stream - below.byMaxAge) this.onExpiredGone()
  }

  private timedSide(event: ModelEvent, point: LearnedPoint): Side {
    const timing = this.times.timing(event)
    if (timing.ackMs * 1000 < point.effectiveNowMicros) return "before"
    if (timing.sentSeq > point.seenSeq) return "after"
    return "maybe"
  }

  private side(event: ModelEvent, point: LearnedPoint): Side {
    const position = this.positions.get(event)
    if (position !== undefined) return position < point.position ? "before" : "after"
    return this.timedSide(event, point)
  }

  /** The cuts a point may make in `events`: how many of them may lie before it, from fewest to most. */
  private cuts(events: ReadonlyArray<ModelEvent>, point: LearnedPoint): readonly [number, number] {
    let low = 0
    while (low < events.length && this.side(events[low]!, point) === "before") low++
    let high = low
    while (high < events.length && this.side(events[high]!, point) !== "after") high++
    return [low, high]
  }

  private below(stream: string): Cached {
    const model = this.model
    const events = model.eventsOf(stream)
    const metas = model.eventsOf(metastreamOf(stream))
    const key = `${this.version}/${events.length}/${metas.length}/${model.isHardDeleted(stream)}`
    const cached = this.cache.get(stream)
    if (cached?.key === key) return cached
    let result = { key, stream: 0, meta: 0, byMaxAge: 0 }
    for (const point of this.points) {
      const at = this.hiddenAt(point, events, metas, stream)
      result = {
        key,
        stream: Math.max(result.stream, at.stream),
        meta: Math.max(result.meta, at.meta),
        byMaxAge: Math.max(result.byMaxAge, at.stream - at.withoutMaxAge)
      }
    }
    this.cache.set(stream, result)
    return result
  }

  /** The discard prefixes one point allows, over every cut its uncertain events allow. */
  private hiddenAt(
    point: LearnedPoint,
    events: ReadonlyArray<ModelEvent>,
    metas: ReadonlyArray<ModelEvent>,
    stream: string
  ) {
    const tombstone = this.model.log.find((e) => e.origin === "tombstone" && e.stream === stream)
    if (tombstone !== undefined && this.side(tombstone, point) !== "after")
      return { stream: events.length, meta: metas.length, withoutMaxAge: events.length }
    const [lowS, highS] = this.cuts(events, point)
    const [lowM, highM] = this.cuts(metas, point)
    let hidden = 0
    let withoutMaxAge = 0
    for (let nM = lowM; nM <= highM; nM++) {
      const last = metas[nM - 1]
      const metadata = last === undefined ? {} : parseModelMetadata(last.isJson, last.data)
      for (let nS = lowS; nS <= highS; nS++) {
        let byRules = 0
        if (metadata.truncateBefore === LongMax) byRules = nS
        if (metadata.maxCount !== undefined) byRules = Math.max(byRules, nS - metadata.maxCount)
        if (metadata.truncateBefore !== undefined) byRules = Math.max(byRules, Math.min(nS, metadata.truncateBefore))
        let byAge = 0
        if (metadata.maxAge !== undefined) {
          const threshold = point.effectiveNowMicros - metadata.maxAge * 1_000_000
          while (byAge < nS && this.times.mayPrecede(events[byAge]!, threshold)) byAge++
        }
        hidden = Math.max(hidden, byRules, byAge)
        withoutMaxAge = Math.max(withoutMaxAge, byRules)
      }
    }
    return { stream: hidden, meta: Math.max(0, highM - 1), withoutMaxAge }
  }
}

/**
 * Reads the node's `$scavengePoints` stream through the EventStore service and learns the points not yet
 * known, with the log positions of the events whose side of a new point their timing leaves open. `seen`
 * (one per lifetime) skips the read while the stream's last event number stays what it was.
 */
export const learnScavengePoints = (store: EventStoreService, auditor: PointLearner, seen = { last: -2 }) =>
  Effect.gen(function* () {
    const rule = auditor.scavengePoints
    const { readIndex, log } = store.engine
    const last = yield* readIndex.lastEventNumber(ScavengePointsStream)
    if (last === seen.last) return
    const entries = yield* readIndex.liveEntries(ScavengePointsStream)
    if (entries.length === 0 || entries.every((e) => rule.points.some((p) => p.position === e.position))) return
    for (const entry of entries) {
      if (rule.points.some((p) => p.position === entry.position)) continue
      const record = yield* log.readRecord(entry.position, readIndex.committed())
      if (record === undefined || record.kind !== RecordKind.ScavengePoint) continue
      const point: LearnedPoint = {
        position: record.logPosition,
        effectiveNowMicros: record.effectiveNowMicros,
        seenSeq: auditor.times.nextSeq()
      }
      const undecided = rule.undecided(point)
      const streams = new Set(undecided.map((e) => e.stream))
      for (const stream of streams) {
        const byNumber = new Map((yield* readIndex.liveEntries(stream)).map((e) => [e.eventNumber, e.position]))
        for (const event of undecided) {
          const position = event.stream === stream ? byNumber.get(event.eventNumber) : undefined
          if (position !== undefined) rule.learnPosition(event, position)
        }
      }
      rule.learn(point)
      auditor.coverage.hit("scavenge.pointLearned")
      auditor.trace(`scavenge point learned at ${point.position} effectiveNow=${point.effectiveNowMicros}`)
    }
    seen.last = last
  })
