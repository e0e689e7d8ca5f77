/** What one run of a projection keeps between batches; only the runner's fiber changes it. */
import type { CheckpointTag } from "../persisted/checkpointTag.js"
import { PartitionCache, emptyEntry } from "./PartitionCache.js"
import type { CoreStatus } from "./ProjectionRunner.js"

/** Why the run ends as Faulted (the reason `stateReason` shows). */
export interface RunFault {
  readonly _tag: "RunFault"
  readonly reason: string
}

export const runFault = (reason: string): RunFault => ({ _tag: "RunFault", reason })

export class RunState {
  status: CoreStatus = "Initial"
  paused = false
  writingResults = false
  /** Undefined until the checkpoint was loaded. */
  position: CheckpointTag | undefined = undefined
  lastCheckpoint: CheckpointTag | undefined = undefined
  progress = -1
  eventsProcessedAfterRestart = 0
  readsInProgress = 0
  bufferedEvents = 0
  checkpointStatus = ""
  inCheckpoint = false
  coreProcessingTime = 0
  lagBytes = 0
  lagEvents = 0
  lagMilliseconds = 0
  /**
   * Log position of what was processed last (the last item's record, or where a batch read to): lag is measured
   * from here. -1 before anything was read.
   */
  processedLogPosition = -1
  /** Clock time of the last lag refresh (lag costs a read of the log, so it is refreshed now and then). */
  lagRefreshedAtMs = Number.NEGATIVE_INFINITY
  faultReason: string | undefined = undefined
  readonly cache: PartitionCache
  /** The partition whose live state the handler holds (undefined: none, the next item loads its state). */
  livePartition: string | undefined = undefined
  handledSinceCheckpoint = 0
  skippedBytesSinceCheckpoint = 0
  lastCheckpointAtMs = 0
  /** Last event number of `$projections-{name}-checkpoint` (-1 none). */
  rootCheckpointVersion = -1
  stopRequested = false
  done = false

  constructor(cacheBound?: number) {
    this.cache = new PartitionCache(emptyEntry(), cacheBound)
  }
}
