/**
 * Tables: immutable sorted files of index entries (our own format, in the spirit of EventStoreDB's PTable V4).
 *
 * File layout (all integers little-endian; u64 fields hold safe integers):
 *
 *   header, 64 bytes at 0
 *     0  8 bytes  magic "VELLUMIX"
 *     8  u16      format version (1)
 *     10 u16      header size (64)
 *     12 u32      entriesPerBlock (B)
 *     16 u64      entry count (N)
 *     24 ..60     zero
 *     60 u32      CRC-32 of bytes 0..60
 *   entries, N × 24 bytes at 64, sorted ASCENDING by (hashHi, hashLo, eventNumber, position):
 *     u32 hashHi, u32 hashLo, u64 eventNumber, u64 position      (duplicates allowed)
 *   fences, F = ceil(N / B) × 28 bytes: a copy of entry i·B (the first key of block i), then the u32
 *     CRC-32 of block i's entries, so every block read is checked (bit flips on read are caught)
 *   bloom, W × u32 words: Bloom filter over the distinct (hashHi, hashLo), see Bloom.ts
 *   footer, 80 bytes at the end
 *     0  u64 entry count       8  u64 entries offset (64)   16 u64 fences offset   24 u64 bloom offset
 *     32 u64 distinct hashes   40 u32 fence count (F)       44 u32 bloom words (W) 48 u32 bloom probes
 *     52 u32 entriesPerBlock   56 u32 CRC entries           60 u32 CRC fences      64 u32 CRC bloom
 *     68 u32 format version    72 u32 magic "VIXF"          76 u32 CRC-32 of footer bytes 0..76
 *
 * A table is written once (TableWriter.ts), synced, and only then listed in the manifest; it is never
 * modified. Opening reads the header, the footer, the fences and the bloom filter (two or three reads);
 * the entries stay on disk and are read a block at a time on lookup, through a shared LRU BlockCache.
 * With `verify`, open also reads every block through its CRC. Any inconsistency is `IndexCorrupt`; a
 * block whose CRC fails is read a second time first (a bit flipped in transit is not damage on disk).
 *
 * Lookup: bloom → binary search of the in-memory fences → the needed block(s) from the cache, or one
 * Disk read (then cached) → binary search and scan inside them. Blocks are held as Uint32Array views:
 * Buffer.readUInt32LE costs about ten times more per field on Node 20.
 */
import { Effect } from "effect"
import { Disk, assert, type DiskError, type FileHandle } from "@vellum/platform"
import { checksum, checksumUpdate } from "../codec/checksum.js"
import { bloomMayContain } from "./Bloom.js"
import { BlockCache } from "./BlockCache.js"
import {
  compareKeyAt,
  ENTRY_BYTES,
  ENTRY_WORDS,
  eventNumberAt,
  hiAt,
  type IndexEntry,
  IndexCorrupt,
  loAt,
  MAX_SAFE_HI,
  positionAt,
  wordsOf
} from "./Entry.js"

export const HEADER_BYTES = 64
/** A fence: the block's first entry (24 bytes) and the block's CRC-32. */
export const FENCE_BYTES = 28
const FENCE_WORDS = 7
export const FOOTER_BYTES = 80
assert(
  FENCE_BYTES === ENTRY_BYTES + 4 && FENCE_BYTES === FENCE_WORDS * 4,
  "Table: a fence is an entry and a CRC-32, in u32 words"
)
export const FORMAT_VERSION = 1
export const HEADER_MAGIC = "VELLUMIX"
export const FOOTER_MAGIC = 0x46584956 // "VIXF"
/** Blocks read by one Disk call at most, so a huge range does not allocate one huge buffer. */
const MAX_BLOCKS_PER_READ = 256
const TWO_32 = 4294967296

export interface TableFooter {
  readonly entryCount: number
  readonly entriesOffset: number
  readonly fencesOffset: number
  readonly bloomOffset: number
  readonly distinctHashes: number
  readonly fenceCount: number
  readonly bloomWords: number
  readonly bloomProbes: number
  readonly entriesPerBlock: number
  readonly crcEntries: number
  readonly crcFences: number
  readonly crcBloom: number
}

