/**
 * Where a group's events come from: a stream (positions are event numbers; a group that resolves links counts
 * the links' numbers) or `$all` (positions are log positions, with the group's filter). A source answers the
 * group machine's reads, and the tail reads that report what was appended since the group started.
 */
import { Effect } from "effect"
import {
  originalEvent,
  SystemLinkAccess,
  type EventStoreService,
  type ReadFailure,
  type ReadOptions,
  type ResolvedEvent
} from "@vellum/storage"
import type { ReadResult } from "../group/buffer.js"
import type { ReadFrom } from "../group/positions.js"
import { AllStream, type EventFilterRecord } from "../persisted/groupDefinitions.js"
import type { GroupSpec, SubscribedEvent } from "./Subscriptions.js"

/** Records a filtered `$all` read examines at most before it answers (so a rare match cannot hold a read long). */
export const FilterSearchWindow = 1000
/** Events per tail read. */
export const TailPage = 100

export interface TailRead {
  readonly events: ReadonlyArray<SubscribedEvent>
  /** Where the next tail read starts. */
  readonly next: number
  readonly isEnd: boolean
}

export interface Source {
  /** The stream a commit must touch to concern this source (undefined: every commit, `$all`). */
  readonly stream: string | undefined
  readonly read: (
    from: ReadFrom<number>,
    count: number
  ) => Effect.Effect<ReadResult<number, SubscribedEvent>, ReadFailure>
  /** Where a tail started now begins: just past the source's head. */
  readonly headNext: Effect.Effect<number, ReadFailure>
  /** Every event from `next` (matching the filter), up to a page. */
  readonly tail: (next: number) => Effect.Effect<TailRead, ReadFailure>
}

/** The `$correlationId` of an event's JSON metadata, when it has one. */
const correlationIdOf = (resolved: ResolvedEvent): string | undefined => {
  const metadata = resolved.event?.metadata
  if (metadata === undefined || metadata.length === 0 || metadata.indexOf("$correlationId") < 0) return undefined
  try {
    const parsed: unknown = JSON.parse(metadata.toString("utf8"))
    if (typeof parsed !== "object" || parsed === null) return undefined
    const id = (parsed as Record<string, unknown>)["$correlationId"]
    return typeof id === "string" ? id : undefined
  } catch {
    return undefined
  }
}

/**
 * A resolved event as the group sees it: the id acks name is the original's (the link's own for a resolved
 * link), and the Pinned strategies pin by the event's stream and correlation id.
 */
export const subscribedEvent = (
  resolved: ResolvedEvent,
  position: number,
  withCorrelation: boolean
): SubscribedEvent => {
  const original = originalEvent(resolved)
  return {
    id: original.eventId,
    position,
    pinStream: (resolved.event ?? original).stream,
    correlationId: withCorrelation ? correlationIdOf(resolved) : undefined,
    resolved
  }
}

const startOf = (from: ReadFrom<number>): number => (from._tag === "At" ? from.position : from.position + 1)

const streamSource = (store: EventStoreService, spec: GroupSpec): Source => {
  const options: ReadOptions | undefined = spec.settings.resolveLinkTos ? { resolveLinks: SystemLinkAccess } : undefined
  const withCorrelation = spec.settings.namedConsumerStrategy === "PinnedByCorrelation"
  const page = (start: number, count: number) =>
    Effect.map(store.readStreamForward(spec.stream, start, count, options), (read) => {
      if (read._tag !== "Success") return { events: [], next: start, isEnd: true }
      const events = read.events.map((e) => subscribedEvent(e, originalEvent(e).eventNumber, withCorrelation))
      return { events, next: read.nextEventNumber, isEnd: read.isEndOfStream }
    })
  return {
    stream: spec.stream,
    read: (from, count) => Effect.map(page(startOf(from), count), (p) => ({ events: p.events, endOfStream: p.isEnd })),
    headNext: Effect.map(store.lastEventNumber(spec.stream), (last) => Math.max(0, last + 1)),
    tail: (next) => page(next, TailPage)
  }
}

/** The filter of a `$all` group as a test of an event. */
export const filterTest = (filter: EventFilterRecord | undefined): ((resolved: ResolvedEvent) => boolean) => {
  if (filter === undefined) return () => true
  const valueOf =
    filter.context.toLowerCase() === "eventtype"
      ? (r: ResolvedEvent) => originalEvent(r).eventType
      : (r: ResolvedEvent) => originalEvent(r).stream
  if (filter.type.toLowerCase() === "regex") {
    const pattern = new RegExp(filter.data)
    return (r) => pattern.test(valueOf(r))
  }
  const prefixes = filter.data.split(",").filter((p) => p !== "")
  return (r) => {
    const value = valueOf(r)
    return prefixes.some((p) => value.startsWith(p))
  }
}

const allSource = (store: EventStoreService, spec: GroupSpec): Source => {
  const options: ReadOptions | undefined = spec.settings.resolveLinkTos ? { resolveLinks: SystemLinkAccess } : undefined
  const withCorrelation = spec.settings.namedConsumerStrategy === "PinnedByCorrelation"
  const matches = filterTest(spec.filter)
  /**
   * Reads from `start` until `count` matches, the end, or the search window; events at or before `after` are
   * passed over unseen. `start` and the `next` it answers are record boundaries: the store reads `$all`
   * only from where a record begins, so the position after an event is the next record's, never its own + 1.
   */
  const search = (start: number, count: number, after: number | undefined) =>
    Effect.gen(function* () {
      const events: Array<SubscribedEvent> = []
      let next = start
      let examined = 0
      let passedCount = 0
      let lastPassed: number | undefined
      while (true) {
        const read = yield* store.readAllForward(next, Math.max(count, 20), options)
        for (let i = 0; i < read.events.length && events.length < count; i++) {
          const resolved = read.events[i]!
          const position = originalEvent(resolved).logPosition
          const following = read.events[i + 1]
          next = following === undefined ? read.nextPosition : originalEvent(following).logPosition
          if (after !== undefined && position <= after) continue
          examined++
          if (matches(resolved)) {
            events.push(subscribedEvent(resolved, position, withCorrelation))
            lastPassed = undefined
          } else {
            passedCount++
            lastPassed = position
          }
        }
        const done = events.length >= count || read.isEnd || examined >= FilterSearchWindow
        if (read.events.length === 0 || done) {
          const isEnd = read.isEnd && events.length < count
          if (read.events.length === 0 && read.isEnd) next = Math.max(next, read.nextPosition)
          return {
            events,
            next,
            isEnd,
            passed: lastPassed === undefined ? undefined : { through: lastPassed, count: passedCount }
          }
        }
      }
    })
  return {
    stream: undefined,
    // After a position: from that event's own record (a boundary), leaving the event itself out.
    read: (from, count) =>
      Effect.map(search(from.position, count, from._tag === "After" ? from.position : undefined), (r) => ({
        events: r.events,
        endOfStream: r.isEnd,
        passed: r.passed
      })),
    headNext: store.committedPosition,
    tail: (next) =>
      Effect.map(search(next, TailPage, undefined), (r) => ({ events: r.events, next: r.next, isEnd: r.isEnd }))
  }
}

export const sourceOf = (store: EventStoreService, spec: GroupSpec): Source =>
  spec.stream === AllStream ? allSource(store, spec) : streamSource(store, spec)
