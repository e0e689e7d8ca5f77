/**
 * A transaction on the scavenge state: reads and writes over a private overlay, then one
 * `commit(checkpoint)` that makes the overlay and the checkpoint durable together.
 *
 * Writes and the per-chunk tables are plain synchronous calls (the accumulator and calculator touch
 * thousands of rows per transaction, so no Effect per row). A stream row may live in a snapshot page that
 * is not in memory, so its lookup is an Effect, with a synchronous `peek*` that answers whenever no I/O is
 * needed (NotResident otherwise). The overlay is the transaction's net change (final value or deletion per
 * key; wholesale deletions as masks over what lies below), so a key written many times costs one journal
 * entry and `addChunkWeight` reads its own earlier additions. Nothing outside sees the overlay before the
 * commit.
 */
import type { DiskError } from "@vellum/platform"
import { Effect } from "effect"
import type { Bases, CommittedState } from "./CommittedState.js"
import type { PagedTable } from "./PagedTable.js"
import {
  BELOW,
  decideAbove,
  hiddenBy,
  passUp,
  spentMask,
  ALL_METASTREAMS_MASK,
  type RowLayer,
  type TableSpec
} from "./tables.js"
import {
  NotResident,
  type Checkpoint,
  type ChunkTimeRange,
  type ChunkWeight,
  type MetastreamData,
  type OriginalStreamData,
  type SpentDeletion,
  type StateChange,
  type StateCorrupt
} from "./types.js"

type StateError = DiskError | StateCorrupt

export interface StateTransaction {
  readonly originalStream: (name: string) => Effect.Effect<OriginalStreamData | undefined, StateError>
  readonly metastream: (name: string) => Effect.Effect<MetastreamData | undefined, StateError>
  /** The row when it is known without I/O, else NotResident. */
  readonly peekOriginalStream: (name: string) => OriginalStreamData | undefined | NotResident
  readonly peekMetastream: (name: string) => MetastreamData | undefined | NotResident
  /** undefined when the chunk has no weight row. */
  readonly chunkWeight: (logicalChunk: number) => number | undefined
  readonly chunkTimeRange: (logicalChunk: number) => ChunkTimeRange | undefined
  /** Every weight row, by ascending logical chunk. */
  readonly chunkWeights: () => Array<ChunkWeight>
  /** Visits every stream with a row in either table (this transaction's writes included), ascending by name. */
  readonly streamsWithData: (
    visit: (name: string, original: OriginalStreamData | undefined, metastream: MetastreamData | undefined) => void
  ) => Effect.Effect<void, StateError>
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
   * publishes them. The transaction is over afterwards (even if the commit fails: after a failed write or
   * sync the state is failed and must be reopened).
   */
  readonly commit: (checkpoint: Checkpoint) => Effect.Effect<void, StateError>
}

/** One table's overlay: the transaction's rows and the wholesale deletion it made. */
class Overlay<V> implements RowLayer<V> {
  readonly rows = new Map<string, V | null>()
  hideMask = 0
  /** Snapshot codes learnt by this transaction's lookups (the commit needs them for the delta's counts). */
  readonly bases = new Map<string, number>()
  private sorted: Array<string> | undefined
  private readonly learn = (name: string) => (code: number) => {
    this.bases.set(name, code)
  }

  constructor(private readonly spec: TableSpec<V>) {}

  readonly row = (name: string): V | null | undefined => this.rows.get(name)

  readonly sortedNames = (): ReadonlyArray<string> => (this.sorted ??= [...this.rows.keys()].sort())

  set(name: string, value: V | null): void {
    if (!this.rows.has(name)) this.sorted = undefined
    this.rows.set(name, value)
  }

  /** Deletes every row below and in this overlay whose code is in `mask` (later writes stand). */
  hide(mask: number): void {
    this.hideMask |= mask
    const everyCode = (1 << (this.spec.codes + 1)) - 2
    if ((mask & everyCode) === everyCode) {
      // Everything below is hidden anyway: deletion rows would only lengthen the journal.
      this.rows.clear()
      this.sorted = undefined
      return
    }
    for (const [name, value] of this.rows)
      if (value !== null && hiddenBy(this.spec, mask, value)) this.rows.set(name, null)
  }

  peek(table: PagedTable<V>, name: string): V | undefined | NotResident {
    const decided = decideAbove(this.spec, [this], name)
    if (decided !== BELOW) return decided
    const below = table.peek(name, this.learn(name))
    return below === NotResident ? NotResident : passUp(this.spec, [this], below)
  }

  get(table: PagedTable<V>, name: string): Effect.Effect<V | undefined, StateError> {
    const decided = decideAbove(this.spec, [this], name)
    if (decided !== BELOW) return Effect.succeed(decided)
    return Effect.map(table.get(name, this.learn(name)), (below) => passUp(this.spec, [this], below))
  }
}

