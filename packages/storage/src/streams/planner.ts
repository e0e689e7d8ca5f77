/**
 * Planning one write command: what records it writes and how it is answered, decided synchronously against
 * a `RoundView` — the committed state (from the read index's caches) overlaid with the decisions made
 * earlier in the same write round. A fact the view does not hold in memory throws `Miss`; the writer
 * loads it (`RoundView.load`) and plans the command again. Planning has no side effects: the writer folds
 * a plan's records into the view (`remember`) only once it accepts them.
 */
import { Effect } from "effect"
import { Prng, type DiskError } from "@vellum/platform"
import {
  InvalidRequest,
  StreamDeleted,
  type CommitTimeout,
  type NotLeader,
  WrongExpectedVersion,
  type StorageCorrupt,
  type StorageFailed,
  type WriteTimeout
} from "../errors.js"
import { EventFlags, RecordKind, type LogRecord } from "../log/records.js"
import { Miss, decideCommit, type CommitQuery, type KnownEvent, type SyncCommitState } from "./commitCheck.js"
import {
  isSoftDeleted as metaIsSoftDeleted,
  parseMetadata,
  softDeleteMetadata,
  withTruncateBefore
} from "./metadata.js"
import {
  DeletedStreamNumber,
  EpochInformationStream,
  EventTypes,
  ScavengePointsStream,
  isMetastream,
  isWellFormedText,
  metastreamOf,
  originalStreamOf
} from "./names.js"
import type { MetaInfo, ReadIndex } from "./ReadIndex.js"
import type { EventIdCache } from "../cache/EventIdCache.js"

export interface ProposedEvent {
  readonly eventId: string
  readonly eventType: string
  readonly isJson: boolean
  readonly data: Uint8Array
  readonly metadata: Uint8Array
}

export type WriteCommand =
  | {
      readonly _tag: "Append"
      readonly stream: string
      readonly expectedVersion: number
      readonly events: ReadonlyArray<ProposedEvent>
    }
  | {
      readonly _tag: "Delete"
      readonly stream: string
      readonly expectedVersion: number
      readonly hard: boolean
      readonly eventId: string
    }
  | {
      readonly _tag: "ScavengePoint"
      readonly eventId: string
      readonly effectiveNowMicros: number
      readonly threshold: number
    }
  | {
      readonly _tag: "Epoch"
      readonly epochId: string
      readonly leaderInstanceId: string
      readonly prevEpochPosition: number
      /** A clustered leader's epoch carries its election term; a single node numbers its epochs last + 1. */
      readonly epochNumber?: number
    }

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

export type WriteError =
  | WrongExpectedVersion
  | StreamDeleted
  | InvalidRequest
  | StorageFailed
  | StorageCorrupt
  | WriteTimeout
  | NotLeader
  | CommitTimeout
  | DiskError

/** A record being planned: its `logPosition` (-1 until then) is filled in once the log has placed it. */
export type PlannedRecord = LogRecord

export type Plan =
  | {
      readonly _tag: "Write"
      readonly records: Array<PlannedRecord>
      readonly completeChunkAfter: boolean
      readonly answer: (positions: ReadonlyArray<number>) => WriteResult
    }
  | { readonly _tag: "Idempotent"; readonly stream: string; readonly first: number; readonly last: number }
  | { readonly _tag: "Fail"; readonly error: WriteError }

export interface PlanLimits {
  /** data + metadata + 2 × type length, per event (the reference's 16 MiB − 10,000). */
  readonly maxEventSize: number
}

/** Version-4 UUIDs drawn synchronously from a PRNG seeded from Effect's Random once per round. */
export class UuidSource {
  private readonly prng: Prng
  constructor(seed: number) {
    this.prng = new Prng(seed)
  }
  next(): string {
    const p = this.prng
    const hex = (n: number, width: number) => (n >>> 0).toString(16).padStart(width, "0")
    return `${hex(p.nextU32(), 8)}-${hex(p.nextU32() & 0xffff, 4)}-4${hex(p.nextU32() & 0xfff, 3)}-${hex((p.nextU32() & 0x3fff) | 0x8000, 4)}-${hex(p.nextU32() & 0xffff, 4)}${hex(p.nextU32(), 8)}`
  }
}

