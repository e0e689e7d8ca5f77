/**
 * EventStore: the database of one node as one Effect service — appends with expected versions, deletes,
 * metadata, stream and `$all` reads, link resolution, scavenge points, and a notification of new commits
 * that long-polling, subscriptions, projections, scavenging and replication observe.
 *
 * Built from the transaction log (log/), the table index (tableindex/) and the stream rules (streams/).
 * Opening recovers the log, opens the index (rebuilding it from the log when it is damaged or ahead of
 * the log), replays the log tail the index has not persisted, starts the writer fiber, and writes an
 * epoch record (every start of a single node begins a new epoch).
 *
 * A clustered store (`clustered: true`) indexes the log only up to its replication checkpoint (what it
 * knew was committed; the rest is the uncommitted tail), writes no epoch, and takes client writes only
 * while the cluster has it lead: its `replica` (replica/ClusteredReplica.ts) is what replication drives.
 */
import { Context, Effect, Exit, Layer, PubSub, type Clock, type Scope } from "effect"
import { Disk, join, lockScoped, mapNow, runNow, type DiskError, type Steps } from "@vellum/platform"
import type { IndexCorrupt } from "./tableindex/Entry.js"
import { InvalidRequest, StorageCorrupt, StorageLocked } from "./errors.js"
import {
  NotCached,
  openTransactionLog,
  type LogConfig,
  type ReadError,
  type TransactionLog
} from "./log/TransactionLog.js"
import { completeChunkAfterScavengePoint } from "./log/scavengePointChunk.js"
import { openCheckpoint } from "./log/Checkpoint.js"
import { Leadership } from "./replica/Leadership.js"
import { makeLogCommitter } from "./replica/commitFromLog.js"
import { makeReplicaLog } from "./replica/ClusteredReplica.js"
import { ReceivedRecords } from "./replica/ReceivedRecords.js"
import type { ReplicaLog } from "./replica/ReplicaLog.js"
import type { EventRecord, LogRecord } from "./log/records.js"
import * as TableIndex from "./tableindex/TableIndex.js"
import type { HashFn } from "./tableindex/StreamHash.js"
import { isUuid, normalizeUuid } from "./codec/bytes.js"
import { EventIdCache } from "./cache/EventIdCache.js"
import { RecentEventIds } from "./cache/RecentEventIds.js"
import {
  DeletedStreamNumber,
  EpochInformationStream,
  EventTypes,
  invalidStreamName,
  isMetastream,
  metastreamOf
} from "./streams/names.js"
import { parseMetadata, type StreamMetadata } from "./streams/metadata.js"
import {
  ReadIndex,
  asStreamEvent,
  type EventReadResult,
  type StreamPage,
  type StreamReadResult
} from "./streams/ReadIndex.js"
import { makeLinkResolver, type LinkAccess, type ResolvedEvent } from "./streams/links.js"
import {
  makeWriter,
  randomUuid,
  type AppendResult,
  type ProposedEvent,
  type WriteCommand,
  type WriteError,
  type WriteResult,
  type WriterStats,
  type WritesRefused
} from "./streams/Writer.js"

export interface StorageConfig {
  readonly dir: string
  readonly chunkSize: number
  readonly preallocateChunks: boolean
  readonly verifyChunksOnOpen: boolean
  readonly readCacheBytes: number
  /**
   * How far acknowledged data may lie past the synced writer checkpoint (the log's default when absent; see
   * LogConfig.checkpointLagBytes). The simulator makes it small so the lazy checkpoint is synced often.
   */
  readonly checkpointLagBytes?: number
  readonly memtableMaxEntries: number
  readonly indexTablesPerLevel: number
  readonly verifyIndexOnOpen: boolean
  /** Overrides the 64-bit stream hash (tests and the simulator force collisions with a weak one). */
  readonly streamHash?: HashFn
  readonly maxEventSize: number
  readonly maxBatchCommands: number
  /** A write not durable within this time is answered WriteTimeout (outcome unknown). */
  readonly writeTimeoutMillis: number
  readonly eventIdCacheCapacity: number
  readonly streamInfoCacheCapacity: number
  /** Events per read, at most (the reference's 4096). */
  readonly maxReadCount: number
  /** A node of a cluster: writes commit once a quorum holds them (see replica/ReplicaLog.ts). */
  readonly clustered?: boolean
  /** Clustered only: a write not committed within this time is answered CommitTimeout (absent: the write timeout). */
  readonly commitTimeoutMillis?: number
}

