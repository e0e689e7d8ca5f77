/**
 * What `status` says: the leader-side state of a projection combined with the figures its runner reports, by
 * the reference's rules (`Running`, `Stopped`, `Completed`, `Faulted (Enabled)`, `Stopping/Running`, ...).
 */
import type { RunnerStatistics } from "../engine/ProjectionRunner.js"
import type { CheckpointTag } from "../persisted/checkpointTag.js"

/** The leader-side states a client can see (the transitional ones only while a command is under way). */
export type LeaderState =
  "Preparing" | "Starting" | "Running" | "Stopping" | "Aborting" | "Stopped" | "Completed" | "Faulted" | "Deleting"

/** The runner's own status text: its core status, `/Paused` while reading is paused, `/Writing results`. */
const coreStatusText = (figures: RunnerStatistics): string =>
  figures.status + (figures.paused ? "/Paused" : "") + (figures.writingResults ? "/Writing results" : "")

/**
 * The status text. Without figures (nothing ran or was loaded yet): the leader state alone. Otherwise the
 * runner's text, `Completed` for a completed projection whose runner stopped, prefixed by the leader state
 * when it does not already start with it; ` (Enabled)` added to a stopped or faulted projection still enabled.
 */
export const statusText = (leader: LeaderState, figures: RunnerStatistics | undefined, enabled: boolean): string => {
  if (figures === undefined) return leader
  const core = coreStatusText(figures)
  const text =
    leader === "Completed" && core === "Stopped" ? leader : core.startsWith(leader) ? core : `${leader}/${core}`
  return text + ((leader === "Stopped" || leader === "Faulted") && enabled ? " (Enabled)" : "")
}

/** Figures of a projection that has not reported any (a position nobody knows, nothing counted). */
export const noFigures: RunnerStatistics = {
  status: "Initial",
  paused: false,
  writingResults: false,
  position: undefined,
  lastCheckpoint: undefined,
  progress: -1,
  eventsProcessedAfterRestart: 0,
  partitionsCached: 0,
  bufferedEvents: 0,
  readsInProgress: 0,
  writesInProgress: 0,
  writePendingEventsBeforeCheckpoint: 0,
  writePendingEventsAfterCheckpoint: 0,
  checkpointStatus: "",
  coreProcessingTime: 0,
  lagBytes: 0,
  lagEvents: 0,
  lagMilliseconds: 0,
  stateBytes: 0,
  faultReason: undefined
}

/** Figures of a projection loaded stopped: where its last checkpoint left it. */
export const stoppedFigures = (checkpoint: CheckpointTag | undefined, stateBytes: number): RunnerStatistics => ({
  ...noFigures,
  status: "Stopped",
  position: checkpoint,
  lastCheckpoint: checkpoint,
  stateBytes
})
