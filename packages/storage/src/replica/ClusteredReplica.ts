/**
 * The ReplicaLog of a clustered store (see ReplicaLog.ts for the positions and their rules).
 *
 * The replica's own changes to the log (appendRaw, commitTo, truncate) run exclusively of the writer's
 * rounds (one lock), so a received slice is never written while a round writes, and a truncation never
 * cuts what a round is placing. The newest epoch's position is kept in memory (found at open: the
 * uncommitted tail first, then the index's `$epoch-information`), moved by `lead`, by received epochs and
 * by truncation; `epochs` follows the chain of `prevEpochPosition` back from it. The replication
 * checkpoint (how far this node has committed) is persisted lazily, once a second and at close: a
 * lagging copy only hides events after a restart until the leader says again how far the cluster got.
 */
import { Effect, type Scope } from "effect"
import type { Checkpoint } from "../log/Checkpoint.js"
import { isScavenged } from "../log/ChunkFile.js"
import { RecordKind, type EpochRecord } from "../log/records.js"
import type { ReadError, TransactionLog } from "../log/TransactionLog.js"
import { InvalidRequest, StorageFailed } from "../errors.js"
import type { ReadIndex } from "../streams/ReadIndex.js"
import { EpochInformationStream } from "../streams/names.js"
import type { WriteCommand, WriteError, WriteResult } from "../streams/planner.js"
import type { EventIdCache } from "../cache/EventIdCache.js"
import { RecentEventIds, isCacheable } from "../cache/RecentEventIds.js"
import type { Leadership } from "./Leadership.js"
import type { ReceivedRecords } from "./ReceivedRecords.js"
import { checkSlice, readSlice } from "./rawSlices.js"
import type { EpochRef, ReplicaLog } from "./ReplicaLog.js"

export interface ReplicaParts {
  readonly log: TransactionLog
  readonly readIndex: ReadIndex
  readonly ids: EventIdCache
  readonly leadership: Leadership
  /** Serializes the replica's changes with the writer's rounds (the writer takes it for each round). */
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly commitThrough: (position: number) => Effect.Effect<void, ReadError>
  /** The records of received slices not indexed yet (commitThrough takes them from there). */
  readonly received: ReceivedRecords
  readonly submit: (command: WriteCommand) => Effect.Effect<WriteResult, WriteError>
  readonly refuseQueued: (error: WriteError) => void
  readonly replicationCheckpoint: Checkpoint
  readonly newId: Effect.Effect<string>
}

const PAGE = 1024

const refOf = (record: EpochRecord): EpochRef => ({
  epochNumber: record.epochNumber,
  position: record.logPosition,
  epochId: record.epochId
})

/** A disk read that failed while the log was being changed: the change did not happen. */
const readFailed = (error: ReadError): StorageFailed | InvalidRequest =>
  error._tag === "StorageCorrupt"
    ? new InvalidRequest({ message: `the log could not be read there: ${error.message}` })
    : new StorageFailed({
        message: "a disk read failed: the log was not changed",
        reason: "IOError",
        detail: error.message
      })

