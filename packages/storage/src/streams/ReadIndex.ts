/**
 * ReadIndex: answers stream questions from the table index plus the log — a stream's last event number,
 * its metadata, one event, a range of events — and applies the stream read rules ($maxCount,
 * $tb, $maxAge, soft and hard deletion).
 *
 * Index hits from on-disk tables may belong to another stream with the same 64-bit hash, so every such
 * hit is checked by reading its record and comparing the stream name (memtable hits are exact).
 * Only records below `committed()` (durable and indexed) are ever read.
 *
 * Two bounded caches (last event number, parsed metadata) are kept current by `applyCommitted`, which
 * the writer calls for every durable batch, so the writer's expected-version checks rarely touch disk.
 */
import { Effect } from "effect"
import { assert, mapErrorNow, runNow, type Steps } from "@vellum/platform"
import { NotCached, type TransactionLog, type ReadError } from "../log/TransactionLog.js"
import { GenerationalCache } from "../cache/GenerationalCache.js"
import { EventFlags, RecordKind, type EventRecord, type LogRecord } from "../log/records.js"
import type { TableIndex } from "../tableindex/TableIndex.js"
import type { IndexCorrupt } from "../tableindex/Entry.js"
import { StorageCorrupt } from "../errors.js"
import {
  EmptyMetadata,
  isExpired,
  isSoftDeleted,
  parseMetadata,
  readLowerBound,
  type StreamMetadata
} from "./metadata.js"
import { DeletedStreamNumber, isMetastream, metastreamOf, originalStreamOf } from "./names.js"

/** A page of a stream read, over events of type E (records here; resolved events in EventStore). */
export interface StreamPage<E> {
  readonly _tag: "Success"
  readonly events: ReadonlyArray<E>
  readonly nextEventNumber: number
  readonly lastEventNumber: number
  readonly isEndOfStream: boolean
  readonly metadata: StreamMetadata
}

/** What a stream read found, before paging (mirrors the reference's IndexReadStreamResult). */
export type StreamReadResult =
  | StreamPage<EventRecord>
  | { readonly _tag: "NoStream"; readonly lastEventNumber: number; readonly metadata: StreamMetadata }
  | { readonly _tag: "StreamDeleted" }

export type EventReadResult<E = EventRecord> =
  | { readonly _tag: "Success"; readonly event: E }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "NoStream" }
  | { readonly _tag: "StreamDeleted" }

export interface MetaInfo {
  readonly metadata: StreamMetadata
  /** Last event number of `$$stream` (-1 when it has none). */
  readonly metaLastEventNumber: number
  /** The raw bytes of the last metadata event (for soft-undelete rewrites). */
  readonly raw: Buffer | undefined
}

const EmptyMeta: MetaInfo = { metadata: EmptyMetadata, metaLastEventNumber: -1, raw: undefined }

/** Metastreams behave as if `$maxCount` were 1 (ESConsts.MetaStreamMaxCount). */
const MetastreamMetadata: StreamMetadata = { maxCount: 1 }

/** Index damage is damage in the store; an answer from memory stays settled (runNow). */
const fromIndexError = <A>(effect: Effect.Effect<A, IndexCorrupt | ReadError>): Effect.Effect<A, ReadError> =>
  mapErrorNow(effect, (e) =>
    e._tag === "IndexCorrupt"
      ? new StorageCorrupt({ message: `index damaged: ${e.message}`, path: e.path, cause: e })
      : e
  )

/** A read in plain code over lookups that answer now or read (platform runNow.ts). */
type ReadSteps<A> = Steps<A, ReadError>

export interface ReadIndexConfig {
  readonly streamInfoCacheCapacity: number
}

export class ReadIndex {
  /**
   * Counts the batches applied. A read that fills a cache from the index may take a disk read, while a commit
   * changes what it is reading: its answer is cached only when no batch came in between, so a stale answer never
   * overwrites the newer one the commit cached (a last event number or metadata going back).
   */
  private batchesApplied = 0
  private readonly lastNumbers: GenerationalCache<string, number>
  private readonly metas: GenerationalCache<string, MetaInfo>
  private committedPosition: number

  constructor(
    private readonly log: TransactionLog,
    readonly index: TableIndex,
    config: ReadIndexConfig,
    committed: number
  ) {
    this.lastNumbers = new GenerationalCache(config.streamInfoCacheCapacity)
    this.metas = new GenerationalCache(config.streamInfoCacheCapacity)
    this.committedPosition = committed
  }

