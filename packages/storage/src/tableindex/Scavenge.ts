/**
 * Index scavenging of one table: its entries filtered by a `keep`
 * predicate, as an EntrySource for the table writer. TableIndex.scavenge runs it over every table and
 * switches the results in through the manifest.
 *
 * - The table is read in large chunks of whole blocks (one Disk read per chunk, every block CRC-checked),
 *   and `keep` runs per entry in a plain loop over the chunk's Uint32Array view: no allocation per entry.
 * - `keep` may return an Effect for the rare entry that needs a log read (a hash collision): the loop
 *   stops at that entry, the Effect runs, and the loop goes on from the next one.
 * - The table is first scanned without writing anything (`findFirstDrop`). Only when an entry is dropped
 *   is a new table written: the entries before it (all kept) are copied from the table again without
 *   asking `keep`, then the rest is filtered. So `keep` runs exactly once per entry, and a table with
 *   nothing to drop costs one read and no write.
 */
import { Effect } from "effect"
import type { DiskError } from "@vellum/platform"
import { copyEntry, ENTRY_BYTES, ENTRY_WORDS, type EntrySource, type IndexCorrupt, wordsOf } from "./Entry.js"
import type { Table } from "./Table.js"

/**
 * Whether an index entry survives the scavenge, given its key as four numbers (the hash as its two u32
 * halves, as stored) so the hot loop allocates nothing. Usually a plain boolean; an Effect only when the
 * answer needs I/O.
 */
export type KeepEntry<E> = (
  hashHi: number,
  hashLo: number,
  eventNumber: number,
  position: number
) => boolean | Effect.Effect<boolean, E>

/** Per scavenged table, for the `$scavengeIndexCompleted` history event. */
export interface TableScavenged {
  /** The table's place in the manifest at the start of the scavenge: its level, and its rank in the level. */
  readonly level: number
  readonly index: number
  readonly entriesKept: number
  readonly entriesDeleted: number
  /** Old file size − new file size, in bytes (the whole old file when nothing is kept; 0 when unchanged). */
  readonly spaceSaved: number
  /** From Effect's Clock. */
  readonly timeTakenMillis: number
}

type ReadError = DiskError | IndexCorrupt

const TWO_32 = 4294967296

/** Reads a table's entries, `blocksPerRead` whole blocks (CRC-checked) per Disk read. */
class ChunkReader {
  private nextBlock = 0
  w: Uint32Array = new Uint32Array(0)
  /** Entries in `w`. */
  n = 0

  constructor(
    private readonly table: Table,
    private readonly blocksPerRead: number
  ) {}

  /** Loads the next chunk into `w`; false at the end of the table. */
  next(): Effect.Effect<boolean, ReadError> {
    const t = this.table
    if (this.nextBlock >= t.blockCount) return Effect.succeed(false)
    const last = Math.min(t.blockCount, this.nextBlock + this.blocksPerRead) - 1
    return Effect.map(t.readChecked(this.nextBlock, last), (buf) => {
      this.w = wordsOf(buf)
      this.n = this.w.length / ENTRY_WORDS
      this.nextBlock = last + 1
      return true
    })
  }
}

/** How `scan` stopped: the chunk is used up, an entry was dropped, or `keep` returned an Effect (pending). */
const CHUNK_DONE = 0
const DROPPED = 1
const PENDING = 2

/** One table's entries filtered by `keep`; counts what it kept and dropped. */
export class TableFilter<E> {
  entriesKept = 0
  entriesDeleted = 0
  private readonly reader: ChunkReader
  /** Next entry of the reader's chunk to decide. */
  private i = 0
  /** `keep`'s Effect for the entry at `i`, when it returned one. */
  private pending: Effect.Effect<boolean, E> | undefined
  /** Entries before the first dropped one. */
  private prefix = 0
  private readonly blocksPerRead: number

  constructor(
    readonly table: Table,
    private readonly keep: KeepEntry<E>,
    chunkBytes: number
  ) {
    this.blocksPerRead = Math.max(1, Math.floor(chunkBytes / (table.footer.entriesPerBlock * ENTRY_BYTES)))
    this.reader = new ChunkReader(table, this.blocksPerRead)
  }

