/**
 * The memtable: index entries of one range of the log, in memory, keyed by exact stream NAME (so its hits
 * never need a collision check), until it is frozen and written out as a level-0 table.
 *
 * Memory layout (the budget is ≤ 16 B of resident index memory per event at 10 M events, so there are no
 * per-entry objects and nothing is copied as a stream grows):
 * - Entries are `(eventNumber, position)` pairs of doubles in slabs (Float64Arrays of 4 KiB growing to
 *   1 MiB), allocated by bumping a pointer. A pointer is `slab · 2^16 + pair offset`.
 * - Each stream owns a chain of chunks in the slabs. Chunk sizes grow with the stream (2, 4, 4, 5, 7, 11,
 *   … ≈ half of what the stream holds so far, at most 8191), so a chunk is never moved, at most about a
 *   third of a stream's capacity is unused, and a long stream has O(log n) chunks. Every chunk but the
 *   first is preceded by a header pair (previous chunk's pointer, its first ordinal): the chain is walked
 *   newest-first, which is what `latest` and reads of recent events want.
 * - Per-stream fields (head chunk pointer, its first ordinal, count, hash, sorted flag) are parallel
 *   typed arrays indexed by a small stream id; the only per-stream object is the Map entry name → id.
 *   The stream hash is computed once per stream, not per entry.
 *
 * Pairs are kept in append order. Event numbers normally increase per stream in log order, so a stream
 * is normally sorted by (eventNumber, position); an out-of-order add only clears the stream's sorted flag,
 * and its pairs are sorted in place the next time it is read. Duplicates are kept.
 */
import { Effect } from "effect"
import {
  allocEntries,
  compareLatest,
  ENTRY_WORDS,
  type EntrySource,
  eventNumberAt,
  hiAt,
  type IndexEntry,
  loAt,
  positionAt,
  writeEntry
} from "./Entry.js"
import { compareHash, type HashFn } from "./StreamHash.js"

const SLAB_SHIFT = 16
const SLAB_MAX_PAIRS = 1 << SLAB_SHIFT
const SLAB_FIRST_PAIRS = 256
/** A stream's first chunk is small (many streams have one or two entries per memtable); later ones ≥ 4. */
const CHUNK_FIRST = 2
const CHUNK_MIN = 4
/** With its header a chunk is at most 1/8 of a full slab, so a slab's unusable tail stays small. */
const CHUNK_MAX = SLAB_MAX_PAIRS / 8 - 1

/** Data capacity of a chunk whose first entry has ordinal `first` (a function, so it is not stored). */
const capacityAt = (first: number): number =>
  first === 0 ? CHUNK_FIRST : Math.min(CHUNK_MAX, Math.max(CHUNK_MIN, first >>> 1))

/** Rough V8 cost of one Map entry (key, value, chain slots, bucket, growth slack). */
const MAP_ENTRY_BYTES = 40
/** Bytes of the per-stream typed arrays, per stream slot. */
const STREAM_SLOT_BYTES = 4 + 4 + 4 + 4 + 4 + 1

export class MemTable {
  /** Log position just after the last batch added (set by the index). */
  coveredUpTo = 0
  private frozenFlag = false
  private count = 0
  private readonly ids = new Map<string, number>()
  private streams = 0
  private keyBytes = 0
  // Per-stream fields, indexed by stream id.
  private sHead: Int32Array
  private sHeadFirst: Int32Array
  private sCnt: Int32Array
  private sHi: Uint32Array
  private sLo: Uint32Array
  private sUnsorted: Uint8Array
  private readonly slabs: Array<Float64Array> = []
  private slabTop = 0
  private slabBytes = 0

  constructor(
    private readonly hash: HashFn,
    initialStreams = 64
  ) {
    this.sHead = new Int32Array(initialStreams)
    this.sHeadFirst = new Int32Array(initialStreams)
    this.sCnt = new Int32Array(initialStreams)
    this.sHi = new Uint32Array(initialStreams)
    this.sLo = new Uint32Array(initialStreams)
    this.sUnsorted = new Uint8Array(initialStreams)
  }

  get entryCount(): number {
    return this.count
  }

  get streamCount(): number {
    return this.streams
  }

  get frozen(): boolean {
    return this.frozenFlag
  }