const u64 = (buf: Buffer, off: number): number => buf.readUInt32LE(off + 4) * TWO_32 + buf.readUInt32LE(off)
const putU64 = (buf: Buffer, off: number, v: number): void => {
  buf.writeUInt32LE(v % TWO_32, off)
  buf.writeUInt32LE(Math.floor(v / TWO_32), off + 4)
}

export const encodeHeader = (entriesPerBlock: number, entryCount: number): Buffer => {
  const h = Buffer.alloc(HEADER_BYTES)
  h.write(HEADER_MAGIC, 0, "latin1")
  h.writeUInt16LE(FORMAT_VERSION, 8)
  h.writeUInt16LE(HEADER_BYTES, 10)
  h.writeUInt32LE(entriesPerBlock, 12)
  putU64(h, 16, entryCount)
  h.writeUInt32LE(checksum(h, 0, 60), 60)
  return h
}

export const encodeFooter = (f: TableFooter): Buffer => {
  const b = Buffer.alloc(FOOTER_BYTES)
  putU64(b, 0, f.entryCount)
  putU64(b, 8, f.entriesOffset)
  putU64(b, 16, f.fencesOffset)
  putU64(b, 24, f.bloomOffset)
  putU64(b, 32, f.distinctHashes)
  b.writeUInt32LE(f.fenceCount, 40)
  b.writeUInt32LE(f.bloomWords, 44)
  b.writeUInt32LE(f.bloomProbes, 48)
  b.writeUInt32LE(f.entriesPerBlock, 52)
  b.writeUInt32LE(f.crcEntries, 56)
  b.writeUInt32LE(f.crcFences, 60)
  b.writeUInt32LE(f.crcBloom, 64)
  b.writeUInt32LE(FORMAT_VERSION, 68)
  b.writeUInt32LE(FOOTER_MAGIC, 72)
  b.writeUInt32LE(checksum(b, 0, 76), 76)
  return b
}

/** Decodes and cross-checks header and footer against the file size; a string says what is wrong. */
export const decodeLayout = (header: Buffer, footer: Buffer, fileBytes: number): TableFooter | string => {
  if (header.length < HEADER_BYTES || footer.length < FOOTER_BYTES) return "file too short"
  if (header.toString("latin1", 0, 8) !== HEADER_MAGIC) return "bad header magic"
  if (header.readUInt32LE(60) !== checksum(header, 0, 60)) return "header CRC mismatch"
  if (header.readUInt16LE(8) !== FORMAT_VERSION) return `unsupported format version ${header.readUInt16LE(8)}`
  if (footer.readUInt32LE(72) !== FOOTER_MAGIC) return "bad footer magic"
  if (footer.readUInt32LE(76) !== checksum(footer, 0, 76)) return "footer CRC mismatch"
  const f: TableFooter = {
    entryCount: u64(footer, 0),
    entriesOffset: u64(footer, 8),
    fencesOffset: u64(footer, 16),
    bloomOffset: u64(footer, 24),
    distinctHashes: u64(footer, 32),
    fenceCount: footer.readUInt32LE(40),
    bloomWords: footer.readUInt32LE(44),
    bloomProbes: footer.readUInt32LE(48),
    entriesPerBlock: footer.readUInt32LE(52),
    crcEntries: footer.readUInt32LE(56),
    crcFences: footer.readUInt32LE(60),
    crcBloom: footer.readUInt32LE(64)
  }
  const n = f.entryCount
  const b = f.entriesPerBlock
  if (b < 1 || b !== header.readUInt32LE(12) || n !== u64(header, 16)) return "header and footer disagree"
  if (
    f.entriesOffset !== HEADER_BYTES ||
    f.fencesOffset !== HEADER_BYTES + n * ENTRY_BYTES ||
    f.fenceCount !== Math.ceil(n / b) ||
    f.bloomOffset !== f.fencesOffset + f.fenceCount * FENCE_BYTES ||
    f.bloomWords < 1 ||
    f.bloomProbes < 1 ||
    f.bloomProbes > 32 ||
    fileBytes !== f.bloomOffset + f.bloomWords * 4 + FOOTER_BYTES
  )
    return "section offsets do not match the file size"
  return f
}

