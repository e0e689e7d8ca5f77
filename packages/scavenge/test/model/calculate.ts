/**
 * Calculation: for every Active original stream, its new status and its
 * discard/maybe-discard points, computed from scratch over the stream's index entries and then never
 * allowed to move backwards. Adds +2 per definite and +1 per maybe discard to the event's chunk.
 */
import { DeletedStreamNumber, type EventRecord } from "@vellum/storage"
import { DiscardWeight } from "./accumulate.js"
import { discardBefore, discardIncluding, KeepAll, shouldDiscard } from "./discardPoint.js"
import { addWeight, chunkOf, lastEventNumberBefore } from "./logView.js"
import type { CalculationStatus, ChunkTimeRange, OriginalStreamState, ScavengePointSpec } from "./types.js"

export const MaybeDiscardWeight = 1

type Decision = "Discard" | "MaybeDiscard" | "AlreadyDiscarded" | "Keep"

interface StreamContext {
  readonly data: OriginalStreamState
  readonly last: number
  readonly tbOrMaxCountPoint: number
  readonly sp: ScavengePointSpec
  readonly chunkSize: number
  readonly chunkTimeRanges: ReadonlyMap<number, ChunkTimeRange>
}

/** The reference's StreamCalculator.CalculateStatus: whether later runs still need to look at the stream. */
export const calculateStatus = (data: OriginalStreamState, last: number): CalculationStatus => {
  const { maxAge, maxCount, truncateBefore } = data.limits
  if (data.tombstoned) return "Archived"
  if (maxAge !== undefined || maxCount !== undefined) return "Active"
  if (truncateBefore !== undefined && truncateBefore !== DeletedStreamNumber && last < truncateBefore) return "Active"
  return "Spent"
}

/** Max(DiscardBefore(tb), DiscardIncluding(last − maxCount)); a missing setting is KeepAll. */
const truncateOrMaxCountPoint = (data: OriginalStreamState, last: number): number => {
  const { maxCount, truncateBefore } = data.limits
  return Math.max(
    truncateBefore === undefined ? KeepAll : discardBefore(truncateBefore),
    maxCount === undefined ? KeepAll : discardIncluding(last - maxCount)
  )
}

/** Judging maxAge by the chunk's stored timestamp range. */
const decideByMaxAge = (ctx: StreamContext, entry: EventRecord, maxAgeSeconds: number): Decision => {
  const range = ctx.chunkTimeRanges.get(chunkOf(entry.logPosition, ctx.chunkSize))
  if (range === undefined) return "AlreadyDiscarded"
  const cutoff = ctx.sp.effectiveNowMicros - maxAgeSeconds * 1_000_000
  if (cutoff <= range.minMicros) return "Keep"
  if (range.maxMicros < cutoff) return "Discard"
  return "MaybeDiscard"
}

/** The first rule that applies to one index entry. */
const decideEvent = (ctx: StreamContext, entry: EventRecord): Decision => {
  if (entry.logPosition >= ctx.sp.position) return "Keep"
  if (entry.eventNumber >= ctx.last) return "Keep" // keep-last-event
  if (ctx.data.tombstoned) return "Discard"
  if (shouldDiscard(ctx.tbOrMaxCountPoint, entry.eventNumber)) return "Discard"
  const maxAge = ctx.data.limits.maxAge
  if (maxAge === undefined) return "Keep"
  return decideByMaxAge(ctx, entry, maxAge)
}

interface Points {
  readonly discardPoint: number
  readonly maybeDiscardPoint: number
}

/** Upstream CalculateDiscardPointsForOriginalStream: walks entries in ascending event number. */
const calculatePoints = (
  ctx: StreamContext,
  entries: ReadonlyArray<EventRecord>,
  weights: Map<number, number>
): Points => {
  const first = entries[0]
  if (first === undefined) return { discardPoint: KeepAll, maybeDiscardPoint: KeepAll }
  // Gaps before the first indexed event count as already removed.
  let discard = discardBefore(first.eventNumber)
  let maybe = discard
  let allDiscardedSoFar = true
  for (const entry of entries) {
    const chunk = chunkOf(entry.logPosition, ctx.chunkSize)
    switch (decideEvent(ctx, entry)) {
      case "Discard":
        addWeight(weights, chunk, DiscardWeight)
        discard = discardIncluding(entry.eventNumber)
        allDiscardedSoFar = true
        break
      case "MaybeDiscard":
        addWeight(weights, chunk, MaybeDiscardWeight)
        maybe = discardIncluding(entry.eventNumber)
        allDiscardedSoFar = false
        break
      case "AlreadyDiscarded":
        if (allDiscardedSoFar) discard = discardIncluding(entry.eventNumber)
        break
      case "Keep":
        return { discardPoint: discard, maybeDiscardPoint: Math.max(maybe, discard) }
    }
  }
  throw new Error("every indexed event of a stream was discarded: impossible (keep-last-event)")
}

/**
 * Runs calculation over the accumulated original streams (only Active ones change). `index` holds each
 * stream's entries in ascending event number.
 */
export const calculate = (
  originals: ReadonlyMap<string, OriginalStreamState>,
  index: ReadonlyMap<string, ReadonlyArray<EventRecord>>,
  sp: ScavengePointSpec,
  chunkSize: number,
  chunkTimeRanges: ReadonlyMap<number, ChunkTimeRange>,
  weights: Map<number, number>
): Map<string, OriginalStreamState> => {
  const result = new Map(originals)
  for (const [stream, data] of originals) {
    if (data.status !== "Active") continue // Spent and Archived streams are skipped
    // Calculation walks the stream's index entries before the SP.
    const entries = (index.get(stream) ?? []).filter((e) => e.logPosition < sp.position)
    const last = lastEventNumberBefore(entries, sp.position)
    const ctx: StreamContext = {
      data,
      last,
      tbOrMaxCountPoint: truncateOrMaxCountPoint(data, last),
      sp,
      chunkSize,
      chunkTimeRanges
    }
    const points = calculatePoints(ctx, entries, weights)
    result.set(stream, {
      ...data,
      status: calculateStatus(data, last),
      // Monotonic: a relaxed metadata never brings events back.
      discardPoint: Math.max(data.discardPoint, points.discardPoint),
      maybeDiscardPoint: Math.max(data.maybeDiscardPoint, points.maybeDiscardPoint)
    })
  }
  return result
}
