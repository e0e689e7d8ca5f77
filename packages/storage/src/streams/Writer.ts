/**
 * The writer: one fiber that turns queued write commands into durable log batches (group commit).
 *
 * Each round takes every waiting command (up to a limit), decides each one in order against the committed
 * state plus the decisions already made in this round (so two appends to one stream in one batch see each
 * other), encodes all resulting records into one prepared batch, writes it with one write and one sync per
 * chunk touched, moves the writer checkpoint, indexes the batch, and only then answers every command —
 * failures too, so no answer ever depends on a batch that might still fail. After a disk error the log is
 * fail-stop and every later command fails with StorageFailed.
 */
import { Clock, Deferred, Effect, Queue, Random } from "effect"
import { StorageFailed, StreamDeleted, WrongExpectedVersion, InvalidRequest, type StorageCorrupt } from "../errors.js"
import type { TransactionLog, WriteUnit } from "../log/TransactionLog.js"
import { EventFlags, MAX_RECORD_BODY, RecordKind, bodyLength, framedLength, type LogRecord, type NewRecord } from "../log/records.js"
import { checkCommit, type CommitState, type KnownEvent } from "./commitCheck.js"
import { isSoftDeleted as metaIsSoftDeleted, parseMetadata, softDeleteMetadata, withTruncateBefore } from "./metadata.js"
import {
  DeletedStreamNumber, EpochInformationStream, EventTypes, ScavengePointsStream, isMetastream, isWellFormedText, metastreamOf, originalStreamOf
} from "./names.js"
import type { MetaInfo, ReadIndex } from "./ReadIndex.js"
import type { DiskError } from "@vellum/platform"

export interface ProposedEvent {
  readonly eventId: string
  readonly eventType: string
  readonly isJson: boolean
  readonly data: Uint8Array
  readonly metadata: Uint8Array
}

export type WriteCommand =
  | { readonly _tag: "Append"; readonly stream: string; readonly expectedVersion: number; readonly events: ReadonlyArray<ProposedEvent> }
  | { readonly _tag: "Delete"; readonly stream: string; readonly expectedVersion: number; readonly hard: boolean; readonly eventId: string }
  | { readonly _tag: "ScavengePoint"; readonly eventId: string; readonly effectiveNowMicros: number; readonly threshold: number }
  | { readonly _tag: "Epoch"; readonly epochId: string; readonly leaderInstanceId: string }

export interface AppendResult {
  readonly firstEventNumber: number
  readonly lastEventNumber: number
  /** Log position of the last event written (or of the original, for an idempotent retry); -1 for none. */
  readonly position: number
  readonly idempotent: boolean
}

export type WriteResult =
  | ({ readonly _tag: "Appended" } & AppendResult)
  | { readonly _tag: "Deleted"; readonly position: number }
  | { readonly _tag: "SystemRecordWritten"; readonly number: number; readonly position: number }

export type WriteError = WrongExpectedVersion | StreamDeleted | InvalidRequest | StorageFailed | StorageCorrupt | DiskError

interface Pending {
  readonly command: WriteCommand
  readonly deferred: Deferred.Deferred<WriteResult, WriteError>
}

/** A decided command: records to write, and how to answer once they are durable. */
type Plan =
  | { readonly _tag: "Write"; readonly records: Array<NewRecord>; readonly completeChunkAfter: boolean; readonly answer: (positions: ReadonlyArray<number>) => WriteResult }
  | { readonly _tag: "Idempotent"; readonly stream: string; readonly first: number; readonly last: number }
  | { readonly _tag: "Fail"; readonly error: WriteError }

/** A FIFO-bounded map of recently written event ids (the reference's committed-events cache). */
export class EventIdCache {
  private readonly map = new Map<string, KnownEvent>()
  constructor(private readonly capacity: number) {}
  get(eventId: string): KnownEvent | undefined {
    return this.map.get(eventId)
  }
  put(eventId: string, known: KnownEvent): void {
    this.map.delete(eventId)
    this.map.set(eventId, known)
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!)
  }
}

