/**
 * The reference model's inputs, outputs and carried state (a pure model of the scavenge rules that
 * the real scavenger is property-tested against). Everything is keyed by stream NAME: hash
 * collisions have no effect on outcomes in the reference, so the model has none.
 */
import type { LogRecord } from "@vellum/storage"

export interface ScavengePointSpec {
  /** Log position of the scavenge point record; only records strictly before it can be removed. */
  readonly position: number
  /** "Now" for `$maxAge`, µs since the Unix epoch. */
  readonly effectiveNowMicros: number
  /** Chunk-weight threshold of the run; the model's `keptInLog` ignores it (every chunk executed). */
  readonly threshold: number
}

export interface ModelInput {
  /**
   * The whole log in position order, AS WRITTEN (never the physically scavenged log): later runs pass the
   * same records plus whatever was appended since. What earlier runs removed is carried in `prior`.
   */
  readonly records: ReadonlyArray<LogRecord>
  /** Logical chunk of a record = floor(position / chunkSize). */
  readonly chunkSize: number
  readonly scavengePoint: ScavengePointSpec
  /** State carried from earlier runs (discard points only move forward); undefined = first run. */
  readonly prior?: ModelState
  readonly unsafeIgnoreHardDeletes?: boolean
}

/** Why a stream's row is (not) recalculated by the next run (upstream `CalculationStatus`). */
export type CalculationStatus = "Active" | "Spent" | "Archived"

/** The scavenging-relevant part of a stream's metadata; undefined = unset. */
export interface ScavengeLimits {
  readonly maxCount?: number
  /** Seconds. */
  readonly maxAge?: number
  /** Number.MAX_SAFE_INTEGER stands for long.MaxValue (soft delete). */
  readonly truncateBefore?: number
}

/** An original stream that has had metadata or a tombstone (upstream `OriginalStreamDatas`). */
export interface OriginalStreamState {
  readonly limits: ScavengeLimits
  readonly tombstoned: boolean
  /** First event number to keep for sure (definite removals are [0, discardPoint)). */
  readonly discardPoint: number
  /** First event number that is certainly not a maxAge candidate ([discardPoint, maybeDiscardPoint) is "maybe"). */
  readonly maybeDiscardPoint: number
  readonly status: CalculationStatus
}

/** A metadata stream `$$x` (upstream `MetastreamDatas`): only the latest in-order record survives. */
export interface MetastreamState {
  /** The original stream `x` was tombstoned: the whole metastream goes (even its last metadata record). */
  readonly tombstoned: boolean
  readonly discardPoint: number
}

/** Bounds on the record timestamps of one logical chunk, taken when it was accumulated. */
export interface ChunkTimeRange {
  readonly minMicros: number
  readonly maxMicros: number
}

export interface ModelState {
  /** The scavenge point this state was computed to; the next run accumulates only records after it. */
  readonly scavengePointPosition: number
  readonly originals: ReadonlyMap<string, OriginalStreamState>
  readonly metastreams: ReadonlyMap<string, MetastreamState>
  readonly chunkTimeRanges: ReadonlyMap<number, ChunkTimeRange>
  /** Weights of chunks that were not executed: they keep adding up across runs. */
  readonly pendingWeights: ReadonlyMap<number, number>
  /** Positions earlier runs removed from the chunks (removal is permanent). */
  readonly removedFromLog: ReadonlySet<number>
  /** Index keys (`indexKey`) earlier runs removed from the index. */
  readonly removedFromIndex: ReadonlySet<string>
}

export interface ModelOutput {
  /** Positions of records that stay in the chunks when EVERY chunk before the SP is executed (threshold -1). */
  readonly keptInLog: ReadonlySet<number>
  /** (stream, eventNumber) pairs whose index entries survive index execution (definite discard points only). */
  readonly keptInIndex: ReadonlySet<string>
  /** Per logical chunk, the weight the run adds — for threshold checks. Chunks adding 0 are absent. */
  readonly weights: ReadonlyMap<number, number>
  /** The state after this run with every chunk executed (use `executeWithThreshold` for other thresholds). */
  readonly state: ModelState
}

/** The key of an index entry in `keptInIndex` / `removedFromIndex`. */
export const indexKey = (stream: string, eventNumber: number): string => `${stream}\u0000${eventNumber}`