/** The state one write round decides against: committed state plus the round's accepted plans. */
export class RoundView implements SyncCommitState {
  private readonly versions = new Map<string, number>()
  private readonly metas = new Map<string, MetaInfo>()
  /** Event ids read from the index for explicit-version retries, by `stream\0number`. */
  private readonly stored = new Map<string, string | undefined>()
  /** Event ids this round wrote, per stream: the ids of events `first`.. in order (not indexed yet). */
  private readonly written = new Map<string, { readonly first: number; readonly ids: Array<string> }>()
  /** Each id this round put into the event-id cache, and the entry it replaced (undefined: none). */
  private readonly putIds: Array<string> = []
  private readonly replaced: Array<KnownEvent | undefined> = []

  constructor(
    private readonly readIndex: ReadIndex,
    private readonly ids: EventIdCache
  ) {}

  lastEventNumber = (stream: string): number => {
    if (isMetastream(stream) && this.lastEventNumber(originalStreamOf(stream)) === DeletedStreamNumber)
      return DeletedStreamNumber
    const known = this.versions.get(stream) ?? this.readIndex.cachedLastEventNumber(stream)
    if (known === undefined) throw new Miss({ _tag: "LastEventNumber", stream })
    return known
  }

  metaInfo = (stream: string): MetaInfo => {
    const known = this.metas.get(stream) ?? this.readIndex.cachedMetaInfo(stream)
    if (known === undefined) throw new Miss({ _tag: "IsSoftDeleted", stream })
    return known
  }

  isSoftDeleted = (stream: string): boolean =>
    !isMetastream(stream) && metaIsSoftDeleted(this.metaInfo(stream).metadata)

  knownEvent = (eventId: string): KnownEvent | undefined => this.ids.get(eventId)

  storedEventId = (stream: string, eventNumber: number): string | undefined => {
    const mine = this.written.get(stream)
    if (mine !== undefined && eventNumber >= mine.first && eventNumber < mine.first + mine.ids.length)
      return mine.ids[eventNumber - mine.first]
    const key = `${stream}\u0000${eventNumber}`
    if (!this.stored.has(key)) throw new Miss({ _tag: "StoredEventId", stream, eventNumber })
    return this.stored.get(key)
  }

  /** Reads what a `Miss` asked for into the view (committed values; the round's own decisions win). */
  load(query: CommitQuery): Effect.Effect<void, StorageCorrupt | DiskError> {
    switch (query._tag) {
      case "LastEventNumber":
        return Effect.map(this.readIndex.lastEventNumber(query.stream), (n) => {
          if (!this.versions.has(query.stream)) this.versions.set(query.stream, n)
        })
      case "IsSoftDeleted":
        return Effect.map(this.readIndex.metaInfo(query.stream), (m) => {
          if (!this.metas.has(query.stream)) this.metas.set(query.stream, m)
        })
      case "StoredEventId":
        return Effect.map(this.readIndex.eventAt(query.stream, query.eventNumber), (e) => {
          this.stored.set(`${query.stream}\u0000${query.eventNumber}`, e?.eventId)
        })
    }
  }

  /** How many ids the view has put into the cache so far (where a later round's undo stops). */
  cachedIdCount(): number {
    return this.putIds.length
  }

  /**
   * The round (the rounds since `since`) was not written: the ids it put into the cache answer as before it. Forgetting them would
   * not do: an id the round resent (a retry mixing old and new events) keeps answering as its written copy.
   */
  undoCachedIds(since = 0): void {
    for (let i = this.putIds.length - 1; i >= since; i--) {
      const before = this.replaced[i]
      if (before === undefined) this.ids.forget(this.putIds[i]!)
      else this.ids.put(this.putIds[i]!, before)
    }
    this.putIds.length = since
    this.replaced.length = since
  }