  /** Every record below this position is durable and indexed; nothing at or above it is visible. */
  committed(): number {
    return this.committedPosition
  }

  /** Indexes the records of a durable batch and makes them visible. Plain and synchronous. */
  applyCommitted(records: ReadonlyArray<LogRecord>, endPosition: number): void {
    // Readers trust `committed()`: moving it back would hide acknowledged events, moving it past the
    // durable log would show records a crash can still take away.
    assert(endPosition >= this.committedPosition, "ReadIndex: the committed position only grows")
    assert(endPosition <= this.log.writerPosition(), "ReadIndex: the committed position never passes the durable log")
    const entries: Array<{ stream: string; eventNumber: number; position: number }> = []
    for (const record of records) {
      const entry = indexEntryOf(record)
      if (entry === undefined) continue
      entries.push(entry)
      this.lastNumbers.set(entry.stream, entry.eventNumber)
      if (isMetastream(entry.stream) && record.kind === RecordKind.Event) {
        const original = originalStreamOf(entry.stream)
        this.metas.set(original, {
          metadata: parseMetadata(record.data, (record.flags & EventFlags.Json) !== 0),
          metaLastEventNumber: entry.eventNumber,
          raw: record.data
        })
      }
    }
    this.index.addBatch(entries, endPosition)
    this.committedPosition = endPosition
    this.batchesApplied++
  }

  readRecord(position: number): Effect.Effect<LogRecord | undefined, ReadError> {
    return this.log.readRecord(position, this.committedPosition)
  }

  /** The record behind an index entry if it is an event of `stream` (no Effect when its block is cached). */
  private eventFor(stream: string, position: number): Effect.Effect<EventRecord | undefined, ReadError> {
    const cached = this.log.readRecordCached(position, this.committedPosition)
    if (cached !== NotCached) return Effect.succeed(ofStream(cached, stream))
    return Effect.map(this.readRecord(position), (record) => ofStream(record, stream))
  }

  /** The cached last event number of a stream, without reading (undefined when not cached). */
  cachedLastEventNumber(stream: string): number | undefined {
    return this.lastNumbers.get(stream)
  }

  /** The cached metadata of a stream, without reading (undefined when not cached). */
  cachedMetaInfo(stream: string): MetaInfo | undefined {
    return this.metas.get(stream)
  }

  /** -1 when the stream has no events; DeletedStreamNumber when it (or, for `$$S`, S) is hard-deleted. */
  lastEventNumber(stream: string): Effect.Effect<number, ReadError> {
    return Effect.suspend(() => runNow(this.lastEventNumberSteps(stream)))
  }

  *lastEventNumberSteps(stream: string): ReadSteps<number> {
    if (isMetastream(stream)) {
      const original = yield* this.lastEventNumberSteps(originalStreamOf(stream))
      if (original === DeletedStreamNumber) return DeletedStreamNumber
    }
    const cached = this.lastNumbers.get(stream)
    if (cached !== undefined) return cached
    const before = this.batchesApplied
    const found = yield* this.findLastSteps(stream)
    if (this.batchesApplied === before) this.lastNumbers.set(stream, found)
    return found
  }

  private *findLastSteps(stream: string): ReadSteps<number> {
    // Most streams answer from the first candidate; on hash collisions walk further (unbounded, unlike
    // the reference's limit of 100, so a colliding stream never reads as "invalid").
    let candidates = yield* fromIndexError(this.index.latestNow(stream, 8))
    for (let round = 0; ; round++) {
      for (const entry of candidates) {
        if (entry.exact) return entry.eventNumber
        const event = yield* this.eventFor(stream, entry.position)
        if (event !== undefined) return entry.eventNumber
      }
      if (round > 0 || candidates.length < 8) return -1
      candidates = [...(yield* fromIndexError(this.index.rangeNow(stream, 0, DeletedStreamNumber)))].reverse()
    }
  }

  /** The stream's metadata, from the last event of `$$stream`. */
  metaInfo(stream: string): Effect.Effect<MetaInfo, ReadError> {
    return Effect.suspend(() => runNow(this.metaInfoSteps(stream)))
  }

