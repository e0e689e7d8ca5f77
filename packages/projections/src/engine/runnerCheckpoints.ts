/**
 * When a runner checkpoints, and how: after enough handled events (and long enough since the last), or after
 * enough log skipped without one; a checkpoint first makes everything queued durable, then writes each changed
 * partition's `$Checkpoint`, then the root `$ProjectionCheckpoint` with the position. So a checkpoint never
 * claims writes that could still be lost, and a restart from it re-does only what came after.
 */
import { Clock, Effect, Schedule } from "effect"
import { ExpectedVersion, randomUuid, type AppendError, type EventStoreService } from "@vellum/storage"
import { encodeCheckpointTag, type CheckpointTag } from "../persisted/checkpointTag.js"
import { checkpointStream, partitionCheckpointStream, projectionEventTypes } from "../persisted/streamNames.js"
import { byEventType, byEventTypeCheckpoint } from "../system/index.js"
import { retryReads, writeCheckpointEvent, type CheckpointEvent } from "./checkpointStreams.js"
import { checkpointWrittenFromOutsideReason } from "./faultReasons.js"
import type { BatchContext } from "./processBatch.js"
import { runFault, type RunFault } from "./RunState.js"

export interface CheckpointContext extends BatchContext {
  readonly writer: EventStoreService
}

/** Whether the thresholds ask for a checkpoint now (the position has moved since the last one). */
export const shouldCheckpoint = ({ spec, state }: CheckpointContext): Effect.Effect<boolean> =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    const thresholds = spec.thresholds
    const handled =
      state.handledSinceCheckpoint >= thresholds.checkpointHandledThreshold &&
      now - state.lastCheckpointAtMs >= thresholds.checkpointAfterMs
    return handled || state.skippedBytesSinceCheckpoint > thresholds.checkpointUnhandledBytesThreshold
  })

/** An append tried again while its failure may pass (with the same event ids, so a retry is idempotent). */
const retryingAppend = <A>(stream: string, attempt: Effect.Effect<A, AppendError>): Effect.Effect<A, RunFault> =>
  attempt.pipe(
    Effect.retry({
      schedule: Schedule.exponential("50 millis").pipe(Schedule.union(Schedule.spaced("5 seconds"))),
      while: (error: AppendError) =>
        error._tag !== "WrongExpectedVersion" && error._tag !== "StreamDeleted" && error._tag !== "InvalidRequest"
    }),
    Effect.mapError((error) =>
      runFault(error._tag === "InvalidRequest" ? error.message : checkpointWrittenFromOutsideReason(stream))
    )
  )

/** Appends one checkpoint event. */
const append = (
  context: CheckpointContext,
  stream: string,
  expectedVersion: number,
  event: CheckpointEvent
): Effect.Effect<number, RunFault> =>
  Effect.gen(function* () {
    const ids = { metadata: yield* randomUuid, event: yield* randomUuid }
    const write = writeCheckpointEvent(context.writer, stream, expectedVersion, event, context.spec.version, ids)
    return yield* retryingAppend(stream, write)
  })

/**
 * `$by_event_type` also records its progress in `$et`, as the reference does at each checkpoint. Written here
 * rather than queued on the output writer: it is caused by no event, and its position is the last item's,
 * which the writer's causes must move past.
 */
const writeEventTypeProgress = (context: CheckpointContext, position: CheckpointTag): Effect.Effect<void, RunFault> =>
  Effect.gen(function* () {
    const progress = byEventTypeCheckpoint(encodeCheckpointTag(position))
    const event = {
      eventId: yield* randomUuid,
      eventType: progress.eventType,
      isJson: progress.isJson,
      data: Buffer.from(progress.data),
      metadata: Buffer.from(encodeCheckpointTag(position, context.spec.version))
    }
    yield* retryingAppend(progress.stream, context.writer.append(progress.stream, ExpectedVersion.Any, [event]))
  })

/** Flushes the output, writes the changed partitions' checkpoints and the root checkpoint at the position. */
export const writeCheckpoint = (
  context: CheckpointContext,
  flush: Effect.Effect<void, RunFault>
): Effect.Effect<void, RunFault> =>
  Effect.gen(function* () {
    const { spec, state } = context
    const position = state.position!
    state.checkpointStatus = "Requested"
    state.inCheckpoint = true
    yield* flush
    if (spec.system && spec.name === byEventType.name) yield* writeEventTypeProgress(context, position)
    const dirty = state.cache.dirty()
    state.checkpointStatus = `Writing (${dirty.length + 1})`
    for (const [partition, entry] of dirty) {
      const stream = partitionCheckpointStream(spec.name, partition)
      const version = entry.checkpointStreamVersion ?? (yield* retryReads(context.store.lastEventNumber(stream)))
      entry.checkpointStreamVersion = yield* append(context, stream, version, {
        eventType: projectionEventTypes.partitionCheckpoint,
        state: entry.state,
        result: entry.result,
        tag: entry.causedBy ?? position
      })
      entry.dirty = false
    }
    const root = state.cache.root
    state.rootCheckpointVersion = yield* append(context, checkpointStream(spec.name), state.rootCheckpointVersion, {
      eventType: projectionEventTypes.projectionCheckpoint,
      state: root.state,
      result: root.result,
      tag: position
    })
    state.lastCheckpoint = position
    state.handledSinceCheckpoint = 0
    state.skippedBytesSinceCheckpoint = 0
    state.lastCheckpointAtMs = yield* Clock.currentTimeMillis
    state.checkpointStatus = ""
    state.inCheckpoint = false
    // Queries keep every partition: their results are written from the cache at the end.
    if (!spec.stopOnEof) state.cache.evict()
  })
