/**
 * One projection running on the leader: it reads its source after its last checkpoint, feeds the handler,
 * writes what the handler emits and its results (exactly once across restarts: a re-processed event's writes
 * are found already written and skipped), and checkpoints. The management service starts one per running
 * projection and keeps it after it ends (completed or faulted), so state, result and figures stay readable.
 */
import type { Effect, Scope } from "effect"
import type { EventStoreService } from "@vellum/storage"
import type { SourceDefinition } from "../language/SourceDefinition.js"
import type { CheckpointTag, ProjectionVersion } from "../persisted/checkpointTag.js"
import type { ProjectionMode } from "../persisted/definitionRecord.js"
import type { SourceReader } from "../sources/SourceReader.js"
import type { MakeOutputWriter } from "./OutputWriter.js"
import type { ProjectionHandler } from "./ProjectionHandler.js"

/** The worker-side status names of the reference (`status` in statistics is built from these). */
export type CoreStatus =
  | "Initial"
  | "LoadStateRequested"
  | "StateLoaded"
  | "Subscribed"
  | "Running"
  | "Stopping"
  | "Stopped"
  | "FaultedStopping"
  | "Faulted"
  | "CompletingPhase"
  | "PhaseCompleted"
  | "Suspended"

/** The per-projection settings the definition record carries (checkpoint and write thresholds). */
export interface RunnerThresholds {
  readonly checkpointHandledThreshold: number
  readonly checkpointAfterMs: number
  readonly checkpointUnhandledBytesThreshold: number
  readonly pendingEventsThreshold: number
  readonly maxWriteBatchLength: number
  /** 0 = unbounded. */
  readonly maxAllowedWritesInFlight: number
}

export interface RunnerSpec {
  readonly name: string
  /** Projection id, epoch and definition version: stamped as `$v` on every write. Id 0 for a transient query. */
  readonly version: ProjectionVersion
  readonly mode: ProjectionMode
  /** Already validated. */
  readonly definition: SourceDefinition
  readonly emitEnabled: boolean
  /** Checkpoints are written (and, for a continuous projection, resumed from). */
  readonly checkpointsEnabled: boolean
  readonly trackEmittedStreams: boolean
  readonly thresholds: RunnerThresholds
  /** `MaxProjectionStateSize`: state + result text length above this faults the projection. */
  readonly maxStateSizeBytes: number
  /** One-time and transient projections stop at the end of their source, write their results, and complete. */
  readonly stopOnEof: boolean
  /** A system projection: no state, results or partitions; only its writes. */
  readonly system: boolean
}

export type RunnerOutcome =
  { readonly _tag: "Completed" } | { readonly _tag: "Stopped" } | { readonly _tag: "Faulted"; readonly reason: string }

export interface RunnerStatistics {
  readonly status: CoreStatus
  /** Reading is paused for back-pressure (`/Paused`). */
  readonly paused: boolean
  /** A query's second phase is writing results (`/Writing results`). */
  readonly writingResults: boolean
  /** Last processed position; undefined before the checkpoint was loaded. */
  readonly position: CheckpointTag | undefined
  /** Position of the last written checkpoint; undefined when none. */
  readonly lastCheckpoint: CheckpointTag | undefined
  /** Percent 0..100; -1 unknown; 100 once completed. */
  readonly progress: number
  readonly eventsProcessedAfterRestart: number
  readonly partitionsCached: number
  readonly bufferedEvents: number
  readonly readsInProgress: number
  readonly writesInProgress: number
  readonly writePendingEventsBeforeCheckpoint: number
  readonly writePendingEventsAfterCheckpoint: number
  /** "", "Requested" or "Writing (n)". */
  readonly checkpointStatus: string
  /** Milliseconds spent in the handler. */
  readonly coreProcessingTime: number
  /** Beyond the reference: log bytes between the position and the committed end of the log. */
  readonly lagBytes: number
  /** Beyond the reference: committed events after the position (counted up to a bound, see the runner). */
  readonly lagEvents: number
  /** Beyond the reference: age of the newest committed record not yet processed, 0 when caught up. */
  readonly lagMilliseconds: number
  /** Beyond the reference: length of the root state text (the shared state for bi-state). */
  readonly stateBytes: number
  /** The fault's reason while faulted, else undefined. */
  readonly faultReason: string | undefined
}

/** A partition's state as `GET state` and `GET result` show it. */
export interface PartitionView {
  /** Stored state text ("" when none yet). */
  readonly state: string
  /** Result text, null when none. */
  readonly result: string | null
  /** Where the projection was when this was the partition's state; undefined before it processed anything. */
  readonly position: CheckpointTag | undefined
}

export interface ProjectionRunner {
  readonly spec: RunnerSpec
  readonly statistics: () => RunnerStatistics
  /** Ends once the runner completed, faulted, or was stopped (it stays readable afterwards). */
  readonly outcome: Effect.Effect<RunnerOutcome>
  /**
   * Stops processing. Graceful: writes in flight are finished and a final checkpoint written (when the position
   * moved since the last); not graceful (abort, loss of leadership): nothing more is written.
   */
  readonly stop: (graceful: boolean) => Effect.Effect<void>
  /** A partition's state: from the cache, else its checkpoint stream; "" is the root (shared for bi-state). */
  readonly partition: (partition: string) => Effect.Effect<PartitionView>
  /** Something was committed to these streams: the runner reads on if its source is touched. */
  readonly onCommit: (streams: ReadonlyArray<string>) => void
}

/** What a runner is started over. */
export interface RunnerDeps {
  /** Reads (sources, checkpoints, ownership checks). */
  readonly store: EventStoreService
  /** Writes: the leader-only store, so a node that lost the lead writes nothing. */
  readonly writer: EventStoreService
  readonly source: SourceReader
  readonly handler: ProjectionHandler
  /** Where the runner's writes go (`engine/output/`'s writer; a fake in the runner's own tests). */
  readonly output: MakeOutputWriter
}

/** Starts a runner (in the scope's lifetime: closing it stops the runner without a final checkpoint). */
export type StartProjectionRunner = (
  spec: RunnerSpec,
  deps: RunnerDeps
) => Effect.Effect<ProjectionRunner, never, Scope.Scope>