  *metaInfoSteps(stream: string): ReadSteps<MetaInfo> {
    const cached = this.metas.get(stream)
    if (cached !== undefined) return cached
    const before = this.batchesApplied
    const meta = metastreamOf(stream)
    const last = yield* this.findLastSteps(meta)
    let info = EmptyMeta
    if (last >= 0) {
      const event = yield* this.eventAtSteps(meta, last)
      info =
        event === undefined
          ? { metadata: EmptyMetadata, metaLastEventNumber: last, raw: undefined }
          : {
              metadata: parseMetadata(event.data, (event.flags & EventFlags.Json) !== 0),
              metaLastEventNumber: last,
              raw: event.data
            }
    }
    if (this.batchesApplied === before) this.metas.set(stream, info)
    return info
  }

  /** Metadata that governs reads of a stream (metastreams: `$maxCount` 1). */
  effectiveMetadata(stream: string): Effect.Effect<StreamMetadata, ReadError> {
    return Effect.suspend(() => runNow(this.effectiveMetadataSteps(stream)))
  }

  private *effectiveMetadataSteps(stream: string): ReadSteps<StreamMetadata> {
    return isMetastream(stream) ? MetastreamMetadata : (yield* this.metaInfoSteps(stream)).metadata
  }

  /** The event numbered `n` of a stream, ignoring read rules (lowest position wins on duplicates). */
  eventAt(stream: string, n: number): Effect.Effect<EventRecord | undefined, ReadError> {
    return Effect.suspend(() => runNow(this.eventAtSteps(stream, n)))
  }

  *eventAtSteps(stream: string, n: number): ReadSteps<EventRecord | undefined> {
    const entries = yield* fromIndexError(this.index.rangeNow(stream, n, n))
    for (const entry of entries) {
      const event = yield* this.eventFor(stream, entry.position)
      if (event !== undefined) return event
    }
    return undefined
  }

  /** Events of a stream numbered from..to, ascending, deduplicated, ignoring read rules. */
  eventsBetween(stream: string, from: number, to: number): Effect.Effect<Array<EventRecord>, ReadError> {
    return Effect.suspend(() => runNow(this.eventsBetweenSteps(stream, from, to)))
  }

  private *eventsBetweenSteps(stream: string, from: number, to: number): ReadSteps<Array<EventRecord>> {
    if (to < from) return []
    const entries = yield* fromIndexError(this.index.rangeNow(stream, from, to))
    const out: Array<EventRecord> = []
    let lastNumber = -1
    for (const entry of entries) {
      if (entry.eventNumber === lastNumber) continue // a lower position of this number was kept already
      // Most records come from cached blocks: decode them in this loop, and pay an Effect only on a miss.
      const cached = this.log.readRecordCached(entry.position, this.committedPosition)
      const event = cached !== NotCached ? ofStream(cached, stream) : yield* this.eventFor(stream, entry.position)
      if (event === undefined) continue
      out.push(event)
      lastNumber = entry.eventNumber
    }
    return out
  }

  /**
   * The index entries of a stream that still have their record, ascending by event number, one per number
   * (lowest position wins), ignoring read rules: what the scavenger's calculation walks. Memtable hits are
   * exact; a table hit may belong to another stream with the same hash, so it is checked against its record
   * (a record a scavenge removed reads as absent, so its entry is left out too).
   */
  liveEntries(
    stream: string
  ): Effect.Effect<Array<{ readonly eventNumber: number; readonly position: number }>, ReadError> {
    return Effect.suspend(() => runNow(this.liveEntriesSteps(stream)))
  }

  private *liveEntriesSteps(
    stream: string
  ): ReadSteps<Array<{ readonly eventNumber: number; readonly position: number }>> {
    const entries = yield* fromIndexError(this.index.rangeNow(stream, 0, DeletedStreamNumber))
    const out: Array<{ eventNumber: number; position: number }> = []
    let lastNumber = -1
    for (const entry of entries) {
      if (entry.eventNumber === lastNumber) continue
      if (!entry.exact) {
        const cached = this.log.readRecordCached(entry.position, this.committedPosition)
        const event = cached !== NotCached ? ofStream(cached, stream) : yield* this.eventFor(stream, entry.position)
        if (event === undefined) continue
      }
      out.push({ eventNumber: entry.eventNumber, position: entry.position })
      lastNumber = entry.eventNumber
    }
    return out
  }

