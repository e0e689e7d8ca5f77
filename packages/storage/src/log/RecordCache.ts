/**
 * Decoded records by log position, beside the block cache, bounded in bytes: a hot record read again (a
 * page read by many clients) skips its decode and checksum, and readers get the same record object each
 * time, so what they derive from an immutable record (the HTTP layer's rendered fragments) can be kept
 * with it.
 *
 * What is cached is what a decode of intact bytes gave, with its data and metadata copied out of the block
 * (a view would keep a whole 64 KiB block alive after the block cache let it go).
 *
 * Invalidation: the bytes at a log position never change while the block cache keeps that file's blocks,
 * and every change of what a position holds (a truncation, the recovery after a failed write, a chunk
 * replaced by a scavenge or installed from the leader, a damaged read retried from disk) drops the file's
 * blocks (`BlockCache.evictFile`). So the whole record cache is dropped whenever the block cache has
 * evicted a file since it was last looked at, and a decode that began before such an eviction is not
 * stored. A record a scavenge removed is never looked up here: its position no longer maps to bytes, which
 * the log checks first.
 */
import { GenerationalCache } from "../cache/GenerationalCache.js"
import type { BlockCache } from "./BlockCache.js"
import { RecordKind, type LogRecord } from "./records.js"

/** Roughly what a decoded record costs beyond its variable fields (object, strings' headers, the map slot). */
const RECORD_OVERHEAD = 160

const weigh = (record: LogRecord): number =>
  record.kind === RecordKind.Event
    ? RECORD_OVERHEAD +
      record.data.length +
      record.metadata.length +
      2 * (record.stream.length + record.eventType.length + record.eventId.length)
    : RECORD_OVERHEAD

/** An event's data and metadata in one buffer of its own (two views into it). */
const detached = (record: LogRecord): LogRecord => {
  if (record.kind !== RecordKind.Event) return record
  const d = record.data.length
  const m = record.metadata.length
  if (d + m === 0) return record
  const own = Buffer.allocUnsafe(d + m)
  record.data.copy(own, 0)
  record.metadata.copy(own, d)
  return { ...record, data: own.subarray(0, d), metadata: own.subarray(d, d + m) }
}

export class RecordCache {
  private readonly records: GenerationalCache<number, LogRecord>
  private seenEvictions: number

  constructor(
    readonly capacityBytes: number,
    private readonly blocks: BlockCache
  ) {
    this.records = new GenerationalCache(capacityBytes, weigh)
    this.seenEvictions = blocks.evictions
  }

  /** What to pass to `store` for bytes read from now on. */
  get epoch(): number {
    return this.blocks.evictions
  }

  get(position: number): LogRecord | undefined {
    if (this.seenEvictions !== this.blocks.evictions) this.clear()
    return this.records.get(position)
  }

  /**
   * Keeps a record decoded from intact bytes and returns the object to hand out (the cached copy, or the
   * record itself when it is not kept). `epoch`: `this.epoch` taken before its bytes were read.
   */
  store(record: LogRecord, epoch: number): LogRecord {
    if (this.capacityBytes === 0 || epoch !== this.blocks.evictions) return record
    if (this.seenEvictions !== epoch) this.clear()
    const kept = detached(record)
    this.records.set(record.logPosition, kept)
    return kept
  }

  get residentBytes(): number {
    return this.records.weight
  }

  private clear(): void {
    this.records.clear()
    this.seenEvictions = this.blocks.evictions
  }
}
