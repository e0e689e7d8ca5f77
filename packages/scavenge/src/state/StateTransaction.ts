/**
 * A transaction on the scavenge state: plain synchronous reads and writes over a private overlay (the
 * accumulator and calculator touch thousands of rows per transaction, so no Effect per row), then one
 * `commit(checkpoint)` that makes the overlay and the checkpoint durable together.
 *
 * The overlay is the transaction's net change (final value or deletion per key), so a key written many
 * times costs one journal entry, and `addChunkWeight` reads its own earlier additions. Reads see the
 * committed state plus the overlay; nothing outside the transaction sees the overlay before the commit.
 */
import type { DiskError } from "@vellum/platform"
import type { Effect } from "effect"
import type { StateTables } from "./StateTables.js"
import type { Checkpoint, ChunkTimeRange, ChunkWeight, MetastreamData, OriginalStreamData, StateChange } from "./types.js"

export interface StateTransaction {
  readonly originalStream: (name: string) => OriginalStreamData | undefined
  readonly metastream: (name: string) => MetastreamData | undefined
  /** undefined when the chunk has no weight row. */
  readonly chunkWeight: (logicalChunk: number) => number | undefined
  readonly chunkTimeRange: (logicalChunk: number) => ChunkTimeRange | undefined
  /** Every weight row, by ascending logical chunk. */
  readonly chunkWeights: () => Array<ChunkWeight>
  /** Names of every original stream and metastream with a row. */
  readonly streamNames: () => Array<string>
  readonly setOriginalStream: (name: string, data: OriginalStreamData) => void
  readonly setMetastream: (name: string, data: MetastreamData) => void
  readonly addChunkWeight: (logicalChunk: number, weight: number) => void
  /** Deletes the weight rows of logical chunks `from..to`, both inclusive (a physical chunk's range). */
  readonly deleteChunkWeights: (from: number, to: number) => void
  readonly setChunkTimeRange: (logicalChunk: number, range: ChunkTimeRange) => void
  /** Cleaning: every metastream row goes. */
  readonly deleteAllMetastreams: () => void
  /** Cleaning: original streams with status Spent go, and Archived ones too when `includeArchived`. */
  readonly deleteSpentStreams: (includeArchived: boolean) => void
  /**
   * Makes every change of this transaction and `checkpoint` durable in one write and one sync, then
   * publishes them. The transaction is over afterwards (even if the commit fails: the state is then
   * failed and must be reopened).
   */
  readonly commit: (checkpoint: Checkpoint) => Effect.Effect<void, DiskError>
}

interface MutableChange {
  clearMetastreams: boolean
  readonly originals: Map<string, OriginalStreamData | null>
  readonly metastreams: Map<string, MetastreamData | null>
  readonly weights: Map<number, number | null>
  readonly timeRanges: Map<number, ChunkTimeRange | null>
}

/** The overlay value of `key`, else the committed one; `null` (deleted here) reads as undefined. */
const overlaid = <K, V>(pending: ReadonlyMap<K, V | null>, key: K, committed: () => V | undefined): V | undefined =>
  pending.has(key) ? pending.get(key) ?? undefined : committed()

export class Transaction implements StateTransaction {
  private finished = false
  private readonly change: MutableChange = {
    clearMetastreams: false, originals: new Map(), metastreams: new Map(), weights: new Map(), timeRanges: new Map()
  }

  constructor(
    private readonly tables: StateTables,
    private readonly commitChange: (change: StateChange) => Effect.Effect<void, DiskError>
  ) {}

  /** Ends the transaction without committing; idempotent. */
  readonly rollback = (): void => {
    this.finished = true
  }

  private open(): MutableChange {
    if (this.finished) throw new Error("scavenge state transaction is already committed or rolled back")
    return this.change
  }

  readonly originalStream = (name: string) => overlaid(this.open().originals, name, () => this.tables.originals.get(name))

  readonly metastream = (name: string) => {
    const change = this.open()
    return overlaid(change.metastreams, name, () => (change.clearMetastreams ? undefined : this.tables.metastreams.get(name)))
  }

  readonly chunkWeight = (logicalChunk: number) => overlaid(this.open().weights, logicalChunk, () => this.tables.weights.get(logicalChunk))

  readonly chunkTimeRange = (logicalChunk: number) =>
    overlaid(this.open().timeRanges, logicalChunk, () => this.tables.timeRanges.get(logicalChunk))

  readonly chunkWeights = () => {
    const chunks = new Set([...this.tables.weights.keys(), ...this.open().weights.keys()])
    return [...chunks].sort((a, b) => a - b).flatMap((logicalChunk) => {
      const weight = this.chunkWeight(logicalChunk)
      return weight === undefined ? [] : [{ logicalChunk, weight }]
    })
  }

  readonly streamNames = () => {
    const names = new Set([...this.tables.originals.keys(), ...this.open().originals.keys(), ...this.open().metastreams.keys()])
    if (!this.change.clearMetastreams) for (const name of this.tables.metastreams.keys()) names.add(name)
    return [...names].filter((name) => this.originalStream(name) !== undefined || this.metastream(name) !== undefined)
  }

  readonly setOriginalStream = (name: string, data: OriginalStreamData) => {
    this.open().originals.set(name, data)
  }

  readonly setMetastream = (name: string, data: MetastreamData) => {
    this.open().metastreams.set(name, data)
  }

  readonly addChunkWeight = (logicalChunk: number, weight: number) => {
    this.open().weights.set(logicalChunk, (this.chunkWeight(logicalChunk) ?? 0) + weight)
  }

  readonly deleteChunkWeights = (from: number, to: number) => {
    const { weights } = this.open()
    for (const chunk of [...this.tables.weights.keys(), ...weights.keys()]) {
      if (chunk >= from && chunk <= to) weights.set(chunk, null)
    }
  }

  readonly setChunkTimeRange = (logicalChunk: number, range: ChunkTimeRange) => {
    this.open().timeRanges.set(logicalChunk, range)
  }

  readonly deleteAllMetastreams = () => {
    const change = this.open()
    change.clearMetastreams = true
    change.metastreams.clear()
  }

  readonly deleteSpentStreams = (includeArchived: boolean) => {
    const { originals } = this.open()
    const goes = (data: OriginalStreamData | undefined) =>
      data !== undefined && (data.status === "Spent" || (includeArchived && data.status === "Archived"))
    for (const name of [...this.tables.originals.keys(), ...originals.keys()]) {
      if (goes(this.originalStream(name))) originals.set(name, null)
    }
  }

  readonly commit = (checkpoint: Checkpoint) => {
    const change = this.open()
    this.finished = true
    return this.commitChange({ ...change, checkpoint })
  }
}