  readForward(
    stream: string,
    from: number,
    maxCount: number,
    nowMicros: number
  ): Effect.Effect<StreamReadResult, ReadError> {
    return Effect.suspend(() => runNow(this.readForwardSteps(stream, from, maxCount, nowMicros)))
  }

  /** The read as steps, for plain-code readers that run them (`runNow`) or go on from them. */
  *readForwardSteps(stream: string, from: number, maxCount: number, nowMicros: number): ReadSteps<StreamReadResult> {
    const head = yield* this.streamHeadSteps(stream)
    if (head._tag !== "Open") return head.result
    const { last, metadata } = head
    const end = from + maxCount - 1
    const min = readLowerBound(metadata, last)
    if (end < min)
      return {
        _tag: "Success",
        events: [],
        nextEventNumber: min,
        lastEventNumber: last,
        isEndOfStream: false,
        metadata
      }
    const start = Math.max(from, min)
    const all = yield* this.eventsBetweenSteps(stream, start, Math.min(end, last))
    const events =
      metadata.maxAge === undefined ? all : all.filter((e) => !isExpired(metadata, e.createdMicros, nowMicros))
    if (events.length === 0 && metadata.maxAge !== undefined && start <= last) {
      // Nothing live in this window: point the reader at the first live event (expired ones are a prefix).
      const firstLive = yield* this.firstLiveAtOrAfterSteps(stream, start, last, metadata, nowMicros)
      return firstLive === undefined
        ? {
            _tag: "Success",
            events: [],
            nextEventNumber: last + 1,
            lastEventNumber: last,
            isEndOfStream: true,
            metadata
          }
        : {
            _tag: "Success",
            events: [],
            nextEventNumber: firstLive,
            lastEventNumber: last,
            isEndOfStream: firstLive > last,
            metadata
          }
    }
    const nextEventNumber = events.length > 0 ? events[events.length - 1]!.eventNumber + 1 : Math.min(end + 1, last + 1)
    return { _tag: "Success", events, nextEventNumber, lastEventNumber: last, isEndOfStream: end >= last, metadata }
  }

  /** `from` < 0 reads from the end. Events come newest first. */
  readBackward(
    stream: string,
    from: number,
    maxCount: number,
    nowMicros: number
  ): Effect.Effect<StreamReadResult, ReadError> {
    return Effect.suspend(() => runNow(this.readBackwardSteps(stream, from, maxCount, nowMicros)))
  }

  *readBackwardSteps(stream: string, from: number, maxCount: number, nowMicros: number): ReadSteps<StreamReadResult> {
    const head = yield* this.streamHeadSteps(stream)
    if (head._tag !== "Open") return head.result
    const { last, metadata } = head
    const end = from < 0 ? last : from
    let start = Math.max(0, end - maxCount + 1)
    const min = readLowerBound(metadata, last)
    if (end < min)
      return {
        _tag: "Success",
        events: [],
        nextEventNumber: -1,
        lastEventNumber: last,
        isEndOfStream: true,
        metadata
      }
    let endOfStream = false
    if (start <= min) {
      endOfStream = true
      start = min
    }
    const all = (yield* this.eventsBetweenSteps(stream, start, Math.min(end, last))).reverse()
    const events =
      metadata.maxAge === undefined ? all : all.filter((e) => !isExpired(metadata, e.createdMicros, nowMicros))
    endOfStream =
      endOfStream ||
      start === 0 ||
      (start <= last && (events.length === 0 || events[events.length - 1]!.eventNumber !== start))
    const nextEventNumber = endOfStream ? -1 : Math.min(start - 1, last)
    return { _tag: "Success", events, nextEventNumber, lastEventNumber: last, isEndOfStream: endOfStream, metadata }
  }

  /** One event with the read rules applied; n = -1 means the last event. */
  readEvent(stream: string, n: number, nowMicros: number): Effect.Effect<EventReadResult, ReadError> {
    return Effect.suspend(() => runNow(this.readEventSteps(stream, n, nowMicros)))
  }

