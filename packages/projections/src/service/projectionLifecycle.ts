/**
 * One projection as the leader manages it: its definition, its leader-side state, and the runner running it
 * (kept after it completed or faulted, so its state and figures stay readable). The transitions here prepare
 * (compile and validate), start, stop, and load a projection stopped; the service decides when.
 */
import { Effect, Either, Exit, Scope } from "effect"
import type { ProjectionRunner, RunnerSpec, RunnerStatistics } from "../engine/ProjectionRunner.js"
import type { SourceDefinition } from "../language/SourceDefinition.js"
import type { DefinitionRecord } from "../persisted/definitionRecord.js"
import { isSystemProjectionName } from "../system/index.js"
import type { ProjectionsSettings } from "./Projections.js"
import { stoppedFigures, type LeaderState } from "./projectionStatus.js"
import type { QuerySpec, RunnerFactory } from "./RunnerFactory.js"
import { sourceDefinitionJson, sourceDefinitionOf } from "./sourceDefinitionJson.js"

interface Active {
  readonly runner: ProjectionRunner
  /** Closing it frees the runner (its sandbox, its reads). */
  readonly scope: Scope.CloseableScope
}

export interface Managed {
  readonly name: string
  /** The registry id (0 for a transient query). */
  readonly id: number
  /** The definition as last persisted (a transient query's is kept in memory only). */
  record: DefinitionRecord
  state: LeaderState
  /** The fault's reason while `Faulted`. */
  faultReason: string
  /** What the last successful preparation gave; undefined before one, or after it faulted. */
  definition: SourceDefinition | undefined
  active: Active | undefined
  /** Figures of a projection loaded stopped; undefined while nothing was loaded (status: the leader state). */
  figures: RunnerStatistics | undefined
  /** When a client last looked at it or changed it (a transient query expires without that). */
  lastAccessed: number
}

export const newManaged = (name: string, id: number, record: DefinitionRecord, now: number): Managed => ({
  name,
  id,
  record,
  state: "Stopped",
  faultReason: "",
  definition: sourceDefinitionOf(record.sourceDefinition),
  active: undefined,
  figures: undefined,
  lastAccessed: now
})

/** The figures shown now: the runner's, else those loaded with the projection stopped. */
export const figuresOf = (m: Managed): RunnerStatistics | undefined => m.active?.runner.statistics() ?? m.figures

export interface Lifecycle {
  /** Whether the projection is to run now (enabled, and `--run-projections` lets it run here). */
  readonly shouldRun: (m: Managed, record: DefinitionRecord) => boolean
  /**
   * Compiles and validates `record`'s query: the record with the source definition it gave (none when it
   * faulted: the projection is then `Faulted` with the reason).
   */
  readonly prepare: (m: Managed, record: DefinitionRecord) => Effect.Effect<DefinitionRecord>
  /** After a preparation: runs the projection if it should run, else loads it stopped (a fault stays). */
  readonly run: (m: Managed) => Effect.Effect<void>
  /** Stops and frees the runner, if any: graceful writes its last checkpoint, else nothing more is written. */
  readonly discard: (m: Managed, graceful: boolean) => Effect.Effect<void>
  readonly specOf: (m: Managed, definition: SourceDefinition) => RunnerSpec
}

