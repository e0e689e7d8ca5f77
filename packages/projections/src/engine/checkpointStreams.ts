/**
 * Reading and writing a projection's checkpoint streams: the root checkpoint (`$ProjectionCheckpoint` in
 * `$projections-{name}-checkpoint`, position and root state) and each partition's (`$Checkpoint` in
 * `$projections-{name}-{p}-checkpoint`). A checkpoint counts only when this projection wrote it in its current
 * epoch: a reset starts a new epoch, and what older epochs wrote is ignored.
 */
import { Effect, Schedule } from "effect"
import {
  ExpectedVersion,
  type AppendError,
  type EventRecord,
  type EventStoreService,
  type ReadFailure
} from "@vellum/storage"
import {
  checkpointStreamMetadata,
  compareCheckpointTags,
  decodeCheckpointState,
  decodeCheckpointTag,
  encodeCheckpointState,
  encodeCheckpointTag,
  type CheckpointTag,
  type ProjectionVersion
} from "../persisted/checkpointTag.js"
import { checkpointStream, partitionCheckpointStream, projectionEventTypes } from "../persisted/streamNames.js"
import type { PartitionView, RunnerSpec } from "./ProjectionRunner.js"

/** What a checkpoint stream's last event says, when it counts. */
export interface StoredCheckpoint {
  readonly tag: CheckpointTag
  readonly state: string
  readonly result: string | null
}

/** A checkpoint stream as last read: its last event number (-1 none) and the checkpoint, when it counts. */
export interface CheckpointStreamState {
  readonly lastEventNumber: number
  readonly checkpoint: StoredCheckpoint | undefined
}

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString("utf8")

/** The checkpoint an event carries, when it is of `eventType` and written by `version`'s projection and epoch. */
export const checkpointOf = (
  record: EventRecord,
  eventType: string,
  version: ProjectionVersion
): StoredCheckpoint | undefined => {
  if (record.eventType !== eventType) return undefined
  const position = decodeCheckpointTag(text(record.metadata))
  if (position === undefined) return undefined
  if (position.projectionId !== undefined && position.projectionId !== version.projectionId) return undefined
  if (position.epoch !== version.epoch) return undefined
  const state = decodeCheckpointState(text(record.data))
  if (state === undefined) return undefined
  return { tag: position.tag, state: state.state, result: state.result ?? null }
}

/** Reads the last event of a checkpoint stream. */
export const readCheckpointStream = (
  store: EventStoreService,
  stream: string,
  eventType: string,
  version: ProjectionVersion
): Effect.Effect<CheckpointStreamState, ReadFailure> =>
  Effect.gen(function* () {
    const read = yield* store.readEvent(stream, -1)
    if (read._tag !== "Success" || read.event.event === undefined)
      return { lastEventNumber: yield* store.lastEventNumber(stream), checkpoint: undefined }
    const record = read.event.event
    return { lastEventNumber: record.eventNumber, checkpoint: checkpointOf(record, eventType, version) }
  })

export const readRootCheckpoint = (store: EventStoreService, spec: Pick<RunnerSpec, "name" | "version">) =>
  readCheckpointStream(store, checkpointStream(spec.name), projectionEventTypes.projectionCheckpoint, spec.version)

/** How far back a partition's checkpoint is looked for (its stream keeps two: `$maxCount` 2). */
const partitionCheckpointsRead = 10

/**
 * A partition's newest checkpoint whose position `accepts` (its order against a bound: -1 before, 0 at, 1 after,
 * undefined when the two cannot be ordered).
 */