export const defaultStorageConfig = (dir: string): StorageConfig => ({
  dir,
  chunkSize: 256 * 1024 * 1024,
  preallocateChunks: true,
  verifyChunksOnOpen: false,
  readCacheBytes: 512 * 1024 * 1024,
  memtableMaxEntries: 524_288,
  indexTablesPerLevel: 2,
  verifyIndexOnOpen: false,
  maxEventSize: 16 * 1024 * 1024 - 10_000,
  maxBatchCommands: 1024,
  writeTimeoutMillis: 10_000,
  eventIdCacheCapacity: 200_000,
  streamInfoCacheCapacity: 100_000,
  maxReadCount: 4096
})

/** The record that sits in the stream being read: the link if there is one, else the event. */
export const originalEvent = (resolved: ResolvedEvent): EventRecord => (resolved.link ?? resolved.event)!

export type StreamRead =
  | StreamPage<ResolvedEvent>
  | { readonly _tag: "NoStream"; readonly lastEventNumber: number }
  | { readonly _tag: "StreamDeleted" }

export type EventRead = EventReadResult<ResolvedEvent>

export interface AllRead {
  /** Events in log order (forward) or newest first (backward). */
  readonly events: ReadonlyArray<ResolvedEvent>
  /** Where the next page in the same direction starts. */
  readonly nextPosition: number
  readonly isEnd: boolean
}

export interface CommitNotice {
  /** Log position of the first record of the batch. */
  readonly firstPosition: number
  /** Position just past the batch: everything below it is durable, indexed and readable. */
  readonly endPosition: number
  /** Streams that received events (a stream once per batch). */
  readonly streams: ReadonlyArray<string>
}

export interface MetadataRead {
  readonly _tag: "Success" | "NoStream" | "StreamDeleted"
  readonly metadata: StreamMetadata
  /** Last event number of `$$stream`, -1 when it has none. */
  readonly metaLastEventNumber: number
  /** Raw bytes of the last metadata event (undefined when none). */
  readonly raw: Buffer | undefined
  readonly isJson: boolean
}

/**
 * Why an append or a read failed. A DiskError is a disk read that failed (transient: the same request may
 * succeed again); StorageCorrupt is damage found in bytes that were read. The two are never merged.
 */
export type AppendError = WriteError
export type ReadFailure = StorageCorrupt | InvalidRequest | DiskError

export interface ReadOptions {
  /** Resolve `$>` links, showing only targets this reader may read (see streams/links.ts); absent: do not. */
  readonly resolveLinks?: LinkAccess
}