export const makeLifecycle = (
  factory: RunnerFactory,
  settings: ProjectionsSettings,
  /** `--run-projections`: whether this projection may run at all. */
  allowedToRun: (name: string) => boolean
): Lifecycle => {
  const querySpecOf = (name: string, record: DefinitionRecord): QuerySpec => ({
    name,
    query: record.query ?? "",
    handlerType: record.handlerType ?? "JS",
    system: isSystemProjectionName(name),
    executionTimeoutMillis: record.projectionExecutionTimeout ?? settings.executionTimeoutMillis
  })

  const specOf = (m: Managed, definition: SourceDefinition): RunnerSpec => {
    const r = m.record
    const checkpointsEnabled = r.checkpointsDisabled !== true
    return {
      name: m.name,
      version: { projectionId: m.id, epoch: r.epoch ?? 0, version: r.version ?? 0 },
      mode: r.mode,
      definition,
      emitEnabled: r.emitEnabled === true,
      checkpointsEnabled,
      trackEmittedStreams: r.trackEmittedStreams === true,
      // Without checkpoints (queries) the checkpoint thresholds are 0, as the reference runs them.
      thresholds: {
        checkpointHandledThreshold: checkpointsEnabled ? r.checkpointHandledThreshold : 0,
        checkpointAfterMs: checkpointsEnabled ? r.checkpointAfterMs : 0,
        checkpointUnhandledBytesThreshold: checkpointsEnabled ? r.checkpointUnhandledBytesThreshold : 0,
        pendingEventsThreshold: r.pendingEventsThreshold,
        maxWriteBatchLength: r.maxWriteBatchLength,
        maxAllowedWritesInFlight: r.maxAllowedWritesInFlight
      },
      maxStateSizeBytes: settings.maxStateSizeBytes,
      stopOnEof: r.mode !== "Continuous",
      system: isSystemProjectionName(m.name)
    }
  }

  const fault = (m: Managed, reason: string) => {
    m.state = "Faulted"
    m.faultReason = reason
  }

  const prepare = (m: Managed, record: DefinitionRecord) =>
    Effect.gen(function* () {
      m.state = "Preparing"
      const prepared = yield* Effect.either(factory.prepare(querySpecOf(m.name, record)))
      if (Either.isLeft(prepared)) {
        m.definition = undefined
        m.figures = undefined
        fault(m, prepared.left.reason)
        return { ...record, sourceDefinition: undefined }
      }
      m.definition = prepared.right
      return { ...record, sourceDefinition: sourceDefinitionJson(prepared.right) }
    })

  const discard = (m: Managed, graceful: boolean) =>
    Effect.gen(function* () {
      const active = m.active
      if (active === undefined) return
      // No longer the projection's runner: its end is this stop, not a completion or fault to show.
      m.active = undefined
      m.state = graceful ? "Stopping" : "Aborting"
      yield* active.runner.stop(graceful)
      yield* Scope.close(active.scope, Exit.void)
    })

  const loadStopped = (m: Managed) =>
    Effect.gen(function* () {
      const definition = m.definition
      const root = definition === undefined ? undefined : yield* factory.storedPartition(specOf(m, definition), "")
      m.figures = stoppedFigures(root?.position, root?.state.length ?? 0)
      m.state = "Stopped"
    })

  /** Starts the runner; its end (completed, faulted) moves the projection on unless a command took over. */
  const start = (m: Managed, definition: SourceDefinition) =>
    Effect.gen(function* () {
      m.state = "Starting"
      const scope = yield* Scope.make()
      const started = yield* Effect.either(
        factory.start(querySpecOf(m.name, m.record), specOf(m, definition)).pipe(Scope.extend(scope))
      )
      if (Either.isLeft(started)) {
        yield* Scope.close(scope, Exit.void)
        m.figures = undefined
        return fault(m, started.left.reason)
      }
      const runner = started.right
      m.active = { runner, scope }
      m.figures = undefined
      m.state = "Running"
      yield* Effect.forkIn(
        Effect.map(runner.outcome, (outcome) => {
          if (m.active?.runner !== runner) return
          if (outcome._tag === "Completed") m.state = "Completed"
          else if (outcome._tag === "Faulted") fault(m, outcome.reason)
          else m.state = "Stopped"
        }),
        scope
      )
    })

  const shouldRun = (m: Managed, record: DefinitionRecord) => record.enabled && allowedToRun(m.name)

  const run = (m: Managed): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (m.definition === undefined) return Effect.void
      return shouldRun(m, m.record) ? start(m, m.definition) : loadStopped(m)
    })

  return { shouldRun, prepare, run, discard, specOf }
}
