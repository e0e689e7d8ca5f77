/**
 * The calculator's decision for one original stream (spec/scavenge.md §3.3): walking the stream's index
 * entries before the scavenge point in ascending event number, how far its events are definitely removable
 * (the discard point) and how far they may be, record by record, for `$maxAge` (the maybe-discard point),
 * and the weight each decision adds to the chunk holding the event (§4.1). Pure: the caller reads the
 * entries and the chunk timestamp ranges.
 *
 * Points are "first event number to keep": 0 keeps everything, n removes event numbers below n.
 */

/** A stream's limits as the accumulator stored them. */
export interface StreamLimits {
  readonly isTombstoned: boolean
  readonly maxAgeSeconds: number | undefined
  readonly maxCount: number | undefined
  readonly truncateBefore: number | undefined
}

export interface StreamEntry {
  readonly eventNumber: number
  readonly position: number
}

/** Inclusive bounds on the record timestamps of a chunk (µs). */
export interface TimeRange {
  readonly minMicros: number
  readonly maxMicros: number
}

export interface CalculationContext {
  readonly spPosition: number
  readonly effectiveNowMicros: number
  /** The min/max record timestamps of the logical chunk holding `position`; undefined if none was stored. */
  readonly timeRangeAt: (position: number) => TimeRange | undefined
}

export interface StreamCalculation {
  readonly discardPoint: number
  readonly maybeDiscardPoint: number
  /** Weight to add, per position of each event judged (the caller maps positions to chunks). */
  readonly weights: ReadonlyArray<{ readonly position: number; readonly weight: number }>
}

/** Thrown when a stream's entries end without a kept event: the last event is always kept, so this is a bug. */
export class CalculationInvariantBroken extends Error {}

/** The point before which `$tb` and `$maxCount` remove events (the larger of the two). */
const truncationPoint = (limits: StreamLimits, last: number): number => {
  let point = 0
  if (limits.truncateBefore !== undefined) point = Math.max(point, limits.truncateBefore)
  if (limits.maxCount !== undefined) point = Math.max(point, last - limits.maxCount + 1)
  return point
}

type Decision = "Keep" | "Discard" | "MaybeDiscard" | "AlreadyDiscarded"

/**
 * `entries` ascending by event number (one per number), `last` the stream's last event number before the
 * scavenge point (-1 if none).
 */
export const calculateStream = (
  limits: StreamLimits,
  entries: ReadonlyArray<StreamEntry>,
  last: number,
  context: CalculationContext
): StreamCalculation => {
  const weights: Array<{ position: number; weight: number }> = []
  if (entries.length === 0) return { discardPoint: 0, maybeDiscardPoint: 0, weights }
  const truncated = truncationPoint(limits, last)
  const cutoff = limits.maxAgeSeconds === undefined ? undefined : context.effectiveNowMicros - limits.maxAgeSeconds * 1_000_000
  const decide = (entry: StreamEntry): Decision => {
    if (entry.position >= context.spPosition) return "Keep"
    if (entry.eventNumber >= last) return "Keep" // the last event is always kept
    if (limits.isTombstoned) return "Discard"
    if (entry.eventNumber < truncated) return "Discard"
    if (cutoff === undefined) return "Keep"
    const range = context.timeRangeAt(entry.position)
    if (range === undefined) return "AlreadyDiscarded" // its chunk had no events when accumulated
    if (cutoff <= range.minMicros) return "Keep"
    if (range.maxMicros < cutoff) return "Discard"
    return "MaybeDiscard"
  }
  // Gaps at the start of the stream count as removed already.
  let discard = entries[0]!.eventNumber
  let maybe = discard
  let allDiscardedSoFar = true
  for (const entry of entries) {
    switch (decide(entry)) {
      case "Discard":
        discard = entry.eventNumber + 1
        weights.push({ position: entry.position, weight: 2 })
        allDiscardedSoFar = true
        break
      case "MaybeDiscard":
        maybe = entry.eventNumber + 1
        weights.push({ position: entry.position, weight: 1 })
        allDiscardedSoFar = false
        break
      case "AlreadyDiscarded":
        if (allDiscardedSoFar) discard = entry.eventNumber + 1
        break
      case "Keep":
        return { discardPoint: discard, maybeDiscardPoint: Math.max(maybe, discard), weights }
    }
  }
  throw new CalculationInvariantBroken(`stream entries ended without a kept event (last ${last}, ${entries.length} entries)`)
}
