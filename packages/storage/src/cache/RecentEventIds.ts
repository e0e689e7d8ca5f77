/**
 * The newest event ids of the log, gathered while the store opens to refill the event-id cache, so that a
 * retried append is answered as the original after any restart.
 *
 * The ids come from the log itself, not from what the index has persisted: first the replay of the tail
 * the index does not cover (in log order), then, when that tail holds fewer ids than the cache's window
 * (after a clean stop, which flushes the index, it holds almost none), the records before it read
 * backwards. Clean stops and crashes thus leave the same ids cached. Only the window's worth is kept (the
 * replay's in a ring), so the memory and the reading back are bounded by the cache, not by the log.
 */
import { RecordKind, type LogRecord } from "../log/records.js"
import { DeletedStreamNumber } from "../streams/names.js"
import type { EventIdCache } from "./EventIdCache.js"

/** An event a retry can be answered with (a hard delete's tombstone is not one). */
export const isCacheable = (record: LogRecord): record is Extract<LogRecord, { kind: typeof RecordKind.Event }> =>
  record.kind === RecordKind.Event && record.eventNumber !== DeletedStreamNumber

export class RecentEventIds {
  private readonly ids: Array<string>
  private readonly streams: Array<string>
  private readonly numbers: Float64Array
  /** Events met replaying forward (the ring keeps the newest `window`). */
  private seen = 0
  /** Events met reading backwards, newest first. */
  private readonly older: Array<{ readonly id: string; readonly stream: string; readonly eventNumber: number }> = []

  constructor(private readonly window: number) {
    this.ids = new Array<string>(window)
    this.streams = new Array<string>(window)
    this.numbers = new Float64Array(window)
  }

  /** A record of the replay, in log order. */
  forward(record: LogRecord): void {
    if (!isCacheable(record)) return
    const slot = this.seen++ % this.window
    this.ids[slot] = record.eventId
    this.streams[slot] = record.stream
    this.numbers[slot] = record.eventNumber
  }

  /** How many more ids older than the replay the window has room for. */
  get missing(): number {
    return Math.max(0, this.window - this.seen - this.older.length)
  }

  /** A record before the replay, newest first. */
  backward(record: LogRecord): void {
    if (this.missing > 0 && isCacheable(record))
      this.older.push({ id: record.eventId, stream: record.stream, eventNumber: record.eventNumber })
  }

  /** Puts every id gathered into `cache`, oldest first (as they were written). */
  fillInto(cache: EventIdCache): void {
    for (let i = this.older.length - 1; i >= 0; i--) {
      const { id, stream, eventNumber } = this.older[i]!
      cache.put(id, { stream, eventNumber })
    }
    for (let i = Math.max(0, this.seen - this.window); i < this.seen; i++) {
      const slot = i % this.window
      cache.put(this.ids[slot]!, { stream: this.streams[slot]!, eventNumber: this.numbers[slot]! })
    }
  }
}