  add(stream: string, eventNumber: number, position: number): void {
    if (this.frozenFlag) throw new Error("MemTable.add: the memtable is frozen")
    let id = this.ids.get(stream)
    if (id === undefined) id = this.newStream(stream)
    const cnt = this.sCnt[id]!
    if (cnt > 0) {
      const p = this.sHead[id]! + (cnt - 1 - this.sHeadFirst[id]!)
      const slab = this.slabs[p >>> SLAB_SHIFT]!
      const o = (p & (SLAB_MAX_PAIRS - 1)) * 2
      const pe = slab[o]!
      if (eventNumber < pe || (eventNumber === pe && position < slab[o + 1]!)) this.sUnsorted[id] = 1
      if (cnt - this.sHeadFirst[id]! === capacityAt(this.sHeadFirst[id]!)) this.newChunk(id, cnt)
    }
    const p = this.sHead[id]! + (cnt - this.sHeadFirst[id]!)
    const slab = this.slabs[p >>> SLAB_SHIFT]!
    const o = (p & (SLAB_MAX_PAIRS - 1)) * 2
    slab[o] = eventNumber
    slab[o + 1] = position
    this.sCnt[id] = cnt + 1
    this.count++
  }

  /** Every entry of `stream` with from ≤ eventNumber ≤ to, ascending by (eventNumber, position). */
  range(stream: string, from: number, to: number): Array<IndexEntry> {
    const out: Array<IndexEntry> = []
    this.rangeInto(stream, from, to, out)
    return out
  }

  rangeInto(stream: string, from: number, to: number, out: Array<IndexEntry>): void {
    const id = this.ids.get(stream)
    if (id === undefined || from > to) return
    this.ensureSorted(id)
    // Walk back to the chunk holding the first entry ≥ from; remember the chunks (newest first).
    const chain: Array<number> = []
    let ptr = this.sHead[id]!
    let first = this.sHeadFirst[id]!
    let n = this.sCnt[id]! - first
    for (;;) {
      chain.push(ptr, n)
      if (first === 0 || this.eventNumberAt(ptr) < from) break
      const link = this.prevOf(ptr)
      ptr = link.ptr
      n = first - link.first
      first = link.first
    }
    for (let k = chain.length - 2; k >= 0; k -= 2) {
      const p = chain[k]!
      const c = chain[k + 1]!
      const slab = this.slabs[p >>> SLAB_SHIFT]!
      const base = (p & (SLAB_MAX_PAIRS - 1)) * 2
      let i = 0
      if (k === chain.length - 2) {
        // Lower bound in the oldest chunk of the walk; later chunks start at or after `from`.
        let hi = c
        while (i < hi) {
          const mid = (i + hi) >>> 1
          if (slab[base + mid * 2]! < from) i = mid + 1
          else hi = mid
        }
      }
      for (; i < c; i++) {
        const en = slab[base + i * 2]!
        if (en > to) return
        out.push({ eventNumber: en, position: slab[base + i * 2 + 1]!, exact: true })
      }
    }
  }

  /** Up to `limit` entries with the highest event numbers, descending; ties: lowest position first. */
  latest(stream: string, limit = 1): Array<IndexEntry> {
    const out: Array<IndexEntry> = []
    this.latestInto(stream, limit, out)
    return out
  }

  latestInto(stream: string, limit: number, out: Array<IndexEntry>): void {
    const id = this.ids.get(stream)
    if (id === undefined || limit <= 0) return
    this.ensureSorted(id)
    // Newest first; keep going past `limit` through ties of the last event number taken.
    const found: Array<IndexEntry> = []
    let boundary = -1
    let ptr = this.sHead[id]!
    let first = this.sHeadFirst[id]!
    let n = this.sCnt[id]! - first
    walk: for (;;) {
      const slab = this.slabs[ptr >>> SLAB_SHIFT]!
      const base = (ptr & (SLAB_MAX_PAIRS - 1)) * 2
      for (let i = n - 1; i >= 0; i--) {
        const en = slab[base + i * 2]!
        if (found.length >= limit && en !== boundary) break walk
        found.push({ eventNumber: en, position: slab[base + i * 2 + 1]!, exact: true })
        if (found.length === limit) boundary = en
      }
      if (first === 0) break
      const link = this.prevOf(ptr)
      ptr = link.ptr
      n = first - link.first
      first = link.first
    }
    found.sort(compareLatest)
    for (let i = 0; i < found.length && i < limit; i++) out.push(found[i]!)
  }

  /** Number of entries of `stream` (exact name). */
  countOf(stream: string): number {
    const id = this.ids.get(stream)
    return id === undefined ? 0 : this.sCnt[id]!
  }

  /**
   * Approximate bytes held: slabs and per-stream arrays (exact), plus the Map entries and stream-name
   * strings (estimated from V8's layout; the strings may also be shared with the caller).
   */
  byteSize(): number {
    return this.slabBytes + this.sHead.length * STREAM_SLOT_BYTES + this.streams * MAP_ENTRY_BYTES + this.keyBytes
  }