  /** Folds an accepted record into the view (versions, metadata, the event-id cache). */
  remember(record: LogRecord): void {
    if (record.kind === RecordKind.ScavengePoint) return void this.versions.set(ScavengePointsStream, record.number)
    if (record.kind === RecordKind.Epoch) return void this.versions.set(EpochInformationStream, record.epochNumber)
    if (record.kind !== RecordKind.Event) return
    this.versions.set(record.stream, record.eventNumber)
    // Later commands of this round compare explicit-version retries against it (it is not indexed yet).
    // Kept per stream, not per event, so remembering an event costs no key string of its own.
    const mine = this.written.get(record.stream)
    if (mine !== undefined && mine.first + mine.ids.length === record.eventNumber) mine.ids.push(record.eventId)
    else this.written.set(record.stream, { first: record.eventNumber, ids: [record.eventId] })
    if ((record.flags & EventFlags.Tombstone) === 0) {
      this.putIds.push(record.eventId)
      this.replaced.push(
        this.ids.putReplacing(record.eventId, { stream: record.stream, eventNumber: record.eventNumber })
      )
    }
    if (isMetastream(record.stream)) {
      this.metas.set(originalStreamOf(record.stream), {
        metadata: parseMetadata(record.data, (record.flags & EventFlags.Json) !== 0),
        metaLastEventNumber: record.eventNumber,
        raw: record.data
      })
    }
  }
}

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)

const eventRecord = (
  stream: string,
  eventNumber: number,
  eventId: string,
  eventType: string,
  isJson: boolean,
  data: Uint8Array,
  metadata: Uint8Array,
  nowMicros: number,
  extraFlags = 0
): PlannedRecord => ({
  kind: RecordKind.Event,
  logPosition: -1,
  flags: (isJson ? EventFlags.Json : 0) | (eventType === EventTypes.LinkTo ? EventFlags.Link : 0) | extraFlags,
  eventNumber,
  createdMicros: nowMicros,
  eventId,
  stream,
  eventType,
  data: asBuffer(data),
  metadata: asBuffer(metadata)
})

/** The `$metadata` event that recreates a soft-deleted stream from `recreateFrom` (none if not JSON). */
const undeleteRecord = (stream: string, info: MetaInfo, recreateFrom: number, eventId: string, nowMicros: number) => {
  if (info.raw === undefined) return undefined
  const modified = withTruncateBefore(info.raw, recreateFrom)
  if (modified === undefined) return undefined
  return eventRecord(
    metastreamOf(stream),
    info.metaLastEventNumber + 1,
    eventId,
    EventTypes.Metadata,
    true,
    modified,
    Buffer.alloc(0),
    nowMicros
  )
}

/** Marks the first and last record of an atomic unit. */
const sealUnit = (records: Array<PlannedRecord>): Array<PlannedRecord> => {
  const first = records[0]
  const last = records[records.length - 1]
  if (first !== undefined && first.kind === RecordKind.Event)
    (first as { flags: number }).flags |= EventFlags.BatchBegin
  if (last !== undefined && last.kind === RecordKind.Event) (last as { flags: number }).flags |= EventFlags.BatchEnd
  return records
}

const validate = (command: WriteCommand, limits: PlanLimits): InvalidRequest | undefined => {
  if (command._tag !== "Append") return undefined
  for (const e of command.events) {
    if (e.eventType.length === 0) return new InvalidRequest({ message: "an event type must not be empty" })
    if (!isWellFormedText(e.eventType))
      return new InvalidRequest({ message: "an event type must be well-formed Unicode (it has a lone surrogate)" })
    const size = e.data.length + e.metadata.length + 2 * e.eventType.length
    if (size > limits.maxEventSize) {
      return new InvalidRequest({
        message: `event ${e.eventId} is ${size} bytes; the limit is ${limits.maxEventSize} bytes`
      })
    }
  }
  return undefined
}

const planAppend = (
  view: RoundView,
  command: Extract<WriteCommand, { _tag: "Append" }>,
  nowMicros: number,
  uuids: UuidSource
): Plan => {
  const { stream, expectedVersion, events } = command
  const eventIds = events.map((e) => e.eventId)
  const decision = decideCommit(view, stream, expectedVersion, eventIds)
  switch (decision._tag) {
    case "Deleted":
      return { _tag: "Fail", error: new StreamDeleted({ stream }) }
    case "WrongExpectedVersion":
      return {
        _tag: "Fail",
        error: new WrongExpectedVersion({ stream, expectedVersion, currentVersion: decision.current })
      }
    case "Idempotent":
      return { _tag: "Idempotent", stream, first: decision.first, last: decision.last }
    case "Ok":
      break
  }
  const metaWasSoftDeleted = isMetastream(stream) && view.isSoftDeleted(originalStreamOf(stream))
  const first = decision.current + 1
  const records = events.map((e, i) =>
    eventRecord(stream, first + i, e.eventId, e.eventType, e.isJson, e.data, e.metadata, nowMicros)
  )
  if (decision.softDeleted) {
    const undo = undeleteRecord(stream, view.metaInfo(stream), decision.current + 1, uuids.next(), nowMicros)
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
      raw: asBuffer(lastMeta.data)
    }
    const undo = undeleteRecord(original, written, view.lastEventNumber(original) + 1, uuids.next(), nowMicros)
    if (undo !== undefined) records.push(undo)
  }
  const count = events.length
  return {
    _tag: "Write",
    records: sealUnit(records),
    completeChunkAfter: false,
    answer: (positions) => ({
      _tag: "Appended",
      firstEventNumber: first,
      lastEventNumber: first + count - 1,
      position: count > 0 ? positions[count - 1]! : -1,
      idempotent: false
    })
  }
}

