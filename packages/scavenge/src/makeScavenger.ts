/**
 * The node's scavenger service: one run at a time, started in the background and answered at once,
 * observable while it runs, stoppable (the stop is answered once the run has stopped), with its history
 * written to `$scavenges`. A run works inside a fiber of its own so that a stop (an interruption of that
 * fiber) still lets the service write the run's `$scavengeCompleted` event.
 */
import { Cause, Clock, Effect, Exit, Fiber } from "effect"
import { BufferPool, EventStore, randomUuid } from "@vellum/storage"
import * as History from "./history/index.js"
import type { RunContext, RunEvents } from "./phases/RunContext.js"
import type { StateAccess } from "./phases/StateAccess.js"
import { describeError } from "./phases/errors.js"
import { runScavenge } from "./ScavengeRun.js"
import {
  ScavengeAlreadyRunning,
  ScavengeNotFound,
  type LastScavenge,
  type ScavengePhase,
  type ScavengeProgress,
  type ScavengeResult,
  type ScavengerService,
  type StartScavengeOptions
} from "./Scavenger.js"
import { makeThrottle } from "./Throttle.js"

export interface ScavengerSettings {
  /** `host:port` this node advertises (the history events' nodeEndpoint). */
  readonly nodeEndpoint: string
  readonly historyMaxAgeDays: number
  readonly disableMerging: boolean
  readonly unsafeIgnoreHardDeletes: boolean
}

const NoScavenge = "00000000-0000-0000-0000-000000000000"

interface Running {
  readonly scavengeId: string
  progress: ScavengeProgress
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  /** A stop came before the phases' fiber existed: it is interrupted as soon as it does. */
  stopRequested: boolean
  /** Completes when the run's outcome and history are written. */
  readonly finished: Effect.Latch
}