  /** No more adds: sorts every stream so the flush and concurrent reads never mutate it again. */
  freeze(): void {
    if (this.frozenFlag) return
    for (let id = 0; id < this.streams; id++) this.ensureSorted(id)
    this.frozenFlag = true
  }

  /** Calls `f` for every entry in table order (hashHi, hashLo, eventNumber, position). Freezes first. */
  forEachSorted(f: (hi: number, lo: number, eventNumber: number, position: number) => void): void {
    const cursor = this.cursor()
    const w = allocEntries(1024)
    for (;;) {
      const n = cursor.fill(w)
      if (n === 0) return
      for (let i = 0; i < n; i++) f(hiAt(w, i), loAt(w, i), eventNumberAt(w, i), positionAt(w, i))
    }
  }

  /** The entries in table order as a pull source for the table writer. Freezes first. */
  source(): EntrySource {
    const cursor = this.cursor()
    return { pull: (out) => Effect.sync(() => cursor.fill(out)) }
  }

  /** Copies the pairs of stream `id` in ordinal order into `into` at pair offset `at`. */
  copyPairs(id: number, into: Float64Array, at: number): void {
    let ptr = this.sHead[id]!
    let first = this.sHeadFirst[id]!
    let n = this.sCnt[id]! - first
    for (;;) {
      const base = (ptr & (SLAB_MAX_PAIRS - 1)) * 2
      into.set(this.slabs[ptr >>> SLAB_SHIFT]!.subarray(base, base + n * 2), (at + first) * 2)
      if (first === 0) return
      const link = this.prevOf(ptr)
      ptr = link.ptr
      n = first - link.first
      first = link.first
    }
  }

  private cursor(): SortedCursor {
    this.freeze()
    const order = new Int32Array(this.streams)
    for (let i = 0; i < order.length; i++) order[i] = i
    const sHi = this.sHi
    const sLo = this.sLo
    order.sort((a, b) => compareHash(sHi[a]!, sLo[a]!, sHi[b]!, sLo[b]!) || a - b)
    return new SortedCursor(this, order, sHi, sLo, this.sCnt)
  }

  private eventNumberAt(ptr: number): number {
    return this.slabs[ptr >>> SLAB_SHIFT]![(ptr & (SLAB_MAX_PAIRS - 1)) * 2]!
  }

  /** The chunk before the one at `ptr` (which is not a first chunk), from its header pair. */
  private prevOf(ptr: number): { readonly ptr: number; readonly first: number } {
    const h = ptr - 1
    const slab = this.slabs[h >>> SLAB_SHIFT]!
    const o = (h & (SLAB_MAX_PAIRS - 1)) * 2
    return { ptr: slab[o]!, first: slab[o + 1]! }
  }

  /** Bump-allocates `pairs` contiguous pairs; returns the pointer to the first. */
  private alloc(pairs: number): number {
    const last = this.slabs[this.slabs.length - 1]
    if (last === undefined || this.slabTop + pairs > last.length / 2) {
      const size = Math.max(pairs, Math.min(SLAB_MAX_PAIRS, SLAB_FIRST_PAIRS * 2 ** this.slabs.length))
      this.slabs.push(new Float64Array(size * 2))
      this.slabBytes += size * 16
      this.slabTop = 0
    }
    const ptr = (this.slabs.length - 1) * SLAB_MAX_PAIRS + this.slabTop
    this.slabTop += pairs
    return ptr
  }

  /** Starts a new head chunk for stream `id`, whose next entry has ordinal `cnt`. */
  private newChunk(id: number, cnt: number): void {
    const ptr = this.alloc(capacityAt(cnt) + 1) + 1
    const h = ptr - 1
    const slab = this.slabs[h >>> SLAB_SHIFT]!
    const o = (h & (SLAB_MAX_PAIRS - 1)) * 2
    slab[o] = this.sHead[id]!
    slab[o + 1] = this.sHeadFirst[id]!
    this.sHead[id] = ptr
    this.sHeadFirst[id] = cnt
  }

  private newStream(stream: string): number {
    if (this.streams === this.sHead.length) this.growStreams()
    const id = this.streams++
    const h = this.hash(stream)
    this.sHi[id] = h.hi
    this.sLo[id] = h.lo
    this.sCnt[id] = 0
    this.sUnsorted[id] = 0
    this.sHead[id] = this.alloc(CHUNK_FIRST)
    this.sHeadFirst[id] = 0
    this.ids.set(stream, id)
    // V8 string: 16-byte header, 1 byte per char for Latin-1 text, else 2; 8-byte aligned.
    let wide = false
    for (let i = 0; i < stream.length && !wide; i++) wide = stream.charCodeAt(i) > 0xff
    this.keyBytes += 16 + ((stream.length * (wide ? 2 : 1) + 7) & ~7)
    return id
  }