const planDelete = (view: RoundView, command: Extract<WriteCommand, { _tag: "Delete" }>, nowMicros: number): Plan => {
  const { stream, expectedVersion, hard, eventId } = command
  if (!hard && view.lastEventNumber(stream) === -1 && view.metaInfo(stream).metaLastEventNumber === -1) {
    return { _tag: "Fail", error: new WrongExpectedVersion({ stream, expectedVersion, currentVersion: -1 }) }
  }
  const decision = decideCommit(view, stream, expectedVersion, [eventId])
  if (decision._tag === "Deleted") return { _tag: "Fail", error: new StreamDeleted({ stream }) }
  if (decision._tag !== "Ok") {
    const currentVersion = decision._tag === "WrongExpectedVersion" ? decision.current : view.lastEventNumber(stream)
    return { _tag: "Fail", error: new WrongExpectedVersion({ stream, expectedVersion, currentVersion }) }
  }
  const record = hard
    ? eventRecord(
        stream,
        DeletedStreamNumber,
        eventId,
        EventTypes.StreamDeleted,
        false,
        Buffer.alloc(0),
        Buffer.alloc(0),
        nowMicros,
        EventFlags.Tombstone
      )
    : eventRecord(
        metastreamOf(stream),
        view.metaInfo(stream).metaLastEventNumber + 1,
        eventId,
        EventTypes.Metadata,
        true,
        softDeleteMetadata(),
        Buffer.alloc(0),
        nowMicros
      )
  return {
    _tag: "Write",
    records: sealUnit([record]),
    completeChunkAfter: false,
    answer: (positions) => ({ _tag: "Deleted", position: positions[0]! })
  }
}

const planSystem = (
  view: RoundView,
  command: Extract<WriteCommand, { _tag: "ScavengePoint" | "Epoch" }>,
  nowMicros: number
): Plan => {
  const stream = command._tag === "ScavengePoint" ? ScavengePointsStream : EpochInformationStream
  const number =
    command._tag === "Epoch" && command.epochNumber !== undefined
      ? command.epochNumber
      : view.lastEventNumber(stream) + 1
  const record: PlannedRecord =
    command._tag === "ScavengePoint"
      ? {
          kind: RecordKind.ScavengePoint,
          logPosition: -1,
          number,
          eventId: command.eventId,
          effectiveNowMicros: command.effectiveNowMicros,
          threshold: command.threshold,
          timeMicros: nowMicros
        }
      : {
          kind: RecordKind.Epoch,
          logPosition: -1,
          epochNumber: number,
          prevEpochPosition: command.prevEpochPosition,
          epochId: command.epochId,
          leaderInstanceId: command.leaderInstanceId,
          timeMicros: nowMicros
        }
  return {
    _tag: "Write",
    records: [record],
    completeChunkAfter: command._tag === "ScavengePoint",
    answer: (positions) => ({ _tag: "SystemRecordWritten", number, position: positions[0]! })
  }
}

/** Plans one command; throws `Miss` when the view needs a read first. */
export const planCommand = (
  view: RoundView,
  command: WriteCommand,
  nowMicros: number,
  uuids: UuidSource,
  limits: PlanLimits
): Plan => {
  const invalid = validate(command, limits)
  if (invalid !== undefined) return { _tag: "Fail", error: invalid }
  switch (command._tag) {
    case "Append":
      return planAppend(view, command, nowMicros, uuids)
    case "Delete":
      return planDelete(view, command, nowMicros)
    default:
      return planSystem(view, command, nowMicros)
  }
}