  *readEventSteps(stream: string, n: number, nowMicros: number): ReadSteps<EventReadResult> {
    const head = yield* this.streamHeadSteps(stream)
    if (head._tag !== "Open")
      return head.result._tag === "StreamDeleted" ? { _tag: "StreamDeleted" } : { _tag: "NoStream" }
    const { last, metadata } = head
    const number = n < 0 ? last : n
    if (number < readLowerBound(metadata, last) || number > last) return { _tag: "NotFound" }
    const event = yield* this.eventAtSteps(stream, number)
    if (event === undefined || isExpired(metadata, event.createdMicros, nowMicros)) return { _tag: "NotFound" }
    return { _tag: "Success", event }
  }

  private *streamHeadSteps(
    stream: string
  ): ReadSteps<
    | { readonly _tag: "Open"; readonly last: number; readonly metadata: StreamMetadata }
    | { readonly _tag: "Closed"; readonly result: StreamReadResult }
  > {
    const last = yield* this.lastEventNumberSteps(stream)
    if (last === DeletedStreamNumber) return { _tag: "Closed", result: { _tag: "StreamDeleted" } } as const
    const metadata = yield* this.effectiveMetadataSteps(stream)
    if (last < 0 || isSoftDeleted(metadata)) {
      return { _tag: "Closed", result: { _tag: "NoStream", lastEventNumber: last, metadata } } as const
    }
    return { _tag: "Open", last, metadata } as const
  }

  /** Binary search for the first unexpired event number in [from, last] (events age in number order). */
  private *firstLiveAtOrAfterSteps(
    stream: string,
    from: number,
    last: number,
    metadata: StreamMetadata,
    nowMicros: number
  ): ReadSteps<number | undefined> {
    let lo = from
    let hi = last
    let found: number | undefined
    while (lo <= hi) {
      const mid = lo + Math.floor((hi - lo) / 2)
      const event = yield* this.eventAtSteps(stream, mid)
      if (event !== undefined && !isExpired(metadata, event.createdMicros, nowMicros)) {
        found = mid
        hi = mid - 1
      } else lo = mid + 1
    }
    return found
  }
}

/** The record as an event of `stream`, or undefined when it is not one (a collision, or gone). */
const ofStream = (record: LogRecord | undefined, stream: string): EventRecord | undefined => {
  const view = record === undefined ? undefined : asStreamEvent(record)
  return view !== undefined && view.stream === stream ? view : undefined
}

/** The index entry of a record, if it is indexed: events, tombstones, epochs and scavenge points. */
export const indexEntryOf = (
  record: LogRecord
): { stream: string; eventNumber: number; position: number } | undefined => {
  const view = asStreamEvent(record)
  return view === undefined
    ? undefined
    : { stream: view.stream, eventNumber: view.eventNumber, position: record.logPosition }
}

/**
 * A record as an event of a stream: events as they are; an epoch as an event of `$epoch-information`
 * and a scavenge point as an event of `$scavengePoints`, with JSON bodies; commits are not events.
 */
export const asStreamEvent = (record: LogRecord): EventRecord | undefined => {
  switch (record.kind) {
    case RecordKind.Event:
      return record
    case RecordKind.Epoch:
      return {
        kind: RecordKind.Event,
        logPosition: record.logPosition,
        flags: EventFlags.Json,
        eventNumber: record.epochNumber,
        createdMicros: record.timeMicros,
        eventId: record.epochId,
        stream: "$epoch-information",
        eventType: "$epoch-information",
        data: Buffer.from(
          JSON.stringify({
            epochPosition: record.logPosition,
            epochNumber: record.epochNumber,
            epochId: record.epochId,
            prevEpochPosition: record.prevEpochPosition,
            leaderInstanceId: record.leaderInstanceId,
            timeStamp: new Date(Math.floor(record.timeMicros / 1000)).toISOString()
          })
        ),
        metadata: Buffer.alloc(0)
      }
    case RecordKind.ScavengePoint:
      return {
        kind: RecordKind.Event,
        logPosition: record.logPosition,
        flags: EventFlags.Json,
        eventNumber: record.number,
        createdMicros: record.timeMicros,
        eventId: record.eventId,
        stream: "$scavengePoints",
        eventType: "$scavengePoint",
        data: Buffer.from(
          JSON.stringify({
            scavengePointNumber: record.number,
            effectiveNow: new Date(Math.floor(record.effectiveNowMicros / 1000)).toISOString(),
            threshold: record.threshold
          })
        ),
        metadata: Buffer.alloc(0)
      }
    case RecordKind.Commit:
      return undefined
  }
}