export interface EventStoreService {
  readonly append: (
    stream: string,
    expectedVersion: number,
    events: ReadonlyArray<ProposedEvent>
  ) => Effect.Effect<AppendResult, AppendError>
  /**
   * `append` without a fiber: `answer` is called once with the outcome, an Effect that is already settled
   * (`Effect.succeed`/`Effect.fail`, see `Exit.isExit`) except for a failure that must log first. Validation
   * failures are answered before it returns. The hot path of HTTP appends; `append` is this in an
   * `Effect.async`. Absent on a store that must run Effects around its writes (the cluster's forwarding store).
   */
  readonly appendThen?: (
    stream: string,
    expectedVersion: number,
    events: ReadonlyArray<ProposedEvent>,
    answer: (outcome: Effect.Effect<AppendResult, AppendError>) => void
  ) => void
  readonly deleteStream: (
    stream: string,
    expectedVersion: number,
    hard: boolean
  ) => Effect.Effect<{ readonly position: number }, AppendError>
  /** Writes `$metadata` to `$$stream` (JSON object or raw bytes). */
  readonly setStreamMetadata: (
    stream: string,
    expectedVersion: number,
    metadata: Uint8Array,
    options?: { readonly eventId?: string; readonly isJson?: boolean }
  ) => Effect.Effect<AppendResult, AppendError>
  readonly getStreamMetadata: (stream: string) => Effect.Effect<MetadataRead, ReadFailure>
  readonly readStreamForward: (
    stream: string,
    from: number,
    maxCount: number,
    options?: ReadOptions
  ) => Effect.Effect<StreamRead, ReadFailure>
  /** `from` = -1 reads from the end. */
  readonly readStreamBackward: (
    stream: string,
    from: number,
    maxCount: number,
    options?: ReadOptions
  ) => Effect.Effect<StreamRead, ReadFailure>
  /** `eventNumber` = -1 reads the last event. */
  readonly readEvent: (
    stream: string,
    eventNumber: number,
    options?: ReadOptions
  ) => Effect.Effect<EventRead, ReadFailure>
  /** Events with log position ≥ `position`, in log order (includes what stream reads hide). */
  readonly readAllForward: (
    position: number,
    maxCount: number,
    options?: ReadOptions
  ) => Effect.Effect<AllRead, ReadFailure>
  /** Events with log position < `position` (-1: from the end), newest first. */
  readonly readAllBackward: (
    position: number,
    maxCount: number,
    options?: ReadOptions
  ) => Effect.Effect<AllRead, ReadFailure>
  /**
   * The stream, event and `$all` reads begun when called, for plain-code readers (HTTP reads without a fiber):
   * an `Exit` when every index lookup, record and link decision was in memory, else the Effect that finishes
   * the same read (platform runNow.ts). Absent on a store whose reads must run Effects.
   */
  readonly readNow?: ReadsNow
  readonly lastEventNumber: (stream: string) => Effect.Effect<number, ReadFailure>
  /** Writes a scavenge point (completing the active chunk); returns its number and position. */
  readonly writeScavengePoint: (
    effectiveNowMicros: number,
    threshold: number
  ) => Effect.Effect<{ readonly number: number; readonly position: number }, AppendError>
  /** Everything below this position is durable, indexed and readable. */
  readonly committedPosition: Effect.Effect<number>
  /** A notice per durable batch (subscribe in a scope): for consumers that wait for commits (long polls). */
  readonly commits: PubSub.PubSub<CommitNotice>
  /**
   * Calls `listener` with the notice of every durable batch, synchronously in the writer's round, for the
   * scope's lifetime: for bookkeeping that must follow every commit and never waits (cache invalidation).
   * A PubSub subscriber costs a fiber wake-up and a Deferred per batch on the write path; this costs a call.
   * The listener must not throw (a throw is a defect of the writer's round).
   */
  readonly onCommit: (listener: (notice: CommitNotice) => void) => Effect.Effect<void, never, Scope.Scope>
  readonly config: StorageConfig
  readonly stats: () => EventStoreStats
  /** Flushes the index memtable to tables (used on graceful shutdown so restarts replay little). */
  readonly flushIndex: Effect.Effect<void, StorageCorrupt | DiskError>
  /** The engine's parts, for the scavenger (which rewrites chunks and index tables); not for request handlers. */
  readonly engine: StorageEngine
  /** What replication drives: defined for a clustered store, undefined for a single node. */
  readonly replica: ReplicaLog | undefined
  /**
   * Where a cluster member forwards its own services' writes to the leader, this is the same store without
   * forwarding: on a node that does not lead, its writes are refused with NotLeader. For writers that must
   * only ever write as the leader they believe they are (auto-scavenge). Absent where writes are not forwarded.
   */
  readonly leaderOnly?: EventStoreService
}

/** The reads of `EventStoreService` as of the clock's time, begun when called (`EventStoreService.readNow`). */
export interface ReadsNow {
  /** `committedPosition`'s value. */
  readonly committed: () => number
  readonly metadata: (stream: string) => Effect.Effect<MetadataRead, ReadFailure>
  readonly streamForward: StreamPageNow
  readonly streamBackward: StreamPageNow
  readonly event: (
    stream: string,
    eventNumber: number,
    options: ReadOptions | undefined,
    clock: Clock.Clock
  ) => Effect.Effect<EventRead, ReadFailure>
  readonly allForward: AllPageNow
  readonly allBackward: AllPageNow
}

type StreamPageNow = (
  stream: string,
  from: number,
  maxCount: number,
  options: ReadOptions | undefined,
  clock: Clock.Clock
) => Effect.Effect<StreamRead, ReadFailure>

type AllPageNow = (
  position: number,
  maxCount: number,
  options: ReadOptions | undefined,
  clock: Clock.Clock
) => Effect.Effect<AllRead, ReadFailure>

export interface StorageEngine {
  readonly log: TransactionLog
  readonly index: TableIndex.TableIndex
  readonly readIndex: ReadIndex
}

export interface EventStoreStats {
  readonly writerPosition: number
  readonly committedPosition: number
  readonly chunks: number
  readonly index: TableIndex.TableIndexStats
  readonly readCache: { readonly hits: number; readonly misses: number; readonly residentBytes: number }
  /** Events served by reads (stream pages, single events, `$all`), and their data and metadata bytes. */
  readonly reads: { readonly events: number; readonly bytes: number }
  readonly writer: Readonly<WriterStats> & { readonly queued: number }
  /** Set from a failed log write until a write succeeds again (the node is degraded: writes are, or may be, refused). */
  readonly writesRefused?: WritesRefused | undefined
}

