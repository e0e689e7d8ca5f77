/**
 * The snapshot as a sorted page file (`scavenge-state.snapshot`), the format of ScavengeState.ts's design.
 *
 * Layout: the pages of the original-streams table, then those of the metastreams table, each a CRC frame
 * (frames.ts) of exactly `pageSize` bytes holding rows ascending by name (a single row too big for a page
 * gets a frame of several whole pages); then the directory frame; then a 16-byte tail.
 * - page payload: table id u8 | row count u32 | rows (name, value: codec.ts)
 * - directory payload: version u8 | checkpoint | weights | time ranges | per table: row count per code,
 *   pages (first name, offset, length), Bloom filter
 * - tail: magic u32 | CRC-32 of the offset u32 | directory offset f64
 * Every frame carries the snapshot's transaction `seq`, so a page of another snapshot is never taken for one
 * of this one. The file is written under a temp name and renamed into place whole, so any damage is
 * corruption (after re-reads: rereads.ts).
 */
import { checksum } from "@vellum/storage"
import type { DiskError, FileHandle } from "@vellum/platform"
import { Effect } from "effect"
import { BloomFilter } from "./bloom.js"
import { ByteReader, ByteWriter, CodecError } from "./bytes.js"
import { readCheckpoint, readRange, readSection, writeCheckpoint, writeRange, writeSection } from "./codec.js"
import { encodeFrame, FRAME_HEADER_BYTES, parseFrame } from "./frames.js"
import type { DecodedPage } from "./PageCache.js"
import { readVerified } from "./rereads.js"
import { nameBytes, PAGE_OVERHEAD_BYTES, SLOT_BYTES, type TableSpec } from "./tables.js"
import type { Checkpoint, ChunkTimeRange } from "./types.js"

const TAIL_MAGIC = 0x32505356 // "VSP2"
const TAIL_BYTES = 16
const DIRECTORY_VERSION = 1
const PAGE_HEADER_BYTES = 5

export interface PageRef {
  readonly firstKey: string
  readonly offset: number
  readonly length: number
}

export interface TableDirectory {
  readonly pages: ReadonlyArray<PageRef>
  /** Rows per code (index 0 unused). */
  readonly codeCounts: ReadonlyArray<number>
  readonly bloom: BloomFilter
}

/** Everything a snapshot holds besides its pages. */
export interface SnapshotSummary {
  readonly checkpoint: Checkpoint | undefined
  readonly weights: ReadonlyMap<number, number>
  readonly timeRanges: ReadonlyMap<number, ChunkTimeRange>
}

export interface SnapshotDirectory extends SnapshotSummary {
  readonly seq: number
  readonly originals: TableDirectory
  readonly metastreams: TableDirectory
  readonly fileBytes: number
}

export const emptyTableDirectory = (codes: number): TableDirectory => ({
  pages: [],
  codeCounts: new Array<number>(codes + 1).fill(0),
  bloom: BloomFilter.forNames(0)
})

/** Estimated resident bytes of a directory: first names, page references, Bloom filters. */
export const directoryBytes = (d: SnapshotDirectory): number => {
  let bytes = 0
  for (const t of [d.originals, d.metastreams]) {
    bytes += t.bloom.bytes
    for (const p of t.pages) bytes += nameBytes(p.firstKey) + 48
  }
  return bytes
}

// ---- pages ----

export const decodePage = <V>(spec: TableSpec<V>, payload: Uint8Array): DecodedPage<V> => {
  const r = new ByteReader(payload)
  const table = r.u8()
  if (table !== spec.id) throw new CodecError(`page of table ${table} where ${spec.name} was expected`)
  const count = r.u32()
  const names: Array<string> = []
  const values: Array<V> = []
  let bytes = PAGE_OVERHEAD_BYTES
  for (let i = 0; i < count; i++) {
    const name = r.str()
    if (i > 0 && !(names[i - 1]! < name)) throw new CodecError(`page rows out of order at ${JSON.stringify(name)}`)
    names.push(name)
    values.push(spec.read(r))
    bytes += nameBytes(name) + 2 * SLOT_BYTES + spec.valueBytes
  }
  r.end()
  return { names, values, bytes }
}

/** Reads and checks page `ref` of `spec`'s table in the snapshot of transaction `seq`. */
export const readPage = <V>(handle: FileHandle, seq: number, spec: TableSpec<V>, ref: PageRef) =>
  readVerified(handle, ref.offset, ref.length, `${spec.name} page at byte ${ref.offset}`, (bytes) => {
    const frame = parseFrame(bytes, 0)
    if (typeof frame === "string") return `${frame} frame`
    if (frame.end !== ref.length || frame.seq !== seq) return `frame of ${frame.end} bytes of transaction ${frame.seq}`
    try {
      return decodePage(spec, frame.payload)
    } catch (e) {
      return e instanceof CodecError ? e.message : String(e)
    }
  })