  /** Decides entries up to the first dropped one: true when there is one, false when every entry is kept. */
  findFirstDrop(): Effect.Effect<boolean, ReadError | E> {
    return Effect.gen(this, function* () {
      for (;;) {
        if (this.i >= this.reader.n) {
          if (!(yield* this.reader.next())) return false
          this.i = 0
        }
        const stop = this.scan()
        if (stop === CHUNK_DONE) continue
        if (stop === PENDING) {
          if (yield* this.resolve()) {
            this.entriesKept++
            continue
          }
          this.entriesDeleted++
        }
        this.prefix = this.entriesKept
        return true
      }
    })
  }

  /**
   * The kept entries, ascending, for the table writer (after `findFirstDrop` returned true): the prefix
   * copied from the table as it is, then the rest of the table filtered.
   */
  source(): EntrySource<ReadError | E> {
    const prefixReader = new ChunkReader(this.table, this.blocksPerRead)
    let prefixLeft = this.prefix
    let pi = 0
    return {
      pull: (out) =>
        Effect.gen(this, function* () {
          const max = Math.floor(out.length / ENTRY_WORDS)
          let n = 0
          while (n < max && prefixLeft > 0) {
            if (pi >= prefixReader.n) {
              if (!(yield* prefixReader.next()))
                return yield* Effect.die(new Error(`scavenge of ${this.table.path}: table shorter than its prefix`))
              pi = 0
            }
            const take = Math.min(max - n, prefixLeft, prefixReader.n - pi)
            out.set(prefixReader.w.subarray(pi * ENTRY_WORDS, (pi + take) * ENTRY_WORDS), n * ENTRY_WORDS)
            n += take
            pi += take
            prefixLeft -= take
          }
          while (n < max) {
            if (this.i >= this.reader.n) {
              if (!(yield* this.reader.next())) break
              this.i = 0
            }
            n = this.filterInto(out, n, max)
            if (this.pending !== undefined) {
              // filterInto stops at such an entry while `out` still has room for it.
              const at = this.i
              if (yield* this.resolve()) {
                this.copy(out, n, at)
                n++
                this.entriesKept++
              } else this.entriesDeleted++
            }
          }
          return n
        })
    }
  }

  /** Runs the pending Effect of the entry at `i` and moves past it; returns its answer. */
  private resolve(): Effect.Effect<boolean, E> {
    const effect = this.pending!
    this.pending = undefined
    return Effect.map(effect, (kept) => {
      this.i++
      return kept
    })
  }

  /** Decides entries of the chunk from `i` without copying, up to the first dropped one. */
  private scan(): number {
    const { w, n } = this.reader
    const keep = this.keep
    let kept = this.entriesKept
    for (let i = this.i; i < n; i++) {
      const o = i * ENTRY_WORDS
      const r = keep(w[o]!, w[o + 1]!, w[o + 3]! * TWO_32 + w[o + 2]!, w[o + 5]! * TWO_32 + w[o + 4]!)
      if (r === true) {
        kept++
        continue
      }
      this.entriesKept = kept
      if (r === false) {
        this.entriesDeleted++
        this.i = i + 1
        return DROPPED
      }
      this.pending = r
      this.i = i
      return PENDING
    }
    this.entriesKept = kept
    this.i = n
    return CHUNK_DONE
  }

  /**
   * Copies the kept entries of the chunk from `i` into `out` from entry `at`, until the chunk is used up,
   * `out` holds `max` entries, or `keep` returns an Effect (left in `pending`, `i` at its entry).
   * Returns the new fill level of `out`.
   */
  private filterInto(out: Uint32Array, at: number, max: number): number {
    const { w, n } = this.reader
    const keep = this.keep
    let d = at
    let kept = this.entriesKept
    let deleted = this.entriesDeleted
    let i = this.i
    for (; i < n && d < max; i++) {
      const o = i * ENTRY_WORDS
      const r = keep(w[o]!, w[o + 1]!, w[o + 3]! * TWO_32 + w[o + 2]!, w[o + 5]! * TWO_32 + w[o + 4]!)
      if (r === true) {
        copyEntry(w, i, out, d)
        d++
        kept++
      } else if (r === false) deleted++
      else {
        this.pending = r
        break
      }
    }
    this.i = i
    this.entriesKept = kept
    this.entriesDeleted = deleted
    return d
  }

  /** Copies entry `i` of the chunk to entry `d` of `out`. */
  private copy(out: Uint32Array, d: number, i: number): void {
    out.set(this.reader.w.subarray(i * ENTRY_WORDS, (i + 1) * ENTRY_WORDS), d * ENTRY_WORDS)
  }
}