export class EventStore extends Context.Tag("@vellum/storage/EventStore")<EventStore, EventStoreService>() {
  /** The EventStore layer for a configuration (needs Disk; its fibers live as long as the layer). */
  static readonly layer = (
    config: StorageConfig
  ): Layer.Layer<EventStore, StorageCorrupt | StorageLocked | DiskError, Disk> => Layer.scoped(EventStore, make(config))
}

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A damaged index is damage in the store; a disk error stays what it is (it may pass). */
const indexCorruptAsStorage = (e: StorageCorrupt | DiskError | IndexCorrupt): StorageCorrupt | DiskError =>
  e._tag === "IndexCorrupt" ? new StorageCorrupt({ message: e.message, path: e.path, cause: e }) : e

/**
 * Takes the data directory's lock for the scope (created if missing): two stores writing one log would
 * damage it, so a second open fails with StorageLocked until the first closes or its process dies.
 */
const lockDataDir = (dir: string): Effect.Effect<void, DiskError | StorageLocked, Disk | Scope.Scope> =>
  Effect.flatMap(Disk, (disk) => Effect.zipRight(disk.mkdir(dir), lockScoped(dir))).pipe(
    Effect.mapError((e) =>
      e.reason === "Locked"
        ? new StorageLocked({
            message: `the data directory ${dir} is in use by another node (${e.message})`,
            path: e.path,
            cause: e
          })
        : e
    ),
    Effect.asVoid
  )

