/**
 * Runs one projection (see `ProjectionRunner.ts`): loads its checkpoint, then reads its source batch by
 * batch after its position, feeds the handler (`processBatch.ts`), queues what it writes on the output
 * writer, and checkpoints (`runnerCheckpoints.ts`). One fiber does all of it, so the run's state needs no
 * locks. It waits at the end of its source until a commit touches the source (or a periodic poll), pauses
 * reading while the output writer holds too much, and retries reads the store failed.
 */
import { Clock, Deferred, Effect, Exit, Fiber, Option, Queue } from "effect"
import { compareCheckpointTags, type CheckpointTag } from "../persisted/checkpointTag.js"
import type { SourceBatch } from "../sources/SourceReader.js"
import { readRootCheckpoint, readStoredPartition, retryReads } from "./checkpointStreams.js"
import { processBatch, type BatchContext } from "./processBatch.js"
import type {
  PartitionView,
  ProjectionRunner,
  RunnerOutcome,
  RunnerStatistics,
  StartProjectionRunner
} from "./ProjectionRunner.js"
import { queryResultWrites } from "./resultWrites.js"
import { refreshFaultedLag, refreshLag } from "./runnerLag.js"
import { shouldCheckpoint, writeCheckpoint } from "./runnerCheckpoints.js"
import { runFault, RunState, type RunFault } from "./RunState.js"

/** How often a runner at the end of its source reads again without a commit notice (a fallback). */
export const pollIntervalMs = 1000
/** How long a graceful stop waits for the queued writes and the final checkpoint. */
export const gracefulStopMillis = 10_000
/** Items per source read at most. */
export const maxBatchItems = 500
/** A query's position once its results are written. */
const resultsPhaseTag: CheckpointTag = { kind: "phase", phase: 1, completed: true }

