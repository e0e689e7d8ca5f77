/**
 * The committed scavenge state in memory: one Map per table, plus the Active original streams in
 * ascending name order (JS string order, i.e. UTF-16 code units) for the calculator's resumable walk.
 *
 * The sorted list is repaired lazily: `apply` only notes the names whose Active-ness flipped, and the next
 * `activeStreams` call merges them in (O(n + k log k)). The accumulator commits once per chunk and never
 * walks, the calculator walks once per 32,768-stream batch, so neither pays a sort per commit.
 */
import type { Checkpoint, ChunkTimeRange, ChunkWeight, MetastreamData, OriginalStreamData, StateChange } from "./types.js"

/** First index in the sorted `names` whose name is strictly greater than `after`. */
const indexAfter = (names: ReadonlyArray<string>, after: string): number => {
  let lo = 0
  let hi = names.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (names[mid]! <= after) lo = mid + 1
    else hi = mid
  }
  return lo
}

const mergeSorted = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<string> => {
  const out = new Array<string>(a.length + b.length)
  let i = 0
  let j = 0
  let k = 0
  while (i < a.length && j < b.length) out[k++] = a[i]! < b[j]! ? a[i++]! : b[j++]!
  while (i < a.length) out[k++] = a[i++]!
  while (j < b.length) out[k++] = b[j++]!
  return out
}

export class StateTables {
  checkpoint: Checkpoint | undefined = undefined
  readonly originals = new Map<string, OriginalStreamData>()
  readonly metastreams = new Map<string, MetastreamData>()
  readonly weights = new Map<number, number>()
  readonly timeRanges = new Map<number, ChunkTimeRange>()
  private sortedActive: Array<string> = []
  /** Names whose Active-ness flipped since `sortedActive` was last repaired. */
  private readonly activeFlipped = new Set<string>()
  private activeCount = 0

  apply(change: StateChange): void {
    if (change.checkpoint !== undefined) this.checkpoint = change.checkpoint
    if (change.clearMetastreams) this.metastreams.clear()
    for (const [name, data] of change.originals) {
      const wasActive = this.originals.get(name)?.status === "Active"
      if (data === null) this.originals.delete(name)
      else this.originals.set(name, data)
      const isActive = data?.status === "Active"
      if (wasActive !== isActive) {
        this.activeFlipped.add(name)
        this.activeCount += isActive ? 1 : -1
      }
    }
    applyTo(this.metastreams, change.metastreams)
    applyTo(this.weights, change.weights)
    applyTo(this.timeRanges, change.timeRanges)
  }

  get activeStreamCount(): number {
    return this.activeCount
  }

  /** Up to `limit` Active original streams with names strictly after `after`, ascending. */
  activeStreams(after: string | undefined, limit: number): Array<readonly [string, OriginalStreamData]> {
    this.repairActive()
    const names = this.sortedActive
    const out: Array<readonly [string, OriginalStreamData]> = []
    for (let i = after === undefined ? 0 : indexAfter(names, after); i < names.length && out.length < limit; i++) {
      out.push([names[i]!, this.originals.get(names[i]!)!])
    }
    return out
  }

  allChunkWeights(): Array<ChunkWeight> {
    return [...this.weights].sort((a, b) => a[0] - b[0]).map(([logicalChunk, weight]) => ({ logicalChunk, weight }))
  }

  /** Everything, as the change that builds it from an empty state (what a snapshot stores). */
  asChange(): StateChange {
    return {
      checkpoint: this.checkpoint,
      clearMetastreams: false,
      originals: this.originals,
      metastreams: this.metastreams,
      weights: this.weights,
      timeRanges: this.timeRanges
    }
  }

  private repairActive(): void {
    if (this.activeFlipped.size === 0) return
    const flipped = this.activeFlipped
    const kept = this.sortedActive.filter((name) => !flipped.has(name))
    const added = [...flipped].filter((name) => this.originals.get(name)?.status === "Active").sort()
    this.sortedActive = mergeSorted(kept, added)
    flipped.clear()
  }
}

const applyTo = <K, V>(table: Map<K, V>, changes: ReadonlyMap<K, V | null>): void => {
  for (const [key, value] of changes) {
    if (value === null) table.delete(key)
    else table.set(key, value)
  }
}
