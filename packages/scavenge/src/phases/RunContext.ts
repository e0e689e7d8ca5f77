/**
 * What every phase of one scavenge run works with: the store's engine, the state, the scavenge point, the
 * throttle, progress reporting and the history of the run.
 */
import type { Effect } from "effect"
import type { BufferPool, StorageEngine } from "@vellum/storage"
import type { Throttle } from "../Throttle.js"
import type { ScavengePhase } from "../Scavenger.js"
import type { ScavengePointInfo, StateAccess } from "./StateAccess.js"

/** History events a run emits as it goes (written to `$scavenges-{id}` by the history module). */
export interface RunEvents {
  readonly chunkExecuted: (e: {
    readonly startNumber: number
    readonly endNumber: number
    readonly timeTakenMillis: number
    readonly spaceSaved: number
  }) => Effect.Effect<void>
  readonly chunksMerged: (e: {
    readonly startNumber: number
    readonly endNumber: number
    readonly timeTakenMillis: number
    readonly spaceSaved: number
    readonly error: string | undefined
  }) => Effect.Effect<void>
  readonly indexTableScavenged: (e: {
    readonly level: number
    readonly index: number
    readonly timeTakenMillis: number
    readonly entriesDeleted: number
    readonly entriesKept: number
    readonly spaceSaved: number
  }) => Effect.Effect<void>
}

export interface RunOptions {
  readonly threads: number
  readonly unsafeIgnoreHardDeletes: boolean
  readonly disableMerging: boolean
}

export interface RunContext<E> {
  readonly engine: StorageEngine
  readonly state: StateAccess<E>
  readonly sp: ScavengePointInfo
  readonly throttle: Throttle
  readonly options: RunOptions
  readonly events: RunEvents
  readonly progress: (phase: ScavengePhase, done: number, total: number) => void
  /**
   * Running totals for the completion event, and whether this run moved any discard point or tombstoned a
   * stream (if not, the index holds nothing to drop and index execution is skipped).
   */
  readonly totals: { spaceSaved: number; maxChunkScavenged: number; indexWork: boolean }
  /** Scratch buffers the run's chunk passes (accumulation, rewrites, merges) hand to one another. */
  readonly buffers: BufferPool
}

/** Records or events handled between two throttle rests (and interruption checks), as the reference. */
export const REST_PERIOD = 1024

/**
 * How the phases read single records (calculation and index execution confirm whose an entry is): from the
 * file, not through the node's block cache, which millions of one-off reads would fill (its whole size on
 * top of the scavenge's memory) and empty of what readers need.
 */
export const UNCACHED = { uncached: true } as const
