/**
 * K-way merge of tables as an EntrySource for the table writer: each input is read in large chunks of
 * whole blocks (one Disk read per chunk per input, every block checked against its CRC, so damage fails
 * the merge with IndexCorrupt before the output can be listed anywhere); the merge itself is a plain
 * loop over decoded keys. No dedupe, no filtering (like the reference server's level merge).
 * Inputs are few (tablesPerLevel, or every table for a manual merge), so the minimum is a linear scan.
 */
import { Effect } from "effect"
import type { DiskError } from "@vellum/platform"
import { compareKeys, copyEntry, ENTRY_BYTES, ENTRY_WORDS, type EntrySource, IndexCorrupt, wordsOf } from "./Entry.js"
import type { Table } from "./Table.js"

const TWO_32 = 4294967296

class Cursor {
  /** Next block to read from the file. */
  nextBlock = 0
  w: Uint32Array = new Uint32Array(0)
  n = 0
  i = 0
  done = false
  hi = 0
  lo = 0
  en = 0
  pos = 0

  constructor(readonly table: Table) {}

  /** Decodes the entry at `i` into the key fields. */
  decode(): void {
    const w = this.w
    const o = this.i * ENTRY_WORDS
    this.hi = w[o]!
    this.lo = w[o + 1]!
    this.en = w[o + 3]! * TWO_32 + w[o + 2]!
    this.pos = w[o + 5]! * TWO_32 + w[o + 4]!
  }
}

/** Loads the next chunk of whole blocks of `c`'s table (every block CRC-checked), or marks it done. */
const refill = (c: Cursor, chunkBytes: number): Effect.Effect<void, DiskError | IndexCorrupt> => {
  const t = c.table
  const blocks = Math.max(1, Math.floor(chunkBytes / (t.footer.entriesPerBlock * ENTRY_BYTES)))
  if (c.nextBlock >= t.blockCount) {
    c.done = true
    return Effect.void
  }
  const last = Math.min(t.blockCount, c.nextBlock + blocks) - 1
  return Effect.map(t.readChecked(c.nextBlock, last), (buf) => {
    c.w = wordsOf(buf)
    c.n = c.w.length / ENTRY_WORDS
    c.i = 0
    c.nextBlock = last + 1
    c.decode()
  })
}

/**
 * Moves entries into `out` from `at` until it is full, every input is done, or an input needs a refill
 * (its buffer ran out: it must be refilled before the minimum can be chosen). Returns the new fill level.
 */
const mergeInto = (cursors: ReadonlyArray<Cursor>, out: Uint32Array, at: number, max: number): number => {
  let n = at
  while (n < max) {
    let best: Cursor | undefined
    for (const c of cursors) {
      if (c.done) continue
      if (c.i >= c.n) return n
      if (best === undefined || compareKeys(c.hi, c.lo, c.en, c.pos, best.hi, best.lo, best.en, best.pos) < 0) best = c
    }
    if (best === undefined) return n
    copyEntry(best.w, best.i, out, n)
    n++
    best.i++
    if (best.i < best.n) best.decode()
  }
  return n
}

/** The merged entries of `tables`, ascending; reads each input `chunkBytes` at a time. */
export const mergeSource = (
  tables: ReadonlyArray<Table>,
  chunkBytes = 1 << 20
): EntrySource<DiskError | IndexCorrupt> => {
  const cursors = tables.map((t) => new Cursor(t))
  return {
    pull: (out) =>
      Effect.gen(function* () {
        const max = Math.floor(out.length / ENTRY_WORDS)
        let n = 0
        while (n < max) {
          for (const c of cursors) if (!c.done && c.i >= c.n) yield* refill(c, chunkBytes)
          if (cursors.every((c) => c.done)) break
          n = mergeInto(cursors, out, n, max)
        }
        return n
      })
  }
}