export interface OpenTableOptions {
  /** Also check the CRC of the entries (reads the whole file). */
  readonly verify?: boolean
  /** Chunk size for verification reads. */
  readonly chunkBytes?: number
  /** The block cache, shared by the tables of one index (default: a private 256 KiB one). */
  readonly cache?: BlockCache
}

/** An open table: handle, footer, and the in-memory fences and bloom filter. */
export class Table {
  /** Merged away: closed and removed; a read that finds it closed retries (see TableIndex). */
  retired = false

  constructor(
    readonly id: number,
    readonly path: string,
    readonly handle: FileHandle,
    readonly footer: TableFooter,
    readonly fileBytes: number,
    /** First key of every block, minus the position (lookups never search by position). */
    readonly fenceHi: Uint32Array,
    readonly fenceLo: Uint32Array,
    readonly fenceEn: Float64Array,
    /** CRC-32 of each block, checked on every read from disk. */
    readonly blockCrc: Uint32Array,
    readonly bloom: Uint32Array,
    private readonly cache: BlockCache
  ) {}

  /** Block `b` from the cache, or undefined (one closure per table, not per lookup). */
  private readonly cached = (b: number): Uint32Array | undefined => this.cache.get(this.id, b)

  get entryCount(): number {
    return this.footer.entryCount
  }

  get blockCount(): number {
    return this.footer.fenceCount
  }

  /** Bytes this table holds in memory (fences, bloom, object overheads). */
  residentBytes(): number {
    return (
      this.fenceHi.byteLength +
      this.fenceLo.byteLength +
      this.fenceEn.byteLength +
      this.blockCrc.byteLength +
      this.bloom.byteLength +
      600
    )
  }

  mayContain(hi: number, lo: number): boolean {
    return this.footer.entryCount > 0 && bloomMayContain(this.bloom, this.footer.bloomProbes, hi, lo)
  }

  /** Number of fences whose key is < (hi, lo, en) (strict) or ≤ it (`orEqual`). */
  private fenceBound(hi: number, lo: number, en: number, orEqual: boolean): number {
    const fh = this.fenceHi
    const fl = this.fenceLo
    const fe = this.fenceEn
    let a = 0
    let b = fh.length
    while (a < b) {
      const m = (a + b) >>> 1
      const h = fh[m]!
      const l = fl[m]!
      const e = fe[m]!
      const c = h !== hi ? (h < hi ? -1 : 1) : l !== lo ? (l < lo ? -1 : 1) : e === en ? 0 : e < en ? -1 : 1
      if (c < 0 || (orEqual && c === 0)) a = m + 1
      else b = m
    }
    return a
  }

  /** Reads blocks first..last (inclusive) through the cache, coalescing misses into large reads. */
  readBlocks(first: number, last: number): Effect.Effect<Array<Uint32Array>, DiskError | IndexCorrupt> {
    const blocks = new Array<Uint32Array>(last - first + 1)
    const runs: Array<[number, number]> = []
    for (let b = first; b <= last; b++) {
      const hit = this.cached(b)
      if (hit !== undefined) blocks[b - first] = hit
      else if (
        runs.length > 0 &&
        runs[runs.length - 1]![1] === b - 1 &&
        b - runs[runs.length - 1]![0] < MAX_BLOCKS_PER_READ
      ) {
        runs[runs.length - 1]![1] = b
      } else runs.push([b, b])
    }
    if (runs.length === 0) return Effect.succeed(blocks)
    return Effect.as(
      Effect.forEach(runs, ([from, to]) => this.readRun(from, to, blocks, first), { discard: true }),
      blocks
    )
  }

  private readRun(
    from: number,
    to: number,
    blocks: Array<Uint32Array>,
    first: number
  ): Effect.Effect<void, DiskError | IndexCorrupt> {
    const per = this.footer.entriesPerBlock * ENTRY_WORDS
    return Effect.map(this.readChecked(from, to), (buf) => {
      const all = wordsOf(buf)
      for (let b = from; b <= to; b++) {
        const s = (b - from) * per
        // Copy when several blocks share one read, so each cached block holds only its own bytes.
        const block = from === to ? all : all.slice(s, Math.min(all.length, s + per))
        if (!this.retired) this.cache.put(this.id, b, block)
        blocks[b - first] = block
      }
    })
  }