const newestPartitionCheckpoint = (
  store: EventStoreService,
  spec: Pick<RunnerSpec, "name" | "version">,
  partition: string,
  bound: CheckpointTag,
  accepts: (order: -1 | 0 | 1 | undefined) => boolean
): Effect.Effect<CheckpointStreamState, ReadFailure> =>
  Effect.gen(function* () {
    const stream = partitionCheckpointStream(spec.name, partition)
    const read = yield* store.readStreamBackward(stream, -1, partitionCheckpointsRead)
    if (read._tag !== "Success") return { lastEventNumber: yield* store.lastEventNumber(stream), checkpoint: undefined }
    for (const resolved of read.events) {
      const record = resolved.event
      if (record === undefined) continue
      const checkpoint = checkpointOf(record, projectionEventTypes.partitionCheckpoint, spec.version)
      if (checkpoint !== undefined && accepts(compareCheckpointTags(checkpoint.tag, bound)))
        return { lastEventNumber: read.lastEventNumber, checkpoint }
    }
    return { lastEventNumber: read.lastEventNumber, checkpoint: undefined }
  })

/**
 * A partition's checkpoint for a run that resumes before `before` (the first item of the partition it is to
 * process): the newest one written before that item. A checkpoint writes the partitions' `$Checkpoint`s before
 * the root's `$ProjectionCheckpoint`, so a checkpoint cut short (a crash) can leave a partition's state of an
 * item the run will process again: taking it would apply that item twice. Positions that cannot be ordered
 * against `before` are taken as they are.
 */
export const readPartitionCheckpointBefore = (
  store: EventStoreService,
  spec: Pick<RunnerSpec, "name" | "version">,
  partition: string,
  before: CheckpointTag
): Effect.Effect<CheckpointStreamState, ReadFailure> =>
  newestPartitionCheckpoint(store, spec, partition, before, (order) => order === -1 || order === undefined)

/** A read the store failed is tried again, backing off up to a few seconds (a disk error may pass). */
export const retryReads = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A> =>
  Effect.retry(effect, Schedule.exponential("50 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))).pipe(
    Effect.orDie
  )

/**
 * A stopped projection's partition ("" = root) as its checkpoint streams hold it: a partition as of the root
 * checkpoint (a checkpoint cut short may have written its state past it), none without a root checkpoint.
 */
export const readStoredPartition = (
  store: EventStoreService,
  spec: RunnerSpec,
  partition: string
): Effect.Effect<PartitionView> =>
  Effect.map(
    retryReads(
      Effect.flatMap(readRootCheckpoint(store, spec), (root) =>
        partition === "" || root.checkpoint === undefined
          ? Effect.succeed(partition === "" ? root : { lastEventNumber: -1, checkpoint: undefined })
          : newestPartitionCheckpoint(store, spec, partition, root.checkpoint.tag, (order) => order !== 1)
      )
    ),
    ({ checkpoint }): PartitionView =>
      checkpoint === undefined
        ? { state: "", result: null, position: undefined }
        : { state: checkpoint.state, result: checkpoint.result, position: checkpoint.tag }
  )

/** What a checkpoint event records. */
export interface CheckpointEvent {
  readonly eventType: string
  readonly state: string
  readonly result: string | null
  readonly tag: CheckpointTag
}

/** One checkpoint event: `[state]`/`[state,result]` with the position (and `$v`) as its metadata. */
export const writeCheckpointEvent = (
  writer: EventStoreService,
  stream: string,
  expectedVersion: number,
  event: CheckpointEvent,
  version: ProjectionVersion,
  eventIds: { readonly metadata: string; readonly event: string }
): Effect.Effect<number, AppendError> =>
  Effect.gen(function* () {
    if (expectedVersion === ExpectedVersion.NoStream) {
      yield* writer.setStreamMetadata(stream, ExpectedVersion.Any, Buffer.from(checkpointStreamMetadata), {
        eventId: eventIds.metadata,
        isJson: true
      })
    }
    const appended = yield* writer.append(stream, expectedVersion, [
      {
        eventId: eventIds.event,
        eventType: event.eventType,
        isJson: true,
        // No state leaves no room for a result: `[]`.
        data: Buffer.from(encodeCheckpointState(event.state, event.state === "" ? null : event.result)),
        metadata: Buffer.from(encodeCheckpointTag(event.tag, version))
      }
    ])
    return appended.lastEventNumber
  })
