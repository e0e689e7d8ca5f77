/**
 * The position map of a scavenged chunk, resident and delta-compressed. The file holds every kept record's
 * entry (chunkFormat.ts: u32 physical offset + u64 logical position, sorted, 12 bytes); memory holds, per
 * group of `POSMAP_GROUP_ENTRIES`, the first entry in full and, for each later entry, two unsigned LEB128
 * varints: the physical step (the previous record's framed length, > 0) and the logical gap beyond it (the
 * bytes of removed records between the two, >= 0, often 0). A typical entry costs 3-4 bytes, and a lookup
 * binary-searches the groups' first positions, then decodes one group in a plain loop without allocating.
 *
 * Why resident. A sparse index that read a group's 1.5 KiB from the chunk file for every lookup made index
 * execution of a 2 GiB log go from 11 s to 71-83 s (it looks up ~3 million positions of removed records in
 * random order: each a file read, a CRC and a decode), and its garbage grew the JS heap so that peak RSS
 * went up (173 MiB) instead of down. The full maps in typed arrays (12 bytes per kept record) had been the
 * peak before (127 MiB while merging chunks). Compressed, every map fits in memory for ~3.5 bytes an entry.
 *
 * Trust. The map's bytes have no checksum of their own (the footer's whole-file CRC covers them, checked
 * on open when verification is on), and a read can bring bytes damaged on their way. So:
 * - at open the map is read in pieces, each believed only when two reads in a row agree, and checked for
 *   the shape a rewrite always gives it (offsets from 0, strictly ascending, logical gaps at least the
 *   physical ones, inside the chunk); a map that fails is remembered as damaged and every lookup in it
 *   fails with StorageCorrupt (the rest of the log stays readable);
 * - after open nothing is read again: damage on disk later does not reach the map;
 * - the callers check that the record at a mapped offset carries the mapped logical position (readRecord
 *   through `decodeRecord`'s expected position, scans in TransactionLog.ts and RecordScanner.ts).
 */
import { Effect } from "effect"
import { DiskError, type FileHandle } from "@vellum/platform"
import { readU64 } from "../codec/bytes.js"
import { StorageCorrupt } from "../errors.js"
import { HEADER_SIZE, POSMAP_ENTRY_SIZE } from "./chunkFormat.js"

/**
 * Entries per group. The per-group part costs 16 bytes (first position, first offset, start of its deltas):
 * 1 byte an entry at 16. A lookup decodes half a group on average. Measured (3 million random lookups in
 * a 700,000-entry map, CPU time on a busy machine): ~1.9 s at 16, ~2.7 s at 32, ~4 s at 64, against ~1.4 s
 * for a binary search of the full 12-byte arrays. 16: index execution looks up millions of removed
 * records, and half a byte an entry more is ~1.5 MB for a 2 GiB log.
 */
export const POSMAP_GROUP_ENTRIES = 16
/** Entries per read when a map is read at open (768 KiB). */
const OPEN_PIECE_ENTRIES = 65536
/** Reads of a piece at open before two in a row must agree. */
const AGREED_READ_ATTEMPTS = 5
/** The longest varint: a logical gap below 2^53 takes 8 bytes of 7 bits. */
const MAX_VARINT_BYTES = 8

/** A scavenged chunk's whole position map, in memory. */
export interface ResidentPosMap {
  /** Entries in the file's map (`footer.posMapCount`). */
  readonly count: number
  /** Per group: the logical position and physical data offset of its first entry. */
  readonly firstLogical: Float64Array
  readonly firstPhysical: Uint32Array
  /** Per group: where the varints of its second and later entries start in `deltas`. */
  readonly groupStart: Uint32Array
  /** Per entry after the first of its group: varint physical step, varint logical gap beyond it. */
  readonly deltas: Uint8Array
  /** Why the map cannot be used (its bytes on disk are damaged), or undefined. */
  readonly problem: string | undefined
}

/** Entries the map holds in memory (every entry of a sound map): for tests and stats. */
export const residentEntries = (map: ResidentPosMap): number => (map.problem === undefined ? map.count : 0)