  /**
   * Reads the entries of blocks from..to (inclusive) with one Disk read and checks every block against
   * its CRC. A mismatch is read once more first: a bit flipped on the way is not damage on disk.
   */
  readChecked(from: number, to: number): Effect.Effect<Buffer, DiskError | IndexCorrupt> {
    const { entriesPerBlock: per, entryCount: n, entriesOffset } = this.footer
    const start = from * per
    const length = (Math.min(n, (to + 1) * per) - start) * ENTRY_BYTES
    const badBlock = (buf: Buffer): number => {
      for (let b = from; b <= to; b++) {
        const s = (b - from) * per * ENTRY_BYTES
        if (checksum(buf, s, Math.min(length, s + per * ENTRY_BYTES)) !== this.blockCrc[b]) return b
      }
      return -1
    }
    const read = Effect.flatMap(this.handle.read(entriesOffset + start * ENTRY_BYTES, length), (buf) =>
      buf.length === length
        ? Effect.succeed(buf)
        : Effect.fail(corrupt(this.path, `short read: ${buf.length} of ${length} bytes`))
    )
    return Effect.flatMap(read, (buf) => {
      if (badBlock(buf) < 0) return Effect.succeed(buf)
      return Effect.flatMap(read, (again) => {
        const b = badBlock(again)
        return b < 0 ? Effect.succeed(again) : Effect.fail(corrupt(this.path, `block ${b} CRC mismatch`))
      })
    })
  }

  /**
   * Appends every entry with hash (hi, lo) and from ≤ eventNumber ≤ to, ascending, to `out`.
   * Returns undefined when it was served from the block cache alone, else the Effect that reads.
   */
  range(
    hi: number,
    lo: number,
    from: number,
    to: number,
    out: Array<IndexEntry>
  ): Effect.Effect<void, DiskError | IndexCorrupt> | undefined {
    if (from > to || !this.mayContain(hi, lo)) return undefined
    const first = Math.max(0, this.fenceBound(hi, lo, from, false) - 1)
    const last = this.fenceBound(hi, lo, to, true) - 1
    if (last < first) return undefined
    if (scanRange(this.cached, first, last, hi, lo, from, to, out)) return undefined
    return Effect.map(this.readBlocks(first, last), (blocks) => {
      scanRange((b) => blocks[b - first], first, last, hi, lo, from, to, out)
    })
  }

  /**
   * Appends the entries of hash (hi, lo) with the highest event numbers to `out` (in no particular
   * order): at least `limit` of them when there are that many, plus all ties of the lowest one taken.
   * Returns undefined when it was served from the block cache alone, else the Effect that reads.
   */
  latest(
    hi: number,
    lo: number,
    limit: number,
    out: Array<IndexEntry>
  ): Effect.Effect<void, DiskError | IndexCorrupt> | undefined {
    if (limit <= 0 || !this.mayContain(hi, lo)) return undefined
    const lastBlock = this.fenceBound(hi, lo, Number.POSITIVE_INFINITY, true) - 1
    if (lastBlock < 0) return undefined
    const mark = out.length
    const missing = scanLatest(this.cached, lastBlock, hi, lo, limit, out)
    if (missing < 0) return undefined
    out.length = mark
    // Fetch the missing block and rescan (it is usually the only one), until the scan completes.
    // `out` is shared with other tables' lookups, so results go into it only once complete.
    const fetched = new Map<number, Uint32Array>()
    const get = (b: number) => fetched.get(b) ?? this.cached(b)
    const found: Array<IndexEntry> = []
    const step = (b: number): Effect.Effect<void, DiskError | IndexCorrupt> =>
      Effect.flatMap(this.readBlocks(b, b), ([block]) => {
        fetched.set(b, block!)
        found.length = 0
        const next = scanLatest(get, lastBlock, hi, lo, limit, found)
        if (next >= 0) return step(next)
        for (const e of found) out.push(e)
        return Effect.void
      })
    return step(missing)
  }

  close(): Effect.Effect<void, DiskError> {
    return this.handle.close
  }
}

