/**
 * The states of the partitions a runner holds: the root ("") always, others up to a bound. An entry changed
 * since the last checkpoint is kept until the checkpoint has written it; after that the least recently used
 * unchanged entries go first when the cache is over its bound (the reference unlocks entries at a checkpoint
 * and evicts the unlocked ones).
 */
import type { CheckpointTag } from "../persisted/checkpointTag.js"

/** The reference's bound on cached partitions. */
export const maxCachedPartitions = 4000

export interface PartitionEntry {
  /** Stored state text; "" = none. */
  state: string
  /** Result text; null = none. */
  result: string | null
  /** Position of the item that last changed it; undefined when it was never changed or loaded. */
  causedBy: CheckpointTag | undefined
  /** Changed since the last checkpoint (its `$Checkpoint` is due). */
  dirty: boolean
  /** Seen before this item: loaded from a checkpoint or already processed in this run. */
  known: boolean
  /** Last event number of its checkpoint stream as last read or written (-1 none); undefined: not read yet. */
  checkpointStreamVersion: number | undefined
}

/** A partition with no stored state. */
export const emptyEntry = (checkpointStreamVersion?: number): PartitionEntry => ({
  state: "",
  result: null,
  causedBy: undefined,
  dirty: false,
  known: false,
  checkpointStreamVersion
})

export class PartitionCache {
  private readonly entries = new Map<string, PartitionEntry>()

  constructor(
    root: PartitionEntry,
    private readonly bound: number = maxCachedPartitions
  ) {
    this.entries.set("", root)
  }

  get size(): number {
    return this.entries.size
  }

  get root(): PartitionEntry {
    return this.entries.get("")!
  }

  get(partition: string): PartitionEntry | undefined {
    const entry = this.entries.get(partition)
    if (entry !== undefined && partition !== "") {
      // Most recently used last: eviction walks from the front.
      this.entries.delete(partition)
      this.entries.set(partition, entry)
    }
    return entry
  }

  /** Without touching its recency (statistics, reads from outside the loop). */
  peek(partition: string): PartitionEntry | undefined {
    return this.entries.get(partition)
  }

  set(partition: string, entry: PartitionEntry): void {
    this.entries.delete(partition)
    this.entries.set(partition, entry)
  }

  /** Entries in the order they were first cached or last used, the root first. */
  all(): ReadonlyArray<readonly [string, PartitionEntry]> {
    return [...this.entries]
  }

  dirty(): ReadonlyArray<readonly [string, PartitionEntry]> {
    return this.all().filter(([partition, entry]) => partition !== "" && entry.dirty)
  }

  /** Drops unchanged entries, least recently used first, until the cache is within its bound. */
  evict(): void {
    if (this.entries.size <= this.bound) return
    for (const [partition, entry] of this.entries) {
      if (this.entries.size <= this.bound) return
      if (partition !== "" && !entry.dirty) this.entries.delete(partition)
    }
  }
}