/** Bytes of memory the map's arrays hold (their whole backing buffers): for tests and stats. */
export const residentBytes = (map: ResidentPosMap): number =>
  map.firstLogical.buffer.byteLength +
  map.firstPhysical.buffer.byteLength +
  map.groupStart.buffer.byteLength +
  map.deltas.buffer.byteLength

/** What a lookup needs of the chunk file holding a map (a ChunkFile is one). */
export interface MappedFile {
  readonly path: string
  /** Physical bytes of record data (the boundary past the last entry). */
  readonly dataSize: number
}

/** The range of logical positions a chunk's records can have, to check a map against. */
export interface MapBounds {
  readonly startPosition: number
  /** First logical position after the chunk's data (start + footer.logicalDataSize). */
  readonly logicalEnd: number
  readonly dataSize: number
}

const groupCount = (count: number): number => Math.ceil(count / POSMAP_GROUP_ENTRIES)

const entriesIn = (map: ResidentPosMap, group: number): number =>
  Math.min(POSMAP_GROUP_ENTRIES, map.count - group * POSMAP_GROUP_ENTRIES)

const damagedMap = (count: number, problem: string): ResidentPosMap => ({
  count,
  firstLogical: new Float64Array(0),
  firstPhysical: new Uint32Array(0),
  groupStart: new Uint32Array(0),
  deltas: new Uint8Array(0),
  problem
})

/**
 * Builds the resident map from the map's bytes fed in order, in pieces of whole entries, checking the shape
 * a rewrite gives every map.
 */
export class ResidentPosMapBuilder {
  private readonly firstLogical: Float64Array
  private readonly firstPhysical: Uint32Array
  private readonly groupStart: Uint32Array
  private deltas: Uint8Array
  private length = 0
  private seen = 0
  private prevLogical = -1
  private prevPhysical = -1
  private problem: string | undefined

  constructor(
    private readonly count: number,
    private readonly bounds: MapBounds
  ) {
    const groups = groupCount(count)
    this.firstLogical = new Float64Array(groups)
    this.firstPhysical = new Uint32Array(groups)
    this.groupStart = new Uint32Array(groups)
    // Typical entries take 3-4 bytes; the array doubles when a map's gaps are larger.
    this.deltas = new Uint8Array(Math.max(64, count * 4))
  }

  /** Adds `bytes` (whole entries, from the entry after the last one added). */
  add(bytes: Buffer): void {
    const entries = Math.floor(bytes.length / POSMAP_ENTRY_SIZE)
    for (let i = 0; i < entries && this.problem === undefined; i++) {
      this.addEntry(bytes.readUInt32LE(i * POSMAP_ENTRY_SIZE), readU64(bytes, i * POSMAP_ENTRY_SIZE + 4))
    }
  }

  finish(): ResidentPosMap {
    const { count, bounds } = this
    if (this.problem === undefined && this.seen !== count)
      this.problem = `it holds ${this.seen} entries, the footer says ${count}`
    if (this.problem === undefined && count > 0) {
      // The last record runs from its offset to the end of the data, and must end inside the chunk.
      if (this.prevPhysical >= bounds.dataSize)
        this.problem = `its last offset ${this.prevPhysical} is past the data (${bounds.dataSize} bytes)`
      else if (this.prevLogical + (bounds.dataSize - this.prevPhysical) > bounds.logicalEnd) {
        this.problem = `its last record (at ${this.prevLogical}) ends past the chunk's positions (${bounds.logicalEnd})`
      }
    }
    if (this.problem !== undefined) return damagedMap(count, `the position map is damaged: ${this.problem}`)
    // One copy to the exact size, so the map does not keep the growth's slack for its lifetime.
    const deltas = this.length === this.deltas.length ? this.deltas : this.deltas.slice(0, this.length)
    return {
      count,
      firstLogical: this.firstLogical,
      firstPhysical: this.firstPhysical,
      groupStart: this.groupStart,
      deltas,
      problem: undefined
    }
  }