export const startProjectionRunner: StartProjectionRunner = (spec, deps) =>
  Effect.gen(function* () {
    const output = yield* deps.output({
      name: spec.name,
      version: spec.version,
      trackEmittedStreams: spec.trackEmittedStreams,
      maxWriteBatchLength: spec.thresholds.maxWriteBatchLength,
      maxAllowedWritesInFlight: spec.thresholds.maxAllowedWritesInFlight
    })
    const state = new RunState()
    const wake = yield* Queue.sliding<void>(1)
    const outcome = yield* Deferred.make<RunnerOutcome>()
    const context: BatchContext = { spec, store: deps.store, handler: deps.handler, output, state }
    const checkpointContext = { ...context, writer: deps.writer }
    const batchSize = Math.max(
      1,
      Math.min(maxBatchItems, spec.thresholds.pendingEventsThreshold, spec.thresholds.checkpointHandledThreshold)
    )

    const outputFault = (fault: { readonly reason: string }): RunFault => runFault(fault.reason)
    const flush = Effect.mapError(output.flush, outputFault)
    /** Waits for a commit notice, a stop, or the poll interval. */
    const idle = (millis: number) => Effect.race(Queue.take(wake), Effect.sleep(millis))
    const positionMoved = () =>
      state.position !== undefined &&
      (state.lastCheckpoint === undefined || compareCheckpointTags(state.position, state.lastCheckpoint) !== 0)

    const load = Effect.gen(function* () {
      state.status = "LoadStateRequested"
      let position = deps.source.startTag
      if (spec.checkpointsEnabled) {
        const root = yield* retryReads(readRootCheckpoint(deps.store, spec))
        state.rootCheckpointVersion = root.lastEventNumber
        // Queries always start from the beginning, whatever they checkpointed.
        if (root.checkpoint !== undefined && !spec.stopOnEof) {
          position = root.checkpoint.tag
          state.lastCheckpoint = root.checkpoint.tag
          Object.assign(state.cache.root, { state: root.checkpoint.state, result: root.checkpoint.result })
          state.cache.root.causedBy = root.checkpoint.tag
          state.cache.root.known = true
        }
      }
      state.position = position
      state.lastCheckpointAtMs = yield* Clock.currentTimeMillis
      state.status = "StateLoaded"
    })

    /** A batch after the position; undefined when a stop was asked for while the store kept failing. */
    const read = Effect.gen(function* () {
      let backoff = 50
      for (;;) {
        state.readsInProgress = 1
        const batch = yield* Effect.either(deps.source.read(state.position!, batchSize))
        state.readsInProgress = 0
        if (batch._tag === "Right") return batch.right as SourceBatch | undefined
        if (state.stopRequested) return undefined
        yield* idle(backoff)
        backoff = Math.min(backoff * 2, 5000)
      }
    })

    const checkpoint = writeCheckpoint(checkpointContext, flush)

    const complete = Effect.gen(function* () {
      state.writingResults = true
      state.status = "CompletingPhase"
      const results = state.cache.all().map(([, entry]) => entry.result)
      output.enqueue({ tag: resultsPhaseTag, eventId: "", correlationId: undefined }, queryResultWrites(spec, results))
      yield* flush
      state.position = resultsPhaseTag
      state.progress = 100
      state.writingResults = false
      state.status = "Stopped"
      return { _tag: "Completed" } as RunnerOutcome
    })

    /**
     * A graceful stop writes what is queued and a final checkpoint, but waits for them only so long: on a disk
     * that stays full they would wait for ever, and the command with them. Stopping without them loses nothing:
     * the next run starts from the last checkpoint and finds what it writes again already written.
     */
    const stopGracefully = Effect.gen(function* () {
      state.status = "Stopping"
      const finished = yield* Effect.timeoutOption(
        Effect.gen(function* () {
          yield* flush
          if (spec.checkpointsEnabled && positionMoved()) yield* checkpoint
        }),
        gracefulStopMillis
      )
      if (Option.isNone(finished))
        yield* Effect.logWarning(
          `projection ${spec.name}: stopped without its final checkpoint (writes did not complete within ${gracefulStopMillis} ms)`
        )
      state.status = "Stopped"
      return { _tag: "Stopped" } as RunnerOutcome
    })

    const loop: Effect.Effect<RunnerOutcome, RunFault> = Effect.gen(function* () {
      yield* load
      state.status = "Running"
      for (;;) {
        if (state.stopRequested) return yield* stopGracefully
        const fault = output.fault()
        if (fault !== undefined) return yield* Effect.fail(outputFault(fault))
        if (output.pendingEvents() > spec.thresholds.pendingEventsThreshold) {
          // Back-pressure: read on once what is queued is written.
          state.paused = true
          yield* flush
          state.paused = false
          continue
        }
        const batch = yield* read
        if (batch === undefined || state.stopRequested) continue
        yield* processBatch(context, batch)
        yield* refreshLag(context, batch)
        if (spec.checkpointsEnabled && positionMoved() && (yield* shouldCheckpoint(checkpointContext)))
          yield* checkpoint
        if (!batch.atEnd) continue
        if (spec.stopOnEof) return yield* complete
        yield* idle(pollIntervalMs)
      }
    })

    const fault = (reason: string) =>
      Effect.gen(function* () {
        state.status = "Faulted"
        state.faultReason = reason
        state.paused = false
        deps.handler.forgetLiveState()
        yield* refreshFaultedLag(context)
        // No more batches: the lag keeps following the log from here on (for as long as the runner is kept).
        yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(1000), refreshFaultedLag(context))))
        return { _tag: "Faulted", reason } as RunnerOutcome
      })

    const fiber = yield* loop.pipe(
      Effect.catchAll((failure) => fault(failure.reason)),
      Effect.onExit((exit) => {
        state.done = true
        if (Exit.isSuccess(exit)) return Deferred.succeed(outcome, exit.value)
        if (Exit.isInterrupted(exit)) {
          state.status = "Stopped"
          return Deferred.succeed(outcome, { _tag: "Stopped" })
        }
        return Deferred.failCause(outcome, exit.cause)
      }),
      Effect.forkScoped
    )

    const statistics = (): RunnerStatistics => {
      const pending = output.pendingEvents()
      return {
        status: state.status,
        paused: state.paused,
        writingResults: state.writingResults,
        position: state.position,
        lastCheckpoint: state.lastCheckpoint,
        progress: state.progress,
        eventsProcessedAfterRestart: state.eventsProcessedAfterRestart,
        partitionsCached: state.cache.size,
        bufferedEvents: state.bufferedEvents,
        readsInProgress: state.readsInProgress,
        writesInProgress: output.writesInFlight(),
        writePendingEventsBeforeCheckpoint: state.inCheckpoint ? pending : 0,
        writePendingEventsAfterCheckpoint: state.inCheckpoint ? 0 : pending,
        checkpointStatus: state.checkpointStatus,
        coreProcessingTime: state.coreProcessingTime,
        lagBytes: state.lagBytes,
        lagEvents: state.lagEvents,
        lagMilliseconds: state.lagMilliseconds,
        stateBytes: state.cache.root.state.length,
        faultReason: state.faultReason
      }
    }

    const partition = (key: string): Effect.Effect<PartitionView> =>
      Effect.suspend(() => {
        const entry = state.cache.peek(key)
        if (entry !== undefined)
          return Effect.succeed({
            state: entry.state,
            result: entry.result,
            position: key === "" ? state.position : entry.causedBy
          })
        if (spec.stopOnEof || !spec.checkpointsEnabled)
          return Effect.succeed({ state: "", result: null, position: undefined })
        return readStoredPartition(deps.store, spec, key)
      })

    const runner: ProjectionRunner = {
      spec,
      statistics,
      outcome: Deferred.await(outcome),
      stop: (graceful) =>
        Effect.suspend(() => {
          if (state.done) return Effect.void
          if (!graceful) return Fiber.interrupt(fiber)
          state.stopRequested = true
          Queue.unsafeOffer(wake, undefined)
          return Effect.asVoid(Deferred.await(outcome))
        }),
      partition,
      onCommit: (streams) => {
        if (deps.source.touches(streams)) Queue.unsafeOffer(wake, undefined)
      }
    }
    return runner
  })