/** Builds the service over an opened state; runs live in `scope`. */
export const makeScavenger = <E>(settings: ScavengerSettings, state: StateAccess<E>) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const scope = yield* Effect.scope
    let running: Running | undefined
    let last: LastScavenge = { scavengeId: NoScavenge, result: "Unknown" }

    const withStore = <A, Err>(effect: Effect.Effect<A, Err, EventStore>) =>
      Effect.provideService(effect, EventStore, store)
    // History writes never fail a run: a history that cannot be written is logged.
    const record = <Err>(effect: Effect.Effect<void, Err, EventStore>) =>
      Effect.catchAll(withStore(effect), (e) => Effect.logWarning(`scavenge history not written: ${describeError(e)}`))

    const eventsFor = (scavengeId: string): RunEvents => {
      const identity = { scavengeId, nodeEndpoint: settings.nodeEndpoint }
      return {
        chunkExecuted: (e) =>
          record(
            History.chunksCompleted({
              ...identity,
              chunkStartNumber: e.startNumber,
              chunkEndNumber: e.endNumber,
              timeTakenMillis: e.timeTakenMillis,
              wasScavenged: true,
              spaceSaved: e.spaceSaved,
              errorMessage: ""
            })
          ),
        chunksMerged: (e) =>
          record(
            History.mergeCompleted({
              ...identity,
              chunkStartNumber: e.startNumber,
              chunkEndNumber: e.endNumber,
              timeTakenMillis: e.timeTakenMillis,
              spaceSaved: e.spaceSaved,
              wasMerged: e.error === undefined,
              errorMessage: e.error ?? ""
            })
          ),
        indexTableScavenged: (e) =>
          record(
            History.indexCompleted({
              ...identity,
              level: e.level,
              index: e.index,
              timeTakenMillis: e.timeTakenMillis,
              entriesDeleted: e.entriesDeleted,
              entriesKept: e.entriesKept,
              spaceSaved: e.spaceSaved,
              wasScavenged: true,
              errorMessage: ""
            })
          )
      }
    }

    /** The run itself: history start, the phases in a fiber of their own, the outcome. */
    const runOne = (run: Running, options: StartScavengeOptions) =>
      Effect.gen(function* () {
        const startedAt = yield* Clock.currentTimeMillis
        const totals = { spaceSaved: 0, maxChunkScavenged: 0, indexWork: false }
        // One pool of scratch buffers for the run's chunk passes, dropped with the run.
        const buffers = new BufferPool()
        yield* record(
          History.startRun({
            scavengeId: run.scavengeId,
            nodeEndpoint: settings.nodeEndpoint,
            historyMaxAgeDays: settings.historyMaxAgeDays
          })
        )
        const throttle = yield* makeThrottle(options.threads > 1 ? 100 : options.throttlePercent)
        const events = eventsFor(run.scavengeId)
        const makeContext = (sp: RunContext<E>["sp"]): RunContext<E> => ({
          engine: store.engine,
          state,
          sp,
          throttle,
          events,
          totals,
          buffers,
          options: {
            threads: Math.min(4, Math.max(1, options.threads)),
            unsafeIgnoreHardDeletes: settings.unsafeIgnoreHardDeletes,
            disableMerging: settings.disableMerging
          },
          progress: (phase: ScavengePhase, done: number, total: number) => {
            run.progress = { phase, done, total }
          }
        })
        const phases = runScavenge(store, state, makeContext, {
          syncOnly: options.syncOnly,
          threshold: options.threshold ?? 0
        })
        // `start` is uninterruptible (so a run is never half-registered) and a forked fiber inherits that: the
        // phases are made interruptible again, or a stop (an interruption) would wait for the whole run.
        const fiber = yield* Effect.fork(Effect.interruptible(phases))
        run.fiber = fiber
        if (run.stopRequested) yield* Fiber.interrupt(fiber)
        const exit = yield* Fiber.await(fiber)
        state.rollback() // whatever a stopped or failed phase had not committed
        const { result, error } = outcomeOf(exit)
        const timeTakenMillis = (yield* Clock.currentTimeMillis) - startedAt
        yield* Effect.logInfo(
          `Scavenge ${run.scavengeId} completed: ${result}${error === null ? "" : ` (${error})`}, ${totals.spaceSaved} bytes saved`
        )
        yield* record(
          History.completed({
            scavengeId: run.scavengeId,
            nodeEndpoint: settings.nodeEndpoint,
            result,
            error,
            timeTakenMillis,
            spaceSaved: totals.spaceSaved,
            maxChunkScavenged: totals.maxChunkScavenged
          })
        )
        last = { scavengeId: run.scavengeId, result: result === "Interrupted" ? "Stopped" : result }
        running = undefined
        yield* run.finished.open
      })

    const start = (options: StartScavengeOptions) =>
      Effect.gen(function* () {
        if (running !== undefined)
          return yield* Effect.fail(new ScavengeAlreadyRunning({ scavengeId: running.scavengeId }))
        const scavengeId = yield* randomUuid
        const run: Running = {
          scavengeId,
          progress: { phase: "Beginning", done: 0, total: 0 },
          fiber: undefined,
          stopRequested: false,
          finished: yield* Effect.makeLatch(false)
        }
        // Claimed before any yield to another fiber: a second start sees it and is refused.
        running = run
        last = { scavengeId, result: "InProgress" }
        // Interruptible too, so closing the scavenger's scope (a node shutdown) stops a run instead of waiting
        // for it; a run cut short there is closed as Interrupted at the next start (history repair).
        yield* Effect.forkIn(Effect.interruptible(runOne(run, options)), scope)
        return { scavengeId }
      })

    const stop = (scavengeId: string) =>
      Effect.gen(function* () {
        const run = running
        if (run === undefined || (scavengeId !== "current" && scavengeId !== run.scavengeId)) {
          return yield* Effect.fail(new ScavengeNotFound({ scavengeId }))
        }
        run.stopRequested = true
        if (run.fiber !== undefined) yield* Fiber.interrupt(run.fiber)
        yield* run.finished.await
        return { scavengeId: run.scavengeId }
      })

    const service: ScavengerService = {
      start: (options) => Effect.uninterruptible(start(options)),
      current: Effect.sync(() =>
        running === undefined ? undefined : { scavengeId: running.scavengeId, progress: running.progress }
      ),
      last: Effect.sync(() => last),
      checkpointStage: Effect.sync(() => state.checkpoint()?.stage),
      stop,
      mergeIndexes: Effect.gen(function* () {
        const mergeIndexesId = yield* randomUuid
        yield* Effect.forkIn(
          Effect.catchAll(store.engine.index.mergeAll, (e) =>
            Effect.logWarning(`index merge ${mergeIndexesId} failed: ${describeError(e)}`)
          ),
          scope
        )
        return { mergeIndexesId }
      })
    }
    return service
  })

const outcomeOf = (
  exit: Exit.Exit<unknown, unknown>
): { readonly result: ScavengeResult; readonly error: string | null } => {
  if (Exit.isSuccess(exit)) return { result: "Success", error: null }
  if (Exit.isInterrupted(exit)) return { result: "Stopped", error: null }
  return { result: "Errored", error: `Error while scavenging DB: ${describeError(Cause.squash(exit.cause))}.` }
}
