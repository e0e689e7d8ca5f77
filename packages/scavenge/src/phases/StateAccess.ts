/**
 * What the phases need of the persisted scavenge state: read-your-writes lookups and changes that become
 * durable together with a checkpoint (`commit`), or are dropped (`rollback`) when a stop or crash comes
 * first. `stateAccess.ts` adapts the durable store to this.
 */
import type { Effect } from "effect"
import type { Checkpoint, ChunkTimeRange, MetastreamData, OriginalStreamData } from "../state/types.js"

export type { Checkpoint, ChunkTimeRange, MetastreamData, OriginalStreamData, ScavengePointInfo } from "../state/types.js"
export type StreamStatus = OriginalStreamData["status"]

export const emptyOriginal: OriginalStreamData = {
  isTombstoned: false, maxAgeSeconds: undefined, maxCount: undefined, truncateBefore: undefined, discardPoint: 0, maybeDiscardPoint: 0, status: "Active"
}

export interface StateAccess<E = never> {
  readonly checkpoint: () => Checkpoint | undefined
  readonly originalStream: (name: string) => OriginalStreamData | undefined
  readonly metastream: (name: string) => MetastreamData | undefined
  readonly chunkWeight: (logicalChunk: number) => number
  readonly chunkTimeRange: (logicalChunk: number) => ChunkTimeRange | undefined
  /** Active original streams in ascending name order after `after` (all when undefined). */
  readonly activeStreams: (after: string | undefined, limit: number) => ReadonlyArray<string>
  /** Every stream the state holds data for: original streams and metastreams. */
  readonly streamsWithData: () => Iterable<string>
  /** Logical chunks with a non-zero weight. */
  readonly weightedChunks: () => ReadonlyArray<{ readonly chunk: number; readonly weight: number }>
  readonly setOriginalStream: (name: string, data: OriginalStreamData) => void
  readonly setMetastream: (name: string, data: MetastreamData) => void
  readonly addChunkWeight: (logicalChunk: number, weight: number) => void
  readonly deleteChunkWeights: (fromChunk: number, toChunk: number) => void
  readonly setChunkTimeRange: (logicalChunk: number, range: ChunkTimeRange) => void
  readonly deleteAllMetastreams: () => void
  readonly deleteSpentStreams: (includeArchived: boolean) => void
  /** Makes every change since the last commit durable together with `checkpoint`. */
  readonly commit: (checkpoint: Checkpoint) => Effect.Effect<void, E>
  /** Forgets every change since the last commit. */
  readonly rollback: () => void
}