  /**
   * Records are copied back to back from offset 0 and keep their logical positions, which never overlap:
   * each offset step is a record's length, and the logical gap to the next kept record is at least that.
   */
  private addEntry(physical: number, logical: number): void {
    const index = this.seen++
    if (index === 0) {
      if (physical !== 0) this.problem = `its first offset is ${physical}, not 0`
      else if (logical < this.bounds.startPosition)
        this.problem = `its first position ${logical} is before the chunk (${this.bounds.startPosition})`
    } else if (physical <= this.prevPhysical) {
      this.problem = `entry ${index}'s offset ${physical} does not follow ${this.prevPhysical}`
    } else if (logical - this.prevLogical < physical - this.prevPhysical) {
      this.problem = `entry ${index} (position ${logical}) overlaps the record before it (position ${this.prevLogical}, ${physical - this.prevPhysical} bytes)`
    }
    if (this.problem !== undefined) return
    if (index % POSMAP_GROUP_ENTRIES === 0) {
      const group = index / POSMAP_GROUP_ENTRIES
      this.firstLogical[group] = logical
      this.firstPhysical[group] = physical
      this.groupStart[group] = this.length
    } else {
      const step = physical - this.prevPhysical
      this.push(step)
      this.push(logical - this.prevLogical - step)
    }
    this.prevPhysical = physical
    this.prevLogical = logical
  }

  /** Appends an unsigned LEB128 varint (7 bits a byte, low first; arithmetic, as values pass 2^32). */
  private push(value: number): void {
    if (this.length + MAX_VARINT_BYTES > this.deltas.length) {
      const grown = new Uint8Array(this.deltas.length * 2)
      grown.set(this.deltas.subarray(0, this.length))
      this.deltas = grown
    }
    let rest = value
    while (rest >= 0x80) {
      this.deltas[this.length++] = (rest % 0x80) | 0x80
      rest = Math.floor(rest / 0x80)
    }
    this.deltas[this.length++] = rest
  }
}

/** The resident map of map bytes held in memory whole (a chunk just rewritten). */
export const residentPosMapOf = (bytes: Buffer, count: number, bounds: MapBounds): ResidentPosMap => {
  const builder = new ResidentPosMapBuilder(count, bounds)
  builder.add(bytes)
  return builder.finish()
}

/** `length` bytes at `offset`, believed once two reads in a row agree (a read may bring damaged bytes). */
const agreedRead = (handle: FileHandle, offset: number, length: number): Effect.Effect<Buffer, DiskError> =>
  Effect.gen(function* () {
    let previous = yield* handle.read(offset, length)
    for (let attempt = 1; attempt < AGREED_READ_ATTEMPTS; attempt++) {
      const next = yield* handle.read(offset, length)
      if (next.equals(previous)) return next
      previous = next
    }
    return yield* new DiskError({
      reason: "IOError",
      op: "read",
      path: handle.path,
      message: `${AGREED_READ_ATTEMPTS} reads of ${handle.path}'s position map gave different bytes`
    })
  })

/** Reads a completed scavenged chunk's map at open into its resident form. */
export const readResidentPosMap = (
  handle: FileHandle,
  count: number,
  bounds: MapBounds
): Effect.Effect<ResidentPosMap, DiskError> =>
  Effect.gen(function* () {
    const builder = new ResidentPosMapBuilder(count, bounds)
    const start = HEADER_SIZE + bounds.dataSize
    for (let entry = 0; entry < count; entry += OPEN_PIECE_ENTRIES) {
      const length = Math.min(OPEN_PIECE_ENTRIES, count - entry) * POSMAP_ENTRY_SIZE
      const bytes = yield* agreedRead(handle, start + entry * POSMAP_ENTRY_SIZE, length)
      if (bytes.length !== length) return damagedMap(count, `the position map is truncated (${count} entries expected)`)
      builder.add(bytes)
    }
    return builder.finish()
  })

const mapCorrupt = (file: MappedFile, message: string) =>
  new StorageCorrupt({ message: `${file.path}: ${message}`, path: file.path })

