import { assert } from "@vellum/platform"
import type { PositionOrder } from "./positions.js"

/** The checkpoint settings, by their reference names. */
export interface CheckpointSettings {
  readonly checkPointAfterMilliseconds: number
  readonly minCheckPointCount: number
  readonly maxCheckPointCount: number
}

interface Entry<P> {
  readonly position: P
  done: boolean
  /** How many source events it stands for: 1, or the count a filtered read passed over. */
  readonly weight: number
}

/**
 * Which prefix of the source is finished, and when to record it. Every event the group takes from its source
 * enters here in position order and leaves the front once it is acked, skipped or durably parked; the
 * position of the last one to leave is the checkpoint candidate, so a checkpoint never passes an event that
 * could still need delivering.
 *
 * When to write follows the reference: a checkpoint is due once `maxCheckPointCount` events finished since
 * the last one, whatever the time; on the clock's tick, once `checkPointAfterMilliseconds` passed and at
 * least `minCheckPointCount` finished.
 */
export class CheckpointTracker<P> {
  private readonly entries: Array<Entry<P>> = []
  private head = 0
  private readonly pending = new Map<string, Entry<P>>()
  private finishedThrough: P | undefined
  private finishedSinceWrite = 0
  private lastWrittenAt = Number.NEGATIVE_INFINITY
  private written: P | undefined

  constructor(
    private readonly order: PositionOrder<P>,
    private readonly settings: CheckpointSettings,
    /** The checkpoint the group started after, if any. */
    start: P | undefined
  ) {
    this.finishedThrough = start
    this.written = start
  }

  /** Whether an event with this id is taken and not finished. */
  has(id: string): boolean {
    return this.pending.has(id)
  }

  /** A new event taken from the source; positions only grow. */
  take(id: string, position: P): void {
    const entry = { position, done: false, weight: 1 }
    this.push(entry)
    this.pending.set(id, entry)
  }

  /** A filtered read passed over `count` events through `position`: nothing there to deliver, so it is finished. */
  passed(position: P, count: number): void {
    this.push({ position, done: true, weight: count })
    this.advance()
  }

  private push(entry: Entry<P>): void {
    const last = this.entries.length > this.head ? this.entries[this.entries.length - 1]!.position : undefined
    assert(last === undefined || this.order.compare(last, entry.position) < 0, "checkpoint entries out of order")
    this.entries.push(entry)
  }

  /** The event is acked, skipped or parked. Unknown ids are ignored. */
  finish(id: string): void {
    const entry = this.pending.get(id)
    if (entry === undefined) return
    this.pending.delete(id)
    entry.done = true
    this.advance()
  }

  private advance(): void {
    while (this.head < this.entries.length && this.entries[this.head]!.done) {
      this.finishedThrough = this.entries[this.head]!.position
      this.finishedSinceWrite += this.entries[this.head]!.weight
      this.head++
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head)
      this.head = 0
    }
  }

  /** The position to write now, if one is due; it is then taken as written. */
  due(now: number, isClockTick: boolean): P | undefined {
    const { checkPointAfterMilliseconds, minCheckPointCount, maxCheckPointCount } = this.settings
    const count = this.finishedSinceWrite
    if (count === 0 || this.finishedThrough === undefined) return undefined
    const timeUp = now - this.lastWrittenAt >= checkPointAfterMilliseconds
    if (!timeUp && count < maxCheckPointCount) return undefined
    if (!((isClockTick && count >= minCheckPointCount) || count >= maxCheckPointCount)) return undefined
    this.lastWrittenAt = now
    this.finishedSinceWrite = 0
    this.written = this.finishedThrough
    return this.finishedThrough
  }

  /** Every event up to here is finished: where a checkpoint written now would stand. */
  get finished(): P | undefined {
    return this.finishedThrough
  }

  /** The last checkpoint written (or started after). */
  get lastWritten(): P | undefined {
    return this.written
  }
}
