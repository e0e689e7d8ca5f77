/**
 * The calculator's decision for one original stream: walking the stream's index
 * entries before the scavenge point in ascending event number, how far its events are definitely removable
 * (the discard point) and how far they may be, record by record, for `$maxAge` (the maybe-discard point),
 * and the weight each decision adds to the chunk holding the event. Pure: the caller reads the
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
 * The decision procedure one entry at a time, so a caller can read a long stream's entries in slices and
 * stop reading at the first kept event: `step` answers false once the walk has stopped.
 */
export class StreamWalk {
  private readonly truncated: number
  private readonly cutoff: number | undefined
  private readonly weights: Array<{ position: number; weight: number }> = []
  private discard = 0
  private maybe = 0
  private allDiscardedSoFar = true
  private seen = 0
  private stopped = false

  constructor(
    private readonly limits: StreamLimits,
    private readonly last: number,
    private readonly context: CalculationContext
  ) {
    this.truncated = truncationPoint(limits, last)
    this.cutoff =
      limits.maxAgeSeconds === undefined ? undefined : context.effectiveNowMicros - limits.maxAgeSeconds * 1_000_000
  }

  get done(): boolean {
    return this.stopped
  }

  private decide(entry: StreamEntry): Decision {
    if (entry.position >= this.context.spPosition) return "Keep"
    if (entry.eventNumber >= this.last) return "Keep" // the last event is always kept
    if (this.limits.isTombstoned) return "Discard"
    if (entry.eventNumber < this.truncated) return "Discard"
    if (this.cutoff === undefined) return "Keep"
    const range = this.context.timeRangeAt(entry.position)
    if (range === undefined) return "AlreadyDiscarded" // its chunk had no events when accumulated
    if (this.cutoff <= range.minMicros) return "Keep"
    if (range.maxMicros < this.cutoff) return "Discard"
    return "MaybeDiscard"
  }

  /** Judges the next entry (ascending event numbers, one per number); false once the walk has stopped. */
  step(entry: StreamEntry): boolean {
    if (this.stopped) return false
    // Gaps at the start of the stream count as removed already.
    if (this.seen++ === 0) this.discard = this.maybe = entry.eventNumber
    switch (this.decide(entry)) {
      case "Discard":
        this.discard = entry.eventNumber + 1
        this.weights.push({ position: entry.position, weight: 2 })
        this.allDiscardedSoFar = true
        break
      case "MaybeDiscard":
        this.maybe = entry.eventNumber + 1
        this.weights.push({ position: entry.position, weight: 1 })
        this.allDiscardedSoFar = false
        break
      case "AlreadyDiscarded":
        if (this.allDiscardedSoFar) this.discard = entry.eventNumber + 1
        break
      case "Keep":
        this.maybe = Math.max(this.maybe, this.discard)
        this.stopped = true
        return false
    }
    return true
  }

  /** The points and weights; a walk that saw entries must have stopped at a kept one. */
  result(): StreamCalculation {
    if (this.seen === 0) return { discardPoint: 0, maybeDiscardPoint: 0, weights: this.weights }
    if (!this.stopped)
      throw new CalculationInvariantBroken(
        `stream entries ended without a kept event (last ${this.last}, ${this.seen} entries)`
      )
    return { discardPoint: this.discard, maybeDiscardPoint: this.maybe, weights: this.weights }
  }
}

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
  const walk = new StreamWalk(limits, last, context)
  for (const entry of entries) if (!walk.step(entry)) break
  return walk.result()
}