export interface WriterConfig {
  readonly maxBatchCommands: number
  /** data + metadata + 2 × type length, per event (the reference's 16 MiB − 10,000). */
  readonly maxEventSize: number
}

/** Decisions made earlier in the current round, layered over the committed state. */
class RoundState {
  readonly versions = new Map<string, number>()
  readonly metas = new Map<string, MetaInfo>()
}

export const makeWriter = (
  log: TransactionLog,
  readIndex: ReadIndex,
  ids: EventIdCache,
  config: WriterConfig,
  onCommitted: (records: ReadonlyArray<LogRecord>, endPosition: number) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Pending>()

    const lastEventNumber = (round: RoundState, stream: string): Effect.Effect<number, StorageCorrupt | DiskError> =>
      Effect.gen(function*() {
        if (isMetastream(stream) && (yield* lastEventNumber(round, originalStreamOf(stream))) === DeletedStreamNumber) {
          return DeletedStreamNumber
        }
        const pending = round.versions.get(stream)
        return pending !== undefined ? pending : yield* readIndex.lastEventNumber(stream)
      })

    const metaInfo = (round: RoundState, stream: string) => {
      const pending = round.metas.get(stream)
      return pending !== undefined ? Effect.succeed(pending) : readIndex.metaInfo(stream)
    }

    const softDeleted = (round: RoundState, stream: string) =>
      isMetastream(stream) ? Effect.succeed(false) : Effect.map(metaInfo(round, stream), (m) => metaIsSoftDeleted(m.metadata))

    const stateFor = (round: RoundState): CommitState<StorageCorrupt | DiskError> => ({
      lastEventNumber: (stream) => lastEventNumber(round, stream),
      isSoftDeleted: (stream) => softDeleted(round, stream),
      knownEvent: (eventId) => ids.get(eventId),
      storedEventId: (stream, n) => Effect.map(readIndex.eventAt(stream, n), (e) => e?.eventId)
    })

    /** Folds a planned record into the round's view (versions, metadata, id cache) once it is accepted. */
    const remember = (round: RoundState, record: NewRecord) => {
      if (record.kind === RecordKind.ScavengePoint) return round.versions.set(ScavengePointsStream, record.number)
      if (record.kind === RecordKind.Epoch) return round.versions.set(EpochInformationStream, record.epochNumber)
      if (record.kind !== RecordKind.Event) return
      round.versions.set(record.stream, record.eventNumber)
      if ((record.flags & EventFlags.Tombstone) === 0) ids.put(record.eventId, { stream: record.stream, eventNumber: record.eventNumber })
      if (isMetastream(record.stream)) {
        round.metas.set(originalStreamOf(record.stream), {
          metadata: parseMetadata(record.data, (record.flags & EventFlags.Json) !== 0),
          metaLastEventNumber: record.eventNumber,
          raw: Buffer.from(record.data)
        })
      }
    }

    const eventRecord = (stream: string, eventNumber: number, eventId: string, eventType: string, isJson: boolean,
      data: Uint8Array, metadata: Uint8Array, nowMicros: number, extraFlags = 0) => ({
      kind: RecordKind.Event,
      flags: (isJson ? EventFlags.Json : 0) | (eventType === EventTypes.LinkTo ? EventFlags.Link : 0) | extraFlags,
      eventNumber,
      createdMicros: nowMicros,
      eventId,
      stream,
      eventType,
      data: Buffer.from(data.buffer, data.byteOffset, data.length),
      metadata: Buffer.from(metadata.buffer, metadata.byteOffset, metadata.length)
    } as const)

    /** The `$metadata` event that recreates a soft-deleted stream from `recreateFrom` (none if not JSON). */
    const undeleteRecord = (stream: string, info: MetaInfo, recreateFrom: number, eventId: string, nowMicros: number) => {
      if (info.raw === undefined) return undefined
      const modified = withTruncateBefore(info.raw, recreateFrom)
      if (modified === undefined) return undefined
      return eventRecord(metastreamOf(stream), info.metaLastEventNumber + 1, eventId, EventTypes.Metadata, true, modified, Buffer.alloc(0), nowMicros)
    }

    const planAppend = (round: RoundState, command: Extract<WriteCommand, { _tag: "Append" }>, nowMicros: number, freshId: () => string) =>
      Effect.gen(function*() {
        const { stream, expectedVersion, events } = command
        const decision = yield* checkCommit(stateFor(round), stream, expectedVersion, events.map((e) => e.eventId))
        switch (decision._tag) {
          case "Deleted":
            return { _tag: "Fail", error: new StreamDeleted({ stream }) } as Plan
          case "WrongExpectedVersion":
            return { _tag: "Fail", error: new WrongExpectedVersion({ stream, expectedVersion, currentVersion: decision.current }) } as Plan
          case "Idempotent":
            return { _tag: "Idempotent", stream, first: decision.first, last: decision.last } as Plan
          case "Ok":
            break
        }
        const metaWasSoftDeleted = isMetastream(stream) && (yield* softDeleted(round, originalStreamOf(stream)))
        const first = decision.current + 1
        const records: Array<NewRecord> = events.map((e, i) =>
          eventRecord(stream, first + i, e.eventId, e.eventType, e.isJson, e.data, e.metadata, nowMicros))
        if (decision.softDeleted) {
          const undo = undeleteRecord(stream, yield* metaInfo(round, stream), decision.current + 1, freshId(), nowMicros)
          if (undo !== undefined) records.push(undo)
        }
        if (metaWasSoftDeleted && events.length > 0) {
          // Metadata written to `$$S` of a soft-deleted S recreates S: the new metadata, with `$tb` past S's end.
          const original = originalStreamOf(stream)
          const lastMeta = events[events.length - 1]!
          const written: MetaInfo = {
            metadata: parseMetadata(lastMeta.data, lastMeta.isJson),
            metaLastEventNumber: first + events.length - 1,
            // The raw bytes whatever the JSON flag, as the reference's raw-meta cache: bytes flagged non-JSON
            // that still parse as an object are rewritten with `$tb` too.
            raw: Buffer.from(lastMeta.data)
          }
          const recreateFrom = (yield* lastEventNumber(round, original)) + 1
          const undo = undeleteRecord(original, written, recreateFrom, freshId(), nowMicros)
          if (undo !== undefined) records.push(undo)
        }
        const count = events.length
        return {
          _tag: "Write",
          records,
          completeChunkAfter: false,
          answer: (positions) => ({
            _tag: "Appended",
            firstEventNumber: first,
            lastEventNumber: first + count - 1,
            position: count > 0 ? positions[count - 1]! : -1,
            idempotent: false
          })
        } as Plan
      })

    const planDelete = (round: RoundState, command: Extract<WriteCommand, { _tag: "Delete" }>, nowMicros: number) =>
      Effect.gen(function*() {
        const { stream, expectedVersion, hard, eventId } = command
        if (!hard) {
          const current = yield* lastEventNumber(round, stream)
          const info = yield* metaInfo(round, stream)
          if (current === -1 && info.metaLastEventNumber === -1) {
            return { _tag: "Fail", error: new WrongExpectedVersion({ stream, expectedVersion, currentVersion: -1 }) } as Plan
          }
        }
        const decision = yield* checkCommit(stateFor(round), stream, expectedVersion, [eventId])
        if (decision._tag === "Deleted") return { _tag: "Fail", error: new StreamDeleted({ stream }) } as Plan
        if (decision._tag !== "Ok") {
          const currentVersion = decision._tag === "WrongExpectedVersion" ? decision.current : yield* lastEventNumber(round, stream)
          return { _tag: "Fail", error: new WrongExpectedVersion({ stream, expectedVersion, currentVersion }) } as Plan
        }
        const record = hard
          ? eventRecord(stream, DeletedStreamNumber, eventId, EventTypes.StreamDeleted, false, Buffer.alloc(0), Buffer.alloc(0), nowMicros, EventFlags.Tombstone)
          : eventRecord(metastreamOf(stream), (yield* metaInfo(round, stream)).metaLastEventNumber + 1, eventId, EventTypes.Metadata, true,
            softDeleteMetadata(), Buffer.alloc(0), nowMicros)
        return { _tag: "Write", records: [record], completeChunkAfter: false, answer: (positions) => ({ _tag: "Deleted", position: positions[0]! }) } as Plan
      })

    const planSystem = (round: RoundState, command: Extract<WriteCommand, { _tag: "ScavengePoint" | "Epoch" }>, nowMicros: number) =>
      Effect.gen(function*() {
        const stream = command._tag === "ScavengePoint" ? ScavengePointsStream : EpochInformationStream
        const number = (yield* lastEventNumber(round, stream)) + 1
        let record: NewRecord
        if (command._tag === "ScavengePoint") {
          record = { kind: RecordKind.ScavengePoint, number, eventId: command.eventId, effectiveNowMicros: command.effectiveNowMicros, threshold: command.threshold, timeMicros: nowMicros }
        } else {
          const previous = number > 0 ? yield* readIndex.eventAt(stream, number - 1) : undefined
          record = { kind: RecordKind.Epoch, epochNumber: number, prevEpochPosition: previous?.logPosition ?? -1, epochId: command.epochId, leaderInstanceId: command.leaderInstanceId, timeMicros: nowMicros }
        }
        return {
          _tag: "Write",
          records: [record],
          completeChunkAfter: command._tag === "ScavengePoint",
          answer: (positions) => ({ _tag: "SystemRecordWritten", number, position: positions[0]! })
        } as Plan
      })

    const validate = (command: WriteCommand): InvalidRequest | undefined => {
      if (command._tag !== "Append") return undefined
      for (const e of command.events) {
        if (e.eventType.length === 0) return new InvalidRequest({ reason: "an event type must not be empty" })
        if (!isWellFormedText(e.eventType)) return new InvalidRequest({ reason: "an event type must be well-formed Unicode (it has a lone surrogate)" })
        const size = e.data.length + e.metadata.length + 2 * e.eventType.length
        if (size > config.maxEventSize) {
          return new InvalidRequest({ reason: `event ${e.eventId} is ${size} bytes; the limit is ${config.maxEventSize} bytes` })
        }
      }
      return undefined
    }

    const plan = (round: RoundState, command: WriteCommand, nowMicros: number, freshId: () => string): Effect.Effect<Plan> => {
      const invalid = validate(command)
      if (invalid !== undefined) return Effect.succeed({ _tag: "Fail", error: invalid })
      const planned: Effect.Effect<Plan, StorageCorrupt | DiskError> =
        command._tag === "Append" ? planAppend(round, command, nowMicros, freshId)
        : command._tag === "Delete" ? planDelete(round, command, nowMicros)
        : planSystem(round, command, nowMicros)
      return Effect.catchAll(planned, (error) => Effect.succeed({ _tag: "Fail", error } as Plan))
    }

    /** Flags the first and last record of an atomic unit. */
    const sealUnit = (records: Array<NewRecord>): Array<NewRecord> =>
      records.map((r, i) =>
        r.kind !== RecordKind.Event ? r : {
          ...r,
          flags: r.flags | (i === 0 ? EventFlags.BatchBegin : 0) | (i === records.length - 1 ? EventFlags.BatchEnd : 0)
        })

    const runRound = (batch: ReadonlyArray<Pending>) =>
      Effect.gen(function*() {
        const nowMicros = (yield* Clock.currentTimeMillis) * 1000
        // Fresh ids for undelete records come from Random, drawn once per round for determinism.
        const round = new RoundState()
        const plans: Array<Plan> = []
        for (const pending of batch) {
          // Ids for undelete records come from Random, two per command, so draws do not depend on decisions.
          const uuids = [yield* randomUuid, yield* randomUuid]
          let taken = 0
          const freshId = () => uuids[taken++ % uuids.length]!
          const p = yield* plan(round, pending.command, nowMicros, freshId)
          if (p._tag === "Write") {
            let size = 0
            for (const r of p.records) size += framedLength(r)
            if (size > log.maxUnitBytes) {
              plans.push({ _tag: "Fail", error: new InvalidRequest({ reason: `a write of ${size} bytes does not fit in a chunk of ${log.maxUnitBytes} bytes` }) })
              continue
            }
            // The encoder throws past the record body limit (a long stream name on top of a maximal event),
            // which would kill this fiber and leave every later command waiting: reject the write instead.
            const oversized = p.records.find((r) => bodyLength(r) > MAX_RECORD_BODY)
            if (oversized !== undefined) {
              plans.push({ _tag: "Fail", error: new InvalidRequest({ reason: `a record of ${bodyLength(oversized)} bytes exceeds the record limit of ${MAX_RECORD_BODY} bytes` }) })
              continue
            }
            for (const r of p.records) remember(round, r)
          }
          plans.push(p)
        }
        const units: Array<WriteUnit> = []
        const unitOf: Array<number> = []
        plans.forEach((p, i) => {
          if (p._tag === "Write" && p.records.length > 0) {
            unitOf[i] = units.length
            units.push({ records: sealUnit(p.records), completeChunkAfter: p.completeChunkAfter })
          }
        })
        if (units.length > 0) {
          const prepared = log.prepare(units)
          const written = yield* Effect.either(log.write(prepared))
          if (written._tag === "Left") {
            for (const pending of batch) yield* Deferred.fail(pending.deferred, written.left)
            return
          }
          const records: Array<LogRecord> = []
          units.forEach((unit, u) => unit.records.forEach((r, k) => records.push({ ...r, logPosition: prepared.positions[u]![k]! } as LogRecord)))
          readIndex.applyCommitted(records, prepared.endPosition)
          yield* onCommitted(records, prepared.endPosition)
          for (let i = 0; i < batch.length; i++) {
            const p = plans[i]!
            if (p._tag === "Write" && unitOf[i] !== undefined) {
              yield* Deferred.succeed(batch[i]!.deferred, p.answer(prepared.positions[unitOf[i]!]!))
            }
          }
        }
        for (let i = 0; i < batch.length; i++) {
          const p = plans[i]!
          const deferred = batch[i]!.deferred
          if (p._tag === "Fail") yield* Deferred.fail(deferred, p.error)
          else if (p._tag === "Write" && unitOf[i] === undefined) yield* Deferred.succeed(deferred, p.answer([]))
          else if (p._tag === "Idempotent") {
            const original = yield* Effect.either(readIndex.eventAt(p.stream, p.last))
            const position = original._tag === "Right" && original.right !== undefined ? original.right.logPosition : -1
            yield* Deferred.succeed(deferred, { _tag: "Appended", firstEventNumber: p.first, lastEventNumber: p.last, position, idempotent: true })
          }
        }
      })

    const loop = Effect.gen(function*() {
      const first = yield* Queue.take(queue)
      const rest = yield* Queue.takeUpTo(queue, config.maxBatchCommands - 1)
      yield* runRound([first, ...rest])
    }).pipe(Effect.forever)

    const submit = (command: WriteCommand): Effect.Effect<WriteResult, WriteError> =>
      Effect.flatMap(Deferred.make<WriteResult, WriteError>(), (deferred) =>
        Effect.zipRight(Queue.offer(queue, { command, deferred }), Deferred.await(deferred)))

    return { loop, submit, queue }
  })

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0")

const u32 = Effect.map(Random.next, (x) => Math.floor(x * 4294967296) >>> 0)

/** A version-4 UUID from Effect's Random service (deterministic under a seeded Random). */
export const randomUuid: Effect.Effect<string> = Effect.map(Effect.all([u32, u32, u32, u32]), ([a, b, c, d]) => {
  const timeHi = ((b & 0x0fff) | 0x4000) >>> 0
  const clock = ((c >>> 16) & 0x3fff) | 0x8000
  return `${hex(a, 8)}-${hex(b >>> 16, 4)}-${hex(timeHi & 0xffff, 4)}-${hex(clock, 4)}-${hex(c & 0xffff, 4)}${hex(d, 8)}`
})