const widen = (a: SpentDeletion, b: SpentDeletion): SpentDeletion =>
  a === "spentOrArchived" || b === "spentOrArchived"
    ? "spentOrArchived"
    : a === "spent" || b === "spent"
      ? "spent"
      : "none"

/** The overlay value of `key`, else the committed one; `null` (deleted here) reads as undefined. */
const overlaid = <K, V>(pending: ReadonlyMap<K, V | null>, key: K, committed: () => V | undefined): V | undefined =>
  pending.has(key) ? (pending.get(key) ?? undefined) : committed()

export class Transaction implements StateTransaction {
  private finished = false
  private readonly originals: Overlay<OriginalStreamData>
  private readonly metastreams: Overlay<MetastreamData>
  private deleteSpent: SpentDeletion = "none"
  private readonly weights = new Map<number, number | null>()
  private readonly timeRanges = new Map<number, ChunkTimeRange | null>()

  constructor(
    private readonly state: CommittedState,
    private readonly commitChange: (change: StateChange, known: Bases) => Effect.Effect<void, StateError>
  ) {
    this.originals = new Overlay(state.originals.spec)
    this.metastreams = new Overlay(state.metastreams.spec)
  }

  /** Ends the transaction without committing; idempotent. */
  readonly rollback = (): void => {
    this.finished = true
  }

  private open(): void {
    if (this.finished) throw new Error("scavenge state transaction is already committed or rolled back")
  }

  readonly originalStream = (name: string) =>
    Effect.suspend(() => {
      this.open()
      return this.originals.get(this.state.originals, name)
    })

  readonly metastream = (name: string) =>
    Effect.suspend(() => {
      this.open()
      return this.metastreams.get(this.state.metastreams, name)
    })

  readonly peekOriginalStream = (name: string) => {
    this.open()
    return this.originals.peek(this.state.originals, name)
  }

  readonly peekMetastream = (name: string) => {
    this.open()
    return this.metastreams.peek(this.state.metastreams, name)
  }

  readonly chunkWeight = (logicalChunk: number) => {
    this.open()
    return overlaid(this.weights, logicalChunk, () => this.state.weights.get(logicalChunk))
  }

  readonly chunkTimeRange = (logicalChunk: number) => {
    this.open()
    return overlaid(this.timeRanges, logicalChunk, () => this.state.timeRanges.get(logicalChunk))
  }

  readonly chunkWeights = () => {
    const chunks = new Set([...this.state.weights.keys(), ...this.weights.keys()])
    return [...chunks]
      .sort((a, b) => a - b)
      .flatMap((logicalChunk) => {
        const weight = this.chunkWeight(logicalChunk)
        return weight === undefined ? [] : [{ logicalChunk, weight }]
      })
  }

  readonly streamsWithData = (
    visit: (name: string, original: OriginalStreamData | undefined, metastream: MetastreamData | undefined) => void
  ) =>
    Effect.suspend(() => {
      this.open()
      return this.state.streamsWithData([this.originals], [this.metastreams], visit)
    })

  readonly setOriginalStream = (name: string, data: OriginalStreamData) => {
    this.open()
    this.originals.set(name, data)
  }

  readonly setMetastream = (name: string, data: MetastreamData) => {
    this.open()
    this.metastreams.set(name, data)
  }

  readonly addChunkWeight = (logicalChunk: number, weight: number) => {
    this.weights.set(logicalChunk, (this.chunkWeight(logicalChunk) ?? 0) + weight)
  }

  readonly deleteChunkWeights = (from: number, to: number) => {
    this.open()
    for (const chunk of [...this.state.weights.keys(), ...this.weights.keys()]) {
      if (chunk >= from && chunk <= to) this.weights.set(chunk, null)
    }
  }

  readonly setChunkTimeRange = (logicalChunk: number, range: ChunkTimeRange) => {
    this.open()
    this.timeRanges.set(logicalChunk, range)
  }

  readonly deleteAllMetastreams = () => {
    this.open()
    this.metastreams.hide(ALL_METASTREAMS_MASK)
  }

  readonly deleteSpentStreams = (includeArchived: boolean) => {
    this.open()
    const deletion: SpentDeletion = includeArchived ? "spentOrArchived" : "spent"
    this.deleteSpent = widen(this.deleteSpent, deletion)
    this.originals.hide(spentMask(deletion))
  }

  readonly commit = (checkpoint: Checkpoint) =>
    Effect.suspend(() => {
      this.open()
      this.finished = true
      return this.commitChange(
        {
          checkpoint,
          clearMetastreams: this.metastreams.hideMask !== 0,
          deleteSpent: this.deleteSpent,
          originals: this.originals.rows,
          metastreams: this.metastreams.rows,
          weights: this.weights,
          timeRanges: this.timeRanges
        },
        { originals: this.originals.bases, metastreams: this.metastreams.bases }
      )
    })
}