/** Reads and checks page `ref` without decoding its rows (a compaction copies pages the delta leaves alone). */
export const readPagePayload = (handle: FileHandle, seq: number, tableId: 0 | 1, ref: PageRef) =>
  readVerified(handle, ref.offset, ref.length, `page at byte ${ref.offset}`, (bytes) => {
    const frame = parseFrame(bytes, 0)
    if (typeof frame === "string") return `${frame} frame`
    if (frame.end !== ref.length || frame.seq !== seq) return `frame of ${frame.end} bytes of transaction ${frame.seq}`
    if (frame.payload.length < PAGE_HEADER_BYTES || frame.payload[0] !== tableId)
      return `not a page of table ${tableId}`
    return { payload: frame.payload }
  })

// ---- writing ----

/** Writes one table's rows, ascending by name, as pages; what it returns goes into the directory. */
export class TableWriter<V> {
  private readonly page = new ByteWriter()
  private rows = 0
  private firstKey = ""
  private names: Array<string> = []
  private values: Array<V> = []
  private pageBytes = PAGE_OVERHEAD_BYTES
  private readonly pages: Array<PageRef> = []
  private readonly codeCounts: Array<number>

  constructor(
    private readonly file: PageFileWriter,
    private readonly spec: TableSpec<V>,
    /** Gets every name added (a compaction that copies pages passes the old filter, which has theirs). */
    private readonly bloom: BloomFilter,
    /** Offered each finished page in decoded form (to keep it cached), with its index. */
    private readonly hold: ((index: number, page: DecodedPage<V>) => void) | undefined
  ) {
    this.codeCounts = new Array<number>(spec.codes + 1).fill(0)
    this.page.raw(new Uint8Array(PAGE_HEADER_BYTES))
  }

  /** Appends a page of another snapshot as it is (after the rows added so far); `decoded` when it is at hand. */
  copyPage(firstKey: string, payload: Buffer, decoded: DecodedPage<V> | undefined): void {
    if (this.rows > 0) this.closePage()
    const offset = this.file.push(encodeFrame(this.file.seq, payload, this.file.pageSize))
    this.pages.push({ firstKey, offset, length: this.file.offset - offset })
    if (decoded !== undefined) this.hold?.(this.pages.length - 1, decoded)
  }

  add(name: string, value: V): void {
    const mark = this.page.length
    this.page.str(name)
    this.spec.write(this.page, value)
    if (this.rows > 0 && FRAME_HEADER_BYTES + this.page.length > this.file.pageSize) {
      this.page.truncate(mark)
      this.closePage()
      this.page.str(name)
      this.spec.write(this.page, value)
    }
    if (this.rows === 0) this.firstKey = name
    this.rows++
    this.bloom.add(name)
    this.codeCounts[this.spec.codeOf(value)]!++
    if (this.hold !== undefined) {
      this.names.push(name)
      this.values.push(value)
      this.pageBytes += nameBytes(name) + 2 * SLOT_BYTES + this.spec.valueBytes
    }
  }

  private closePage(): void {
    const payload = this.page.bytes()
    payload[0] = this.spec.id
    payload.writeUInt32LE(this.rows, 1)
    const offset = this.file.push(encodeFrame(this.file.seq, payload, this.file.pageSize))
    this.pages.push({ firstKey: this.firstKey, offset, length: this.file.offset - offset })
    this.hold?.(this.pages.length - 1, { names: this.names, values: this.values, bytes: this.pageBytes })
    this.names = []
    this.values = []
    this.pageBytes = PAGE_OVERHEAD_BYTES
    this.rows = 0
    this.page.truncate(0)
    this.page.raw(new Uint8Array(PAGE_HEADER_BYTES))
  }

  /** The table's directory; `codeCounts` replaces the counts of the rows added (needed when pages were copied). */
  end(codeCounts?: ReadonlyArray<number>): TableDirectory {
    if (this.rows > 0) this.closePage()
    return { pages: this.pages, codeCounts: codeCounts ?? this.codeCounts, bloom: this.bloom }
  }
}

/** Sequential writer of a page file; frames are gathered and written a few pages at a time. */
export class PageFileWriter {
  private pending: Array<Buffer> = []
  private pendingBytes = 0
  private written = 0

  constructor(
    private readonly handle: FileHandle,
    readonly seq: number,
    readonly pageSize: number
  ) {}

  /** Where the next frame goes. */
  get offset(): number {
    return this.written + this.pendingBytes
  }

  /** Queues a frame; returns its offset. */
  push(frame: Buffer): number {
    const at = this.offset
    this.pending.push(frame)
    this.pendingBytes += frame.length
    return at
  }