/** Opens the store; the writer and the index's background work live in the given scope. */
export const make = (
  config: StorageConfig
): Effect.Effect<EventStoreService, StorageCorrupt | StorageLocked | DiskError, Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const disk = yield* Disk
    // Released last: the finalizers below (log close, writer) run before it.
    yield* lockDataDir(config.dir)
    const logConfig: LogConfig = {
      dir: config.dir,
      chunkSize: config.chunkSize,
      preallocate: config.preallocateChunks,
      verifyOnOpen: config.verifyChunksOnOpen,
      cacheBytes: config.readCacheBytes,
      ...(config.checkpointLagBytes !== undefined ? { checkpointLagBytes: config.checkpointLagBytes } : {})
    }
    const log = yield* Effect.mapError(openTransactionLog(logConfig, randomUuid), indexCorruptAsStorage)
    yield* Effect.addFinalizer(() => log.close)
    yield* Effect.mapError(
      completeChunkAfterScavengePoint(log),
      (e) => new StorageCorrupt({ message: `could not complete the chunk of the last scavenge point: ${e.message}` })
    )
    const indexDir = join(config.dir, "index")
    const indexConfig: TableIndex.TableIndexConfig = {
      dir: indexDir,
      memtableMaxEntries: config.memtableMaxEntries,
      tablesPerLevel: config.indexTablesPerLevel,
      verifyOnOpen: config.verifyIndexOnOpen,
      ...(config.streamHash !== undefined ? { hash: config.streamHash } : {})
    }
    const removeIndex = Effect.gen(function* () {
      if (!(yield* disk.exists(indexDir))) return
      for (const name of yield* disk.list(indexDir)) yield* disk.remove(join(indexDir, name))
      yield* disk.syncDir(indexDir)
    })
    // The index is derived state: when it is damaged, or covers more than the log (which can only mean it
    // belongs to another log), it is rebuilt from the log.
    let index = yield* Effect.catchTag(TableIndex.open(indexConfig), "IndexCorrupt", () =>
      Effect.zipRight(removeIndex, TableIndex.open(indexConfig))
    ).pipe(Effect.mapError(indexCorruptAsStorage))
    if (index.persistedPosition > log.writerPosition()) {
      yield* Effect.mapError(Effect.zipRight(removeIndex, Effect.void), indexCorruptAsStorage)
      index = yield* Effect.mapError(TableIndex.open(indexConfig), indexCorruptAsStorage)
    }

    // A clustered node indexes only what it knew was committed (the index holds nothing else either).
    const replicationCheckpoint =
      config.clustered === true ? yield* openCheckpoint(join(config.dir, "replication.chk"), 0) : undefined
    if (replicationCheckpoint !== undefined)
      yield* Effect.addFinalizer(() => Effect.ignore(replicationCheckpoint.close))
    const indexEnd = Math.min(
      log.writerPosition(),
      replicationCheckpoint === undefined
        ? Number.MAX_SAFE_INTEGER
        : Math.max(replicationCheckpoint.value(), index.persistedPosition)
    )

    const readIndex = new ReadIndex(
      log,
      index,
      { streamInfoCacheCapacity: config.streamInfoCacheCapacity },
      index.persistedPosition
    )
    const ids = new EventIdCache(config.eventIdCacheCapacity)

    // Replay the log tail the index has not persisted; refill the event-id cache with the newest ids of the
    // log, from the replay and, when it holds fewer than the cache's window, from before it.
    const replayStart = index.persistedPosition
    let replayFrom = replayStart
    const recent = new RecentEventIds(ids.window)
    while (replayFrom < indexEnd) {
      const scan = yield* Effect.mapError(log.scanForward(replayFrom, indexEnd, 4096), indexCorruptAsStorage)
      for (const record of scan.records) recent.forward(record)
      readIndex.applyCommitted(scan.records, scan.next >= indexEnd ? indexEnd : scan.next)
      yield* Effect.ignore(index.awaitCapacity)
      if (scan.records.length === 0) break
      replayFrom = scan.next
    }
    for (let back = Math.min(replayStart, indexEnd); recent.missing > 0 && back > 0;) {
      const scan = yield* Effect.mapError(log.scanBackward(back, back, 4096), indexCorruptAsStorage)
      for (const record of scan.records) recent.backward(record)
      if (scan.records.length === 0) break
      back = scan.next
    }
    recent.fillInto(ids)
    readIndex.applyCommitted([], indexEnd)

    const commits = yield* PubSub.sliding<CommitNotice>(4096)
    const commitListeners = new Set<(notice: CommitNotice) => void>()

    const onCommitted = (records: ReadonlyArray<LogRecord>, endPosition: number) =>
      Effect.suspend(() => {
        const streams = new Set<string>()
        for (const record of records) {
          const event = asStreamEvent(record)
          if (event !== undefined) streams.add(event.stream)
        }
        const notice: CommitNotice = {
          firstPosition: records[0]?.logPosition ?? endPosition,
          endPosition,
          streams: [...streams]
        }
        for (const listener of commitListeners) listener(notice)
        return PubSub.publish(commits, notice)
      })

    // A follower's received records until they are indexed: twice the leader's send window is plenty.
    const received = new ReceivedRecords(32 * 1024 * 1024)
    const commitThrough = makeLogCommitter(log, readIndex, ids, onCommitted, received)
    const lock = yield* Effect.makeSemaphore(1)
    const cluster =
      config.clustered === true
        ? {
            state: new Leadership(commitThrough, config.commitTimeoutMillis ?? config.writeTimeoutMillis),
            exclusive: lock.withPermits(1)
          }
        : undefined
    const writer = yield* makeWriter(
      log,
      readIndex,
      ids,
      {
        maxBatchCommands: config.maxBatchCommands,
        maxEventSize: config.maxEventSize,
        writeTimeoutMillis: config.writeTimeoutMillis
      },
      onCommitted,
      cluster
    )
    yield* Effect.forkScoped(writer.loop)
    yield* Effect.forkScoped(writer.sweeper)
    const replica =
      cluster === undefined || replicationCheckpoint === undefined
        ? undefined
        : yield* Effect.mapError(
            makeReplicaLog({
              log,
              readIndex,
              ids,
              leadership: cluster.state,
              exclusive: cluster.exclusive,
              commitThrough,
              received,
              submit: writer.submit,
              refuseQueued: writer.refuseQueued,
              replicationCheckpoint,
              newId: randomUuid
            }),
            indexCorruptAsStorage
          )

    /** A failed disk read stays a DiskError for the caller (whose reply names no file); the log gets the file. */
    const failWith = <E extends { readonly _tag: string; readonly message: string }>(e: E): Effect.Effect<never, E> =>
      e._tag === "DiskError"
        ? Effect.zipRight(Effect.logWarning(`a disk read failed: ${e.message}`), Effect.fail(e))
        : Effect.fail(e)
    const logReadError = <A, E extends { readonly _tag: string; readonly message: string }>(
      effect: Effect.Effect<A, E>
    ): Effect.Effect<A, E> => Effect.catchAll(effect, failWith)

    const submit = (command: WriteCommand): Effect.Effect<WriteResult, AppendError> =>
      logReadError(writer.submit(command))

    const now = Effect.map(
      Effect.clockWith((c) => c.currentTimeMillis),
      (ms) => ms * 1000
    )

    /** What reads have served, for the metrics (one pass over a page's events, no allocation). */
    const reads = { events: 0, bytes: 0 }
    const countRead = (events: ReadonlyArray<EventRecord>): void => {
      reads.events += events.length
      for (const e of events) reads.bytes += e.data.length + e.metadata.length
    }

    const links = makeLinkResolver((stream, number, nowMicros) => readIndex.readEvent(stream, number, nowMicros))

    const checkCount = (maxCount: number) =>
      Number.isSafeInteger(maxCount) && maxCount > 0 && maxCount <= config.maxReadCount
        ? Effect.void
        : Effect.fail(new InvalidRequest({ message: `the event count must be between 1 and ${config.maxReadCount}` }))

    const streamRead = (
      result: StreamReadResult,
      options: ReadOptions | undefined,
      nowMicros: number
    ): Effect.Effect<StreamRead, ReadError> =>
      result._tag !== "Success"
        ? Effect.succeed(
            result._tag === "NoStream"
              ? { _tag: "NoStream", lastEventNumber: result.lastEventNumber }
              : { _tag: "StreamDeleted" }
          )
        : (countRead(result.events),
          mapNow(links.resolvePage(result.events, options?.resolveLinks, nowMicros), (events) => ({
            ...result,
            events
          })))

    const toFailure = <A>(effect: Effect.Effect<A, ReadError | InvalidRequest>): Effect.Effect<A, ReadFailure> =>
      logReadError(effect)

    /** A read as of a time: begun now, and settled when it finished now (runNow). */
    const readAt =
      <P extends ReadonlyArray<unknown>, A>(steps: (...params: P) => Steps<A, ReadError | InvalidRequest>) =>
      (...params: P): Effect.Effect<A, ReadFailure> => {
        const read = runNow(steps(...params))
        return Exit.isExit(read) && Exit.isSuccess(read) ? read : toFailure(read)
      }
    /** The same read as an Effect, at the time it runs. */
    const readLater =
      <P extends ReadonlyArray<unknown>, A>(read: (nowMicros: number, ...params: P) => Effect.Effect<A, ReadFailure>) =>
      (...params: P): Effect.Effect<A, ReadFailure> =>
        Effect.flatMap(now, (nowMicros) => read(nowMicros, ...params))
    const micros = (clock: Clock.Clock): number => clock.unsafeCurrentTimeMillis() * 1000

    function* metadataSteps(stream: string): Steps<MetadataRead, ReadError> {
      const last = yield* readIndex.lastEventNumberSteps(stream)
      const info = yield* readIndex.metaInfoSteps(stream)
      const event =
        info.metaLastEventNumber >= 0
          ? yield* readIndex.eventAtSteps(metastreamOf(stream), info.metaLastEventNumber)
          : undefined
      const tag =
        last === DeletedStreamNumber
          ? "StreamDeleted"
          : info.metaLastEventNumber < 0 && last < 0
            ? "NoStream"
            : "Success"
      const isJson = event !== undefined && (event.flags & 1) !== 0
      return {
        _tag: tag,
        metadata: event === undefined ? {} : parseMetadata(event.data, isJson),
        metaLastEventNumber: info.metaLastEventNumber,
        raw: event?.data,
        isJson
      } as MetadataRead
    }
    const metadataAt = readAt(metadataSteps)

    function* streamPageSteps(
      nowMicros: number,
      direction: "forward" | "backward",
      stream: string,
      from: number,
      maxCount: number,
      options: ReadOptions | undefined
    ): Steps<StreamRead, ReadError | InvalidRequest> {
      yield* checkCount(maxCount)
      if (!Number.isSafeInteger(from) || from < (direction === "forward" ? 0 : -1))
        return yield* Effect.fail(new InvalidRequest({ message: `event number ${from} is not valid` }))
      const result =
        direction === "forward"
          ? yield* readIndex.readForwardSteps(stream, from, maxCount, nowMicros)
          : yield* readIndex.readBackwardSteps(stream, from, maxCount, nowMicros)
      return yield* streamRead(result, options, nowMicros)
    }
    const streamPageAt = readAt(streamPageSteps)
    const streamPage = readLater(streamPageAt)

    function* eventSteps(
      nowMicros: number,
      stream: string,
      eventNumber: number,
      options: ReadOptions | undefined
    ): Steps<EventRead, ReadError | InvalidRequest> {
      if (!Number.isSafeInteger(eventNumber) || eventNumber < -1)
        return yield* Effect.fail(new InvalidRequest({ message: `event number ${eventNumber} is not valid` }))
      const result: EventReadResult = yield* readIndex.readEventSteps(stream, eventNumber, nowMicros)
      if (result._tag !== "Success") return result
      countRead([result.event])
      const access = options?.resolveLinks
      const event =
        access === undefined
          ? { event: result.event, link: undefined }
          : yield* links.resolveOne(result.event, access, nowMicros)
      return { _tag: "Success", event } as EventRead
    }
    const eventAt = readAt(eventSteps)

    function* allSteps(
      nowMicros: number,
      direction: "forward" | "backward",
      position: number,
      maxCount: number,
      options: ReadOptions | undefined
    ): Steps<AllRead, ReadError | InvalidRequest> {
      yield* checkCount(maxCount)
      const limit = readIndex.committed()
      if (!Number.isSafeInteger(position) || position < (direction === "forward" ? 0 : -1))
        return yield* Effect.fail(new InvalidRequest({ message: `position ${position} is not valid` }))
      if (direction === "forward") {
        yield* checkBoundary(position, limit)
        return yield* readAllSteps(log.scanForwardNow, position, limit, maxCount, options, nowMicros)
      }
      const from = position < 0 || position > limit ? limit : position
      if (from < limit) yield* checkBoundary(from, limit)
      return yield* readAllSteps(log.scanBackwardNow, from, limit, maxCount, options, nowMicros)
    }
    const allAt = readAt(allSteps)

    /**
     * The events with canonical ids (lowercase, dashed: how ids are stored), copied only when one is not, or
     * why they cannot be appended (an id that is not a UUID). One regex test per event on the common path.
     */
    const canonicalEvents = (events: ReadonlyArray<ProposedEvent>): ReadonlyArray<ProposedEvent> | InvalidRequest => {
      let allCanonical = true
      for (const e of events) {
        if (CANONICAL_UUID.test(e.eventId)) continue
        if (!isUuid(e.eventId)) return new InvalidRequest({ message: `event id '${e.eventId}' is not a UUID` })
        allCanonical = false
      }
      return allCanonical ? events : events.map((e) => ({ ...e, eventId: normalizeUuid(e.eventId) }))
    }

    /**
     * One append is one callback from the writer: validation runs first, and the writer's answer is mapped
     * inside its callback (no Effect steps per append: this is the hot path of single-event appends).
     */
    const appendThen = (
      stream: string,
      expectedVersion: number,
      events: ReadonlyArray<ProposedEvent>,
      answer: (outcome: Effect.Effect<AppendResult, AppendError>) => void
    ): void => {
      const badName = invalidStreamName(stream)
      if (badName !== undefined) return answer(Effect.fail(new InvalidRequest({ message: badName })))
      if (!Number.isSafeInteger(expectedVersion) || expectedVersion < -4 || expectedVersion === -3) {
        return answer(Effect.fail(new InvalidRequest({ message: `expected version ${expectedVersion} is not valid` })))
      }
      const normalized = canonicalEvents(events)
      if (normalized instanceof InvalidRequest) return answer(Effect.fail(normalized))
      writer.enqueue({ _tag: "Append", stream, expectedVersion, events: normalized }, (outcome) => {
        if (!outcome.ok) return answer(failWith(outcome.error))
        const r = outcome.result
        if (r._tag !== "Appended") return answer(Effect.die(new Error(`writer answered an append with ${r._tag}`)))
        answer(
          Effect.succeed({
            firstEventNumber: r.firstEventNumber,
            lastEventNumber: r.lastEventNumber,
            position: r.position,
            idempotent: r.idempotent
          })
        )
      })
    }

    /** The command is queued only when the Effect runs. */
    const append = (
      stream: string,
      expectedVersion: number,
      events: ReadonlyArray<ProposedEvent>
    ): Effect.Effect<AppendResult, AppendError> =>
      Effect.async<AppendResult, AppendError>((resume) => appendThen(stream, expectedVersion, events, resume))

    const service: EventStoreService = {
      append,
      appendThen,
      deleteStream: (stream, expectedVersion, hard) =>
        Effect.gen(function* () {
          const badName = invalidStreamName(stream)
          if (badName !== undefined || isMetastream(stream)) {
            return yield* Effect.fail(
              new InvalidRequest({ message: badName ?? "a metastream cannot be deleted; delete its stream" })
            )
          }
          const result = yield* submit({ _tag: "Delete", stream, expectedVersion, hard, eventId: yield* randomUuid })
          return { position: result._tag === "Deleted" ? result.position : -1 }
        }),
      setStreamMetadata: (stream, expectedVersion, metadata, options) =>
        Effect.gen(function* () {
          const eventId = options?.eventId ?? (yield* randomUuid)
          return yield* append(metastreamOf(stream), expectedVersion, [
            {
              eventId,
              eventType: EventTypes.Metadata,
              isJson: options?.isJson ?? true,
              data: metadata,
              metadata: new Uint8Array(0)
            }
          ])
        }),
      getStreamMetadata: (stream) => Effect.suspend(() => metadataAt(stream)),
      readStreamForward: (stream, from, maxCount, options) => streamPage("forward", stream, from, maxCount, options),
      readStreamBackward: (stream, from, maxCount, options) => streamPage("backward", stream, from, maxCount, options),
      readEvent: readLater(eventAt),
      readAllForward: (position, maxCount, options) =>
        Effect.flatMap(now, (nowMicros) => allAt(nowMicros, "forward", position, maxCount, options)),
      readAllBackward: (position, maxCount, options) =>
        Effect.flatMap(now, (nowMicros) => allAt(nowMicros, "backward", position, maxCount, options)),
      readNow: {
        committed: () => readIndex.committed(),
        metadata: metadataAt,
        streamForward: (stream, from, maxCount, options, clock) =>
          streamPageAt(micros(clock), "forward", stream, from, maxCount, options),
        streamBackward: (stream, from, maxCount, options, clock) =>
          streamPageAt(micros(clock), "backward", stream, from, maxCount, options),
        event: (stream, eventNumber, options, clock) => eventAt(micros(clock), stream, eventNumber, options),
        allForward: (position, maxCount, options, clock) =>
          allAt(micros(clock), "forward", position, maxCount, options),
        allBackward: (position, maxCount, options, clock) =>
          allAt(micros(clock), "backward", position, maxCount, options)
      },
      lastEventNumber: (stream) => toFailure(readIndex.lastEventNumber(stream)),
      writeScavengePoint: (effectiveNowMicros, threshold) =>
        Effect.gen(function* () {
          const result = yield* submit({
            _tag: "ScavengePoint",
            eventId: yield* randomUuid,
            effectiveNowMicros,
            threshold
          })
          return result._tag === "SystemRecordWritten"
            ? { number: result.number, position: result.position }
            : { number: -1, position: -1 }
        }),
      committedPosition: Effect.sync(() => readIndex.committed()),
      commits,
      onCommit: (listener) =>
        Effect.acquireRelease(
          Effect.sync(() => void commitListeners.add(listener)),
          () => Effect.sync(() => void commitListeners.delete(listener))
        ),
      config,
      stats: () => ({
        writerPosition: log.writerPosition(),
        committedPosition: readIndex.committed(),
        chunks: log.chunks().length,
        index: index.stats(),
        readCache: { hits: log.cache.hits, misses: log.cache.misses, residentBytes: log.cache.residentBytes },
        reads: { events: reads.events, bytes: reads.bytes },
        writer: { ...writer.stats, queued: writer.queued() },
        writesRefused: writer.refused()
      }),
      flushIndex: Effect.mapError(index.flush, indexCorruptAsStorage),
      engine: { log, index, readIndex },
      replica
    }

    /** Pages through the log in one direction until `maxCount` events or the end, as `$all` events. */
    function* readAllSteps(
      scan: TransactionLog["scanForward"],
      from: number,
      limit: number,
      maxCount: number,
      options: ReadOptions | undefined,
      nowMicros: number
    ): Steps<AllRead, ReadError> {
      const events: Array<EventRecord> = []
      let next = from
      let isEnd = false
      while (events.length < maxCount && !isEnd) {
        const page = yield* scan(next, limit, maxCount - events.length)
        for (const record of page.records) {
          const event = asStreamEvent(record)
          if (event !== undefined) events.push(event)
        }
        next = page.next
        isEnd = page.reachedEnd || page.records.length === 0
      }
      countRead(events)
      return {
        events: yield* links.resolvePage(events, options?.resolveLinks, nowMicros),
        nextPosition: next,
        isEnd
      } as AllRead
    }

    /** A position to read `$all` from must be a record boundary (or a chunk boundary / the end). */
    function checkBoundary(
      position: number,
      limit: number
    ): Effect.Effect<void, InvalidRequest | StorageCorrupt | ReadError> {
      if (position >= limit || position % config.chunkSize === 0) return Effect.void
      // A record decoded from memory at this position (its own position checked) or none there: answered now.
      if (log.readRecordCached(position, limit) !== NotCached) return Effect.void
      return Effect.catchTag(Effect.asVoid(log.readRecord(position, limit)), "StorageCorrupt", () =>
        Effect.fail(new InvalidRequest({ message: `position ${position} is not the position of an event` }))
      )
    }

    // Every start begins a new epoch (a single node leads from its first moment); a cluster's leader writes
    // its epoch when it is elected.
    if (replica !== undefined) return service
    const lastEpoch = yield* Effect.mapError(readIndex.lastEventNumber(EpochInformationStream), indexCorruptAsStorage)
    const previousEpoch =
      lastEpoch >= 0
        ? yield* Effect.mapError(readIndex.eventAt(EpochInformationStream, lastEpoch), indexCorruptAsStorage)
        : undefined
    const epoch: WriteCommand = {
      _tag: "Epoch",
      epochId: yield* randomUuid,
      leaderInstanceId: yield* randomUuid,
      prevEpochPosition: previousEpoch?.logPosition ?? -1
    }
    yield* Effect.mapError(
      submit(epoch),
      (e) => new StorageCorrupt({ message: `could not write the epoch record: ${e.message}` })
    )
    return service
  })

export { randomUuid }
export type { AppendResult, ProposedEvent }