  private growStreams(): void {
    const cap = this.sHead.length * 2
    const grow = <T extends Int32Array | Uint32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap)
      b.set(a)
      return b
    }
    this.sHead = grow(this.sHead, (n) => new Int32Array(n))
    this.sHeadFirst = grow(this.sHeadFirst, (n) => new Int32Array(n))
    this.sCnt = grow(this.sCnt, (n) => new Int32Array(n))
    this.sHi = grow(this.sHi, (n) => new Uint32Array(n))
    this.sLo = grow(this.sLo, (n) => new Uint32Array(n))
    this.sUnsorted = grow(this.sUnsorted, (n) => new Uint8Array(n))
  }

  /** Sorts an out-of-order stream in place (rare: only when the caller added entries out of order). */
  private ensureSorted(id: number): void {
    if (this.sUnsorted[id] === 0) return
    const n = this.sCnt[id]!
    const pairs = new Float64Array(n * 2)
    this.copyPairs(id, pairs, 0)
    const idx = Array.from({ length: n }, (_, i) => i * 2)
    idx.sort((a, b) => pairs[a]! - pairs[b]! || pairs[a + 1]! - pairs[b + 1]!)
    // Write back chunk by chunk, newest chunk (highest ordinals) first.
    let ptr = this.sHead[id]!
    let first = this.sHeadFirst[id]!
    let c = n - first
    for (;;) {
      const slab = this.slabs[ptr >>> SLAB_SHIFT]!
      const base = (ptr & (SLAB_MAX_PAIRS - 1)) * 2
      for (let i = 0; i < c; i++) {
        const src = idx[first + i]!
        slab[base + i * 2] = pairs[src]!
        slab[base + i * 2 + 1] = pairs[src + 1]!
      }
      if (first === 0) break
      const link = this.prevOf(ptr)
      ptr = link.ptr
      c = first - link.first
      first = link.first
    }
    this.sUnsorted[id] = 0
  }
}

/** Walks a frozen memtable in table order; colliding streams (equal hashes) are merged on the fly. */
class SortedCursor {
  private k = 0
  private run = new Float64Array(64)
  private runCnt = 0
  private j = 0
  private hi = 0
  private lo = 0

  constructor(
    private readonly table: MemTable,
    private readonly order: Int32Array,
    private readonly sHi: Uint32Array,
    private readonly sLo: Uint32Array,
    private readonly sCnt: Int32Array
  ) {}

  fill(out: Uint32Array): number {
    const max = Math.floor(out.length / ENTRY_WORDS)
    let n = 0
    while (n < max) {
      if (this.j >= this.runCnt) {
        if (!this.nextRun()) break
        continue
      }
      const b = this.j * 2
      writeEntry(out, n, this.hi, this.lo, this.run[b]!, this.run[b + 1]!)
      this.j++
      n++
    }
    return n
  }

  /** Loads the next hash's entries (one stream, or several colliding ones) into `run`, sorted. */
  private nextRun(): boolean {
    const order = this.order
    if (this.k >= order.length) return false
    const first = order[this.k]!
    const hi = this.sHi[first]!
    const lo = this.sLo[first]!
    let e = this.k + 1
    let total = this.sCnt[first]!
    while (e < order.length && this.sHi[order[e]!] === hi && this.sLo[order[e]!] === lo)
      total += this.sCnt[order[e++]!]!
    if (this.run.length < total * 2) this.run = new Float64Array(total * 2)
    let at = 0
    for (let k = this.k; k < e; k++) {
      const id = order[k]!
      this.table.copyPairs(id, this.run, at)
      at += this.sCnt[id]!
    }
    if (e - this.k > 1) {
      // Streams sharing a hash: their entries interleave in the table.
      const run = this.run
      const idx = Array.from({ length: total }, (_, i) => i * 2)
      idx.sort((a, b) => run[a]! - run[b]! || run[a + 1]! - run[b + 1]!)
      const sorted = new Float64Array(Math.max(64, total * 2))
      idx.forEach((src, i) => {
        sorted[i * 2] = run[src]!
        sorted[i * 2 + 1] = run[src + 1]!
      })
      this.run = sorted
    }
    this.runCnt = total
    this.hi = hi
    this.lo = lo
    this.k = e
    this.j = 0
    return true
  }
}