  /** Writes the queued frames once there are enough of them (`force`: whatever there is). */
  flush(force = false): Effect.Effect<void, DiskError> {
    return Effect.suspend(() => {
      if (this.pendingBytes === 0 || (!force && this.pendingBytes < 16 * this.pageSize)) return Effect.void
      const data = Buffer.concat(this.pending, this.pendingBytes)
      const at = this.written
      this.pending = []
      this.written += this.pendingBytes
      this.pendingBytes = 0
      return this.handle.write(at, data)
    })
  }

  /** Writes the directory and the tail after the tables; returns the file's size. */
  finish(summary: SnapshotSummary, originals: TableDirectory, metastreams: TableDirectory) {
    const directoryAt = this.push(
      encodeFrame(this.seq, encodeDirectory(summary, originals, metastreams), this.pageSize)
    )
    const tail = Buffer.alloc(TAIL_BYTES)
    tail.writeUInt32LE(TAIL_MAGIC, 0)
    tail.writeDoubleLE(directoryAt, 8)
    tail.writeUInt32LE(checksum(tail, 8, 16), 4)
    this.push(tail)
    const size = this.offset
    return Effect.as(this.flush(true), size)
  }
}

// ---- directory ----

const writeTable = (w: ByteWriter, t: TableDirectory): void => {
  w.u32(t.codeCounts.length)
  for (const n of t.codeCounts) w.f64(n)
  w.u32(t.pages.length)
  for (const p of t.pages) {
    w.str(p.firstKey)
    w.f64(p.offset)
    w.f64(p.length)
  }
  t.bloom.write(w)
}

/** What reading a table's directory needs to know of the table. */
type TableShape = Pick<TableSpec<unknown>, "codes" | "name">

const readTable = (r: ByteReader, spec: TableShape): TableDirectory => {
  const codes = r.u32()
  if (codes !== spec.codes + 1) throw new CodecError(`${codes - 1} row codes for ${spec.name}`)
  const codeCounts = Array.from({ length: codes }, () => r.f64())
  const pages = Array.from({ length: r.u32() }, () => ({ firstKey: r.str(), offset: r.f64(), length: r.f64() }))
  return { codeCounts, pages, bloom: BloomFilter.read(r) }
}

const encodeDirectory = (summary: SnapshotSummary, originals: TableDirectory, metastreams: TableDirectory): Buffer => {
  const w = new ByteWriter()
  w.u8(DIRECTORY_VERSION)
  writeCheckpoint(w, summary.checkpoint)
  writeSection(
    w,
    summary.weights,
    (k) => w.f64(k),
    (w, v) => w.f64(v)
  )
  writeSection(w, summary.timeRanges, (k) => w.f64(k), writeRange)
  writeTable(w, originals)
  writeTable(w, metastreams)
  return w.bytes()
}

const present = <K, V>(section: ReadonlyMap<K, V | null>): Map<K, V> => {
  const out = new Map<K, V>()
  for (const [k, v] of section) if (v !== null) out.set(k, v)
  return out
}

/** The snapshot's directory, from the tail of the file. */
export const loadDirectory = (handle: FileHandle, specs: readonly [TableShape, TableShape]) =>
  Effect.gen(function* () {
    const size = yield* handle.size
    const directoryAt = yield* readVerified(
      handle,
      Math.max(0, size - TAIL_BYTES),
      TAIL_BYTES,
      "snapshot tail",
      (tail) => {
        if (tail.length !== TAIL_BYTES || tail.readUInt32LE(0) !== TAIL_MAGIC) return "no page-file tail"
        if (checksum(tail, 8, 16) !== tail.readUInt32LE(4)) return "tail checksum mismatch"
        const at = tail.readDoubleLE(8)
        return Number.isSafeInteger(at) && at >= 0 && at < size - TAIL_BYTES ? { at } : `directory offset ${at}`
      }
    )
    const length = size - TAIL_BYTES - directoryAt.at
    return yield* readVerified(
      handle,
      directoryAt.at,
      length,
      "snapshot directory",
      (bytes): SnapshotDirectory | string => {
        const frame = parseFrame(bytes, 0)
        if (typeof frame === "string" || frame.end !== length) return "not one whole, valid frame"
        try {
          const r = new ByteReader(frame.payload)
          const version = r.u8()
          if (version !== DIRECTORY_VERSION) return `unknown directory version ${version}`
          const checkpoint = readCheckpoint(r)
          const weights = present(
            readSection(
              r,
              () => r.f64(),
              (r) => r.f64()
            )
          )
          const timeRanges = present(readSection(r, () => r.f64(), readRange))
          const originals = readTable(r, specs[0])
          const metastreams = readTable(r, specs[1])
          r.end()
          return { seq: frame.seq, checkpoint, weights, timeRanges, originals, metastreams, fileBytes: size }
        } catch (e) {
          return e instanceof CodecError ? e.message : String(e)
        }
      }
    )
  })