/** Index of the first entry in block `w` whose hash is greater than (hi, lo). */
const upperBoundInBlock = (w: Uint32Array, hi: number, lo: number): number => {
  let a = 0
  let b = w.length / ENTRY_WORDS
  while (a < b) {
    const m = (a + b) >>> 1
    const h = hiAt(w, m)
    if (h < hi || (h === hi && loAt(w, m) <= lo)) a = m + 1
    else b = m
  }
  return a
}

/** Scans blocks first..last for the range; false (and nothing appended) when a block is missing. */
const scanRange = (
  block: (b: number) => Uint32Array | undefined,
  first: number,
  last: number,
  hi: number,
  lo: number,
  from: number,
  to: number,
  out: Array<IndexEntry>
): boolean => {
  for (let b = first; b <= last; b++) if (block(b) === undefined) return false
  // Binary search in the first block only: every later block starts at or after (hi, lo, from).
  const w0 = block(first)!
  let a = 0
  let z = w0.length / ENTRY_WORDS
  while (a < z) {
    const m = (a + z) >>> 1
    if (compareKeyAt(w0, m, hi, lo, from) < 0) a = m + 1
    else z = m
  }
  let start = a
  for (let b = first; b <= last; b++) {
    const w = block(b)!
    const count = w.length / ENTRY_WORDS
    for (let i = start; i < count; i++) {
      if (compareKeyAt(w, i, hi, lo, to) > 0) return true
      out.push({ eventNumber: eventNumberAt(w, i), position: positionAt(w, i), exact: false })
    }
    start = 0
  }
  return true
}

/** Walks back from `lastBlock`; returns -1 when done, else the number of a block it needs first. */
const scanLatest = (
  block: (b: number) => Uint32Array | undefined,
  lastBlock: number,
  hi: number,
  lo: number,
  limit: number,
  out: Array<IndexEntry>
): number => {
  let taken = 0
  let boundary = -1
  for (let b = lastBlock; b >= 0; b--) {
    const w = block(b)
    if (w === undefined) return b
    // Start below the first entry whose hash is greater than (hi, lo).
    for (let i = b === lastBlock ? upperBoundInBlock(w, hi, lo) - 1 : w.length / ENTRY_WORDS - 1; i >= 0; i--) {
      if (hiAt(w, i) !== hi || loAt(w, i) !== lo) return -1
      const en = eventNumberAt(w, i)
      if (taken >= limit && en !== boundary) return -1
      out.push({ eventNumber: en, position: positionAt(w, i), exact: false })
      taken++
      if (taken === limit) boundary = en
    }
  }
  return -1
}

const corrupt = (path: string, message: string) => new IndexCorrupt({ path, message: `table ${path}: ${message}` })

/** Opens a table file: loads header, footer, fences and bloom; optionally verifies the entries' CRC. */
export const openTable = (
  path: string,
  id: number,
  options: OpenTableOptions = {}
): Effect.Effect<Table, DiskError | IndexCorrupt, Disk> =>
  Effect.flatMap(Disk, (disk) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(disk.open(path, { readOnly: true }), (handle) =>
        Effect.onError(restore(loadTable(handle, path, id, options)), () => Effect.ignore(handle.close))
      )
    )
  )

/** Header, footer, fences and bloom, decoded and CRC-checked. */
interface Meta {
  readonly f: TableFooter
  readonly size: number
  readonly fenceHi: Uint32Array
  readonly fenceLo: Uint32Array
  readonly fenceEn: Float64Array
  readonly blockCrc: Uint32Array
  readonly bloom: Uint32Array
}