export const makeReplicaLog = (parts: ReplicaParts): Effect.Effect<ReplicaLog, ReadError, Scope.Scope> =>
  Effect.gen(function* () {
    const { log, readIndex, ids, leadership, exclusive, received } = parts
    /** Brings the log back after a failed write; what was received before may have been cut. */
    const recover = Effect.suspend(() => {
      received.clear()
      return log.recover
    })
    const chunkSize = log.config.chunkSize

    /** The last epoch record in [from, to), or undefined. */
    const lastEpochIn = (from: number, to: number) =>
      Effect.gen(function* () {
        let last: EpochRecord | undefined
        for (let pos = from; pos < to;) {
          const page = yield* log.scanForward(pos, to, PAGE)
          for (const record of page.records) if (record.kind === RecordKind.Epoch) last = record
          if (page.records.length === 0 || page.next <= pos) break
          pos = page.next
        }
        return last
      })

    const epochAt = (position: number) =>
      Effect.map(log.readRecord(position, log.writerPosition()), (record) =>
        record?.kind === RecordKind.Epoch ? record : undefined
      )

    const findLastEpoch = Effect.gen(function* () {
      const inTail = yield* lastEpochIn(readIndex.committed(), log.writerPosition())
      if (inTail !== undefined) return refOf(inTail)
      const number = yield* readIndex.lastEventNumber(EpochInformationStream)
      if (number < 0) return undefined
      const event = yield* readIndex.eventAt(EpochInformationStream, number)
      const record = event === undefined ? undefined : yield* epochAt(event.logPosition)
      return record === undefined ? undefined : refOf(record)
    })
    let lastEpoch: EpochRef | undefined = yield* findLastEpoch
    /**
     * While `lead` waits for its epoch's quorum: the writer position it started from. The epoch is in the log
     * from the moment its round is written, but `lead` learns where only once a quorum holds it; followers
     * subscribe in between, and must be placed against it.
     */
    let epochWrittenFrom: number | undefined

    const epochs = (max: number) =>
      Effect.gen(function* () {
        const out: Array<EpochRef> = []
        const inFlight =
          epochWrittenFrom === undefined ? undefined : yield* lastEpochIn(epochWrittenFrom, log.writerPosition())
        let position = inFlight?.logPosition ?? lastEpoch?.position ?? -1
        while (position >= 0 && out.length < max) {
          const record = yield* epochAt(position)
          // An epoch a scavenge removed ends the chain.
          if (record === undefined) break
          out.push(refOf(record))
          position = record.prevEpochPosition
        }
        return out
      })

    const lead: ReplicaLog["lead"] = (term, leaderInstanceId, gate) =>
      Effect.gen(function* () {
        if (leadership.leading) return yield* new InvalidRequest({ message: "this node already leads" })
        if (!Number.isSafeInteger(term) || term < 0)
          return yield* new InvalidRequest({ message: `term ${term} is not a valid epoch number` })
        const previous = lastEpoch
        if (previous !== undefined && term <= previous.epochNumber)
          return yield* new InvalidRequest({
            message: `term ${term} is not newer than the log's last epoch ${previous.epochNumber}: a stale election`
          })
        yield* leadership.start(gate)
        received.clear()
        const epochId = yield* parts.newId
        epochWrittenFrom = log.writerPosition()
        const written = yield* Effect.either(
          parts.submit({
            _tag: "Epoch",
            epochId,
            leaderInstanceId,
            prevEpochPosition: previous?.position ?? -1,
            epochNumber: term
          })
        ).pipe(Effect.ensuring(Effect.sync(() => (epochWrittenFrom = undefined))))
        if (written._tag === "Left") {
          yield* leadership.stop
          // The epoch may be in the tail all the same (its quorum was lost): it is the log's newest then.
          const inTail = yield* Effect.either(lastEpochIn(readIndex.committed(), log.writerPosition()))
          if (inTail._tag === "Right" && inTail.right !== undefined) lastEpoch = refOf(inTail.right)
          return yield* written.left
        }
        const position = written.right._tag === "SystemRecordWritten" ? written.right.position : -1
        const ref: EpochRef = { epochNumber: term, position, epochId }
        lastEpoch = ref
        leadership.ready()
        return ref
      })

    const stopLeading = Effect.gen(function* () {
      yield* leadership.stop
      const refusal = leadership.refusal()
      if (refusal !== undefined) parts.refuseQueued(refusal)
    })

    const followerOnly = (what: string) =>
      leadership.leading
        ? Effect.fail(new InvalidRequest({ message: `this node leads: it does not ${what}` }))
        : Effect.void

    const appendRaw: ReplicaLog["appendRaw"] = (slice) =>
      exclusive(
        Effect.gen(function* () {
          yield* followerOnly("write slices of another log")
          if (log.failure() !== undefined) yield* recover
          const records = checkSlice(slice, log.writerPosition(), chunkSize)
          if (records instanceof InvalidRequest) return yield* records
          const bytes = Buffer.from(slice.bytes.buffer, slice.bytes.byteOffset, slice.bytes.length)
          yield* log.appendBytes(bytes, slice.completesChunk)
          received.add(records, slice.position, slice.end)
          for (const record of records) if (record.kind === RecordKind.Epoch) lastEpoch = refOf(record)
        })
      )

    const installChunk: ReplicaLog["installChunk"] = (piece) =>
      exclusive(
        Effect.gen(function* () {
          yield* followerOnly("install chunks of another log")
          const from = log.writerPosition()
          if (log.failure() !== undefined) yield* recover
          // A file this log holds whole already (an install `recover` just finished): its pieces change nothing.
          received.clear()
          const held = (piece.endNumber + 1) * chunkSize <= log.writerPosition()
          if (!held && !(yield* log.installChunk(piece))) return
          // The file may hold epochs this node had not received yet.
          const epoch = yield* Effect.mapError(lastEpochIn(from, log.writerPosition()), readFailed)
          if (epoch !== undefined) lastEpoch = refOf(epoch)
        })
      )

    const commitTo: ReplicaLog["commitTo"] = (position) =>
      // A leader commits through its rounds' gate; a late commitTo from its following days changes nothing.
      leadership.leading
        ? Effect.void
        : exclusive(Effect.suspend(() => parts.commitThrough(Math.min(position, log.writerPosition()))))

    /** Where the last epoch is once the log is cut at `position` (following the chain back past the cut). */
    const epochBefore = (position: number) =>
      Effect.gen(function* () {
        let ref = lastEpoch
        while (ref !== undefined && ref.position >= position) {
          const record = yield* epochAt(ref.position)
          const prev =
            record === undefined || record.prevEpochPosition < 0 ? undefined : yield* epochAt(record.prevEpochPosition)
          ref = prev === undefined ? undefined : refOf(prev)
        }
        return ref
      })

    /** The event ids of the records in [from, to). */
    const idsIn = (from: number, to: number) =>
      Effect.gen(function* () {
        const out: Array<string> = []
        for (let pos = from; pos < to;) {
          const page = yield* log.scanForward(pos, to, PAGE)
          for (const record of page.records) if (isCacheable(record)) out.push(record.eventId)
          if (page.records.length === 0 || page.next <= pos) break
          pos = page.next
        }
        return out
      })

    /** Puts the newest ids below `end` back into the cache, as open does (they may have been replaced by cut ones). */
    const refillIds = (end: number) =>
      Effect.gen(function* () {
        const recent = new RecentEventIds(ids.window)
        for (let back = end; recent.missing > 0 && back > 0;) {
          const page = yield* log.scanBackward(back, back, 4096)
          for (const record of page.records) recent.backward(record)
          if (page.records.length === 0) break
          back = page.next
        }
        recent.fillInto(ids)
      })

    const checkCut = (position: number, writer: number): Effect.Effect<void, InvalidRequest | ReadError> => {
      const committed = readIndex.committed()
      if (!Number.isSafeInteger(position) || position < committed || position > writer)
        return Effect.fail(
          new InvalidRequest({
            message: `cannot cut the log at ${position}: only the uncommitted tail [${committed}, ${writer}] can be cut`
          })
        )
      for (let start = Math.floor(position / chunkSize) * chunkSize; start < writer; start += chunkSize) {
        const chunk = log.chunkAt(start)
        if (chunk !== undefined && isScavenged(chunk))
          return Effect.fail(
            new InvalidRequest({ message: `cannot cut the log at ${position}: ${chunk.path} is scavenged` })
          )
      }
      return Effect.catchTag(Effect.asVoid(log.readRecord(position, writer)), "StorageCorrupt", () =>
        Effect.fail(new InvalidRequest({ message: `cannot cut the log at ${position}: no record starts there` }))
      )
    }

    const truncate: ReplicaLog["truncate"] = (position) =>
      exclusive(
        Effect.gen(function* () {
          yield* followerOnly("cut its log")
          if (log.failure() !== undefined) yield* recover
          const writer = log.writerPosition()
          yield* Effect.mapError(checkCut(position, writer), (e) => (e._tag === "InvalidRequest" ? e : readFailed(e)))
          if (position === writer) return
          const cutIds = yield* Effect.mapError(idsIn(position, writer), readFailed)
          const epochAfterCut = yield* Effect.mapError(epochBefore(position), readFailed)
          received.clear()
          yield* log.truncate(position)
          lastEpoch = epochAfterCut
          if (cutIds.length === 0) return
          // A retry of a cut append must be written again, not answered as the cut copy.
          for (const id of cutIds) ids.forget(id)
          yield* Effect.mapError(refillIds(log.writerPosition()), readFailed)
        })
      )

    const checkpoint = parts.replicationCheckpoint
    const persistCommitted = Effect.suspend(() => {
      const committed = Math.min(readIndex.committed(), log.writerPosition())
      return committed === checkpoint.value() ? Effect.void : checkpoint.write(committed)
    })
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Effect.sleep("1 second"), Effect.ignoreLogged(persistCommitted)))
    )
    yield* Effect.addFinalizer(() => Effect.ignoreLogged(persistCommitted))

    return {
      chunkSize,
      writerCheckpoint: () => log.writerPosition(),
      committed: () => readIndex.committed(),
      epochs,
      lead,
      stopLeading,
      readRaw: (from, maxBytes, chunkOffset) => readSlice(log, from, maxBytes, chunkOffset),
      appendRaw,
      installChunk,
      commitTo,
      truncate
    } satisfies ReplicaLog
  })
