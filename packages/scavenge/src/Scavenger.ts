/**
 * The node scavenger as the rest of the node sees it: start, observe, stop, and the index merge. The HTTP
 * admin routes and the simulator talk to this service only; `makeScavenger` (Scavenger layer) runs the
 * phases on the store.
 */
import { Context, Schema, type Effect } from "effect"

/** The options of `POST /admin/scavenge`, already validated. */
export interface StartScavengeOptions {
  /** 1..4: chunk execution runs this many chunks at once. */
  readonly threads: number
  /** Used only when this run writes a new scavenge point; undefined means 0. */
  readonly threshold: number | undefined
  /** 1..100 (100 when threads > 1): the share of time the run works rather than rests. */
  readonly throttlePercent: number
  /** Scavenge only to a point some node already wrote; never write a new one. */
  readonly syncOnly: boolean
  /** Accepted and ignored, as the reference does. */
  readonly startFromChunk: number
}

/** The phases of a run once it has its scavenge point, in the order they run. */
export const RunPhases = [
  "Accumulating",
  "Calculating",
  "ExecutingChunks",
  "MergingChunks",
  "ExecutingIndex",
  "Cleaning"
] as const

export type ScavengePhase =
  | "Beginning"
  | "Accumulating"
  | "Calculating"
  | "ExecutingChunks"
  | "MergingChunks"
  | "ExecutingIndex"
  | "Cleaning"
  | "Done"

/** Beyond the reference: where the running scavenge is (GET /admin/scavenge/current). */
export interface ScavengeProgress {
  readonly phase: ScavengePhase
  /** Units of the phase done and in all (chunks for accumulation and execution, streams for calculation). */
  readonly done: number
  readonly total: number
}

export type ScavengeResult = "Success" | "Stopped" | "Errored" | "Interrupted"

/** `GET /admin/scavenge/last`: kept in memory only, as in the reference. */
export interface LastScavenge {
  /** The all-zero GUID before any run since the process started. */
  readonly scavengeId: string
  readonly result: "Unknown" | "InProgress" | "Success" | "Stopped" | "Errored"
}

export class ScavengeAlreadyRunning extends Schema.TaggedError<ScavengeAlreadyRunning>()("ScavengeAlreadyRunning", {
  scavengeId: Schema.String
}) {
  override get message() {
    return "Scavenge is already running"
  }
}

export class ScavengeNotFound extends Schema.TaggedError<ScavengeNotFound>()("ScavengeNotFound", {
  scavengeId: Schema.String
}) {
  override get message() {
    return "Scavenge Id does not exist"
  }
}

export interface ScavengerService {
  /** Creates a run and answers at once with its id; the run goes on in the background. */
  readonly start: (
    options: StartScavengeOptions
  ) => Effect.Effect<{ readonly scavengeId: string }, ScavengeAlreadyRunning>
  /** The running scavenge, if any. */
  readonly current: Effect.Effect<{ readonly scavengeId: string; readonly progress: ScavengeProgress } | undefined>
  readonly last: Effect.Effect<LastScavenge>
  /**
   * Beyond the reference: the stage the scavenge state's last checkpoint records — the phase a running run
   * is in, or the phase a stopped, failed or cut-short run was in and resumes at; "Done" once the last run
   * finished; undefined before any run chose its scavenge point.
   */
  readonly checkpointStage: Effect.Effect<Exclude<ScavengePhase, "Beginning"> | undefined>
  /** Stops the run with this id (or the running one for "current"); completes once it has stopped. */
  readonly stop: (scavengeId: string) => Effect.Effect<{ readonly scavengeId: string }, ScavengeNotFound>
  /** Merges every index table into one (POST /admin/mergeindexes); answers once the merge has started. */
  readonly mergeIndexes: Effect.Effect<{ readonly mergeIndexesId: string }>
}

export class Scavenger extends Context.Tag("@vellum/scavenge/Scavenger")<Scavenger, ScavengerService>() {}