const readMeta = (handle: FileHandle, path: string): Effect.Effect<Meta, DiskError | IndexCorrupt> =>
  Effect.gen(function* () {
    const size = yield* handle.size
    if (size < HEADER_BYTES + FOOTER_BYTES) return yield* Effect.fail(corrupt(path, `file too short (${size} bytes)`))
    const header = yield* handle.read(0, HEADER_BYTES)
    const footerBuf = yield* handle.read(size - FOOTER_BYTES, FOOTER_BYTES)
    const layout = decodeLayout(header, footerBuf, size)
    if (typeof layout === "string") return yield* Effect.fail(corrupt(path, layout))
    const f = layout
    const metaBytes = f.fenceCount * FENCE_BYTES + f.bloomWords * 4
    const meta = yield* handle.read(f.fencesOffset, metaBytes)
    if (meta.length !== metaBytes) return yield* Effect.fail(corrupt(path, "short read of fences and bloom"))
    const fenceBytes = f.fenceCount * FENCE_BYTES
    if (checksum(meta, 0, fenceBytes) !== f.crcFences) return yield* Effect.fail(corrupt(path, "fences CRC mismatch"))
    if (checksum(meta, fenceBytes, metaBytes) !== f.crcBloom)
      return yield* Effect.fail(corrupt(path, "bloom CRC mismatch"))
    const mw = wordsOf(meta)
    const fenceHi = new Uint32Array(f.fenceCount)
    const fenceLo = new Uint32Array(f.fenceCount)
    const fenceEn = new Float64Array(f.fenceCount)
    const blockCrc = new Uint32Array(f.fenceCount)
    for (let i = 0; i < f.fenceCount; i++) {
      const o = i * FENCE_WORDS
      fenceHi[i] = mw[o]!
      fenceLo[i] = mw[o + 1]!
      fenceEn[i] = mw[o + 3]! * TWO_32 + mw[o + 2]!
      blockCrc[i] = mw[o + 6]!
    }
    const bloom = mw.slice(fenceBytes / 4, fenceBytes / 4 + f.bloomWords)
    return { f, size, fenceHi, fenceLo, fenceEn, blockCrc, bloom }
  })

const loadTable = (
  handle: FileHandle,
  path: string,
  id: number,
  options: OpenTableOptions
): Effect.Effect<Table, DiskError | IndexCorrupt> =>
  Effect.gen(function* () {
    // Damage is read twice before it is believed (a bit flipped in transit is not damage on disk).
    const m = yield* Effect.catchTag(readMeta(handle, path), "IndexCorrupt", () => readMeta(handle, path))
    const table = new Table(
      id,
      path,
      handle,
      m.f,
      m.size,
      m.fenceHi,
      m.fenceLo,
      m.fenceEn,
      m.blockCrc,
      m.bloom,
      options.cache ?? new BlockCache(256 << 10)
    )
    if (options.verify === true) yield* verifyEntries(table, options.chunkBytes ?? 1 << 20)
    return table
  })

/** Reads every block (CRC-checked), checks the whole-entries CRC and that entries are sorted safe integers. */
const verifyEntries = (t: Table, chunkBytes: number): Effect.Effect<void, DiskError | IndexCorrupt> =>
  Effect.gen(function* () {
    const f = t.footer
    const blocksPerRead = Math.max(1, Math.floor(chunkBytes / (f.entriesPerBlock * ENTRY_BYTES)))
    let crc = 0
    let prev: Uint32Array | undefined
    for (let b = 0; b < f.fenceCount; b += blocksPerRead) {
      const buf = yield* t.readChecked(b, Math.min(f.fenceCount, b + blocksPerRead) - 1)
      crc = checksumUpdate(crc, buf)
      const w = wordsOf(buf)
      const bad = checkOrder(w, prev)
      if (bad !== undefined)
        return yield* Effect.fail(
          corrupt(t.path, `entry ${b * f.entriesPerBlock + bad} out of order or not a safe integer`)
        )
      prev = w.slice(w.length - ENTRY_WORDS)
    }
    if (crc !== f.crcEntries) return yield* Effect.fail(corrupt(t.path, "entries CRC mismatch"))
  })

/** Index of the first entry in `w` that is not ≥ its predecessor (or not a safe integer), if any. */
const checkOrder = (w: Uint32Array, prev: Uint32Array | undefined): number | undefined => {
  const n = w.length / ENTRY_WORDS
  for (let i = 0; i < n; i++) {
    if (w[i * ENTRY_WORDS + 3]! > MAX_SAFE_HI || w[i * ENTRY_WORDS + 5]! > MAX_SAFE_HI) return i
    const p = i > 0 ? w : prev
    if (p === undefined) continue
    const pi = i > 0 ? i - 1 : 0
    const c = compareKeyAt(p, pi, hiAt(w, i), loAt(w, i), eventNumberAt(w, i))
    if (c > 0 || (c === 0 && positionAt(p, pi) > positionAt(w, i))) return i
  }
  return undefined
}