/** Index of the first group whose first position is ≥ `position` (`upper`: > it). */
const searchFirsts = (values: Float64Array, position: number, upper: boolean): number => {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (upper ? values[mid]! <= position : values[mid]! < position) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * What `walkGroup` found. One object reused by every lookup (they are synchronous and never nest), so a
 * lookup allocates nothing: index execution makes millions of them.
 */
const found = {
  /** Index in the group of the first entry ≥ the position (the group's entry count when none is). */
  index: 0,
  /** That entry's logical position and physical offset (when index < entries). */
  logical: 0,
  physical: 0,
  /** The logical position of the entry before it (when index > 0). */
  before: 0
}

/** Where the next varint of a map's deltas starts (lookups are synchronous and never nest). */
let cursor = 0

/** The unsigned LEB128 varint at `cursor` (most are one byte), moving past it. */
const nextVarint = (deltas: Uint8Array): number => {
  let byte = deltas[cursor++]!
  if (byte < 0x80) return byte
  let value = byte & 0x7f
  for (let scale = 0x80; byte >= 0x80; scale *= 0x80) {
    byte = deltas[cursor++]!
    value += (byte & 0x7f) * scale
  }
  return value
}

/** Decodes a group's entries up to the first with a logical position ≥ `position`, into `found`. */
const walkGroup = (map: ResidentPosMap, group: number, position: number): void => {
  const deltas = map.deltas
  const entries = entriesIn(map, group)
  cursor = map.groupStart[group]!
  let logical = map.firstLogical[group]!
  let physical = map.firstPhysical[group]!
  let before = 0
  let index = 0
  while (logical < position) {
    if (++index === entries) {
      // Every entry of the group is < position: the last one is the entry before the boundary.
      before = logical
      break
    }
    // The physical step (the previous record's length), then the bytes removed beyond it.
    const step = nextVarint(deltas)
    const gap = nextVarint(deltas)
    before = logical
    physical += step
    logical += step + gap
  }
  found.index = index
  found.logical = logical
  found.physical = physical
  found.before = before
}

/**
 * Why the record read at an offset the map gave is not the one the map says is there, or undefined when it
 * is (or the map said nothing: `expected` undefined, an unscavenged chunk or the end of the data). The map's
 * bytes have no checksum of their own, so a damaged entry must not send a read to another record silently.
 */
export const mapMismatch = (expected: number | undefined, actual: number): string | undefined =>
  expected === undefined || expected === actual
    ? undefined
    : `the position map gives position ${expected} for the record at its offset, which is at ${actual}`

/**
 * The physical data offset (from the data's start) of the record at `position`: undefined when the map has
 * no entry there (a removed record), StorageCorrupt when the map is damaged.
 */
export const mappedOffset = (
  file: MappedFile,
  map: ResidentPosMap,
  position: number
): number | undefined | StorageCorrupt => {
  if (map.problem !== undefined) return mapCorrupt(file, map.problem)
  // The group holding the last entry ≤ position.
  const group = searchFirsts(map.firstLogical, position, true) - 1
  if (group < 0) return undefined
  walkGroup(map, group, position)
  return found.index < entriesIn(map, group) && found.logical === position ? found.physical : undefined
}

/**
 * Where records at or after a logical position start, and what the map says is there: the record a scan
 * reads at `offset` must have position `at`, and the one ending there (read backwards) position `before`.
 */
export interface MapBoundary {
  /** Physical data offset (from the data's start) of the first entry ≥ the position; the data size if none. */
  readonly offset: number
  /** That entry's logical position (undefined at the end of the data). */
  readonly at: number | undefined
  /** The logical position of the entry before it (undefined when there is none). */
  readonly before: number | undefined
}

/** The boundary between the entries < `position` and those ≥ it; StorageCorrupt when the map is damaged. */
export const mappedBoundary = (
  file: MappedFile,
  map: ResidentPosMap,
  position: number
): MapBoundary | StorageCorrupt => {
  if (map.problem !== undefined) return mapCorrupt(file, map.problem)
  // The group holding the last entry < position; none when the first entry is already ≥ it.
  const group = searchFirsts(map.firstLogical, position, false) - 1
  if (group < 0) {
    return map.count === 0
      ? { offset: file.dataSize, at: undefined, before: undefined }
      : { offset: map.firstPhysical[0]!, at: map.firstLogical[0]!, before: undefined }
  }
  walkGroup(map, group, position)
  const before = found.before
  if (found.index < entriesIn(map, group)) return { offset: found.physical, at: found.logical, before }
  const next = group + 1
  return next < map.firstLogical.length
    ? { offset: map.firstPhysical[next]!, at: map.firstLogical[next]!, before }
    : { offset: file.dataSize, at: undefined, before }
}
