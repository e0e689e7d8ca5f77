/**
 * The scavenge state as the phases use it (phases/StateAccess.ts): one long-lived session whose changes
 * since the last commit form the open transaction. `commit(checkpoint)` makes them durable with the
 * checkpoint and opens the next transaction; `rollback` forgets them (a stop). Lookups read your writes;
 * `activeStreams` and `checkpoint` read committed data (the calculator commits each batch before asking
 * for the next). The run that owns the session must be its only writer.
 */
import type { Disk, DiskError } from "@vellum/platform"
import { Effect } from "effect"
import { openScavengeState, type ScavengeStateOptions } from "./ScavengeState.js"
import type {
  Checkpoint,
  ChunkTimeRange,
  MetastreamData,
  NotResident,
  OriginalStreamData,
  ScavengeStateCounts,
  StateCorrupt
} from "./types.js"

/** What the phases read and change: read-your-writes lookups, changes made durable with a checkpoint. */
export interface StateAccess<E = never> {
  readonly checkpoint: () => Checkpoint | undefined
  /** A row may sit in a snapshot page that is not in memory: lookups are Effects... */
  readonly originalStream: (name: string) => Effect.Effect<OriginalStreamData | undefined, E>
  readonly metastream: (name: string) => Effect.Effect<MetastreamData | undefined, E>
  /** ...with a synchronous answer whenever no I/O is needed (NotResident otherwise), for per-record hot paths. */
  readonly peekOriginalStream: (name: string) => OriginalStreamData | undefined | NotResident
  readonly peekMetastream: (name: string) => MetastreamData | undefined | NotResident
  /** 0 when the chunk has no weight row. */
  readonly chunkWeight: (logicalChunk: number) => number
  readonly chunkTimeRange: (logicalChunk: number) => ChunkTimeRange | undefined
  /** Active original streams in ascending name order after `after` (all when undefined); committed data. */
  readonly activeStreams: (after: string | undefined, limit: number) => Effect.Effect<ReadonlyArray<string>, E>
  /** Visits every stream the state holds data for (original streams and metastreams), ascending by name. */
  readonly streamsWithData: (
    visit: (name: string, original: OriginalStreamData | undefined, metastream: MetastreamData | undefined) => void
  ) => Effect.Effect<void, E>
  /** Logical chunks with a non-zero weight, ascending. */
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

export type StateError = DiskError | StateCorrupt

export interface StateSession extends StateAccess<StateError> {
  readonly counts: () => ScavengeStateCounts
  readonly close: Effect.Effect<void, DiskError>
}

export const openStateSession = (
  dir: string,
  options: ScavengeStateOptions
): Effect.Effect<StateSession, StateError, Disk> =>
  Effect.map(openScavengeState(dir, options), (state) => {
    let tx = state.begin()
    return {
      checkpoint: state.checkpoint,
      originalStream: (name) => Effect.suspend(() => tx.originalStream(name)),
      metastream: (name) => Effect.suspend(() => tx.metastream(name)),
      peekOriginalStream: (name) => tx.peekOriginalStream(name),
      peekMetastream: (name) => tx.peekMetastream(name),
      chunkWeight: (n) => tx.chunkWeight(n) ?? 0,
      chunkTimeRange: (n) => tx.chunkTimeRange(n),
      activeStreams: (after, limit) =>
        Effect.map(state.activeStreams(after, limit), (rows) => rows.map(([name]) => name)),
      streamsWithData: (visit) => Effect.suspend(() => tx.streamsWithData(visit)),
      weightedChunks: () =>
        tx
          .chunkWeights()
          .filter((w) => w.weight !== 0)
          .map((w) => ({ chunk: w.logicalChunk, weight: w.weight })),
      setOriginalStream: (name, data) => tx.setOriginalStream(name, data),
      setMetastream: (name, data) => tx.setMetastream(name, data),
      addChunkWeight: (n, weight) => tx.addChunkWeight(n, weight),
      deleteChunkWeights: (from, to) => tx.deleteChunkWeights(from, to),
      setChunkTimeRange: (n, range) => tx.setChunkTimeRange(n, range),
      deleteAllMetastreams: () => tx.deleteAllMetastreams(),
      deleteSpentStreams: (includeArchived) => tx.deleteSpentStreams(includeArchived),
      commit: (checkpoint) =>
        Effect.suspend(() => {
          const committing = tx
          tx = state.begin()
          return committing.commit(checkpoint)
        }),
      rollback: () => {
        tx.rollback()
        tx = state.begin()
      },
      counts: state.counts,
      close: Effect.suspend(() => {
        tx.rollback()
        return state.close
      })
    }
  })
