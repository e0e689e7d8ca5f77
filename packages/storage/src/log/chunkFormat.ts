/**
 * Chunk files: the log is a sequence of chunk files, each covering `chunkSize` bytes of logical log
 * positions (chunk n covers [n × chunkSize, (n+1) × chunkSize)); a scavenge-merged chunk covers the
 * positions of chunks start..end.
 *
 * File layout:
 *
 *   header (128 bytes) | record data (physicalDataSize bytes) | position map (completed, scavenged
 *   chunks only: entries of u32 physical offset + u64 logical position) | footer (128 bytes, completed
 *   chunks only)
 *
 * Header: magic "VLCK", u8 format version, u32 chunkSize, u32 startNumber, u32 endNumber,
 * u8 isScavenged, 16-byte chunk id, …, u32 CRC-32 of bytes 0..123 at offset 124.
 * Footer: magic "VLCF", u8 flags (bit 0: completed), u32 physicalDataSize, u64 logicalDataSize,
 * u32 posMapCount, …, u32 CRC-32 of the whole file before offset 120 of the footer at 120, and
 * u32 CRC-32 of footer bytes 0..123 at 124.
 *
 * In an unscavenged chunk a record's physical offset is `HEADER_SIZE + (position - startPosition)`.
 * A scavenged chunk keeps only surviving records, so positions are found through the position map
 * (sorted by logical position); the record itself still carries its logical position, so a log
 * position stays valid across scavenges (as in the reference server).
 *
 * File names: `chunk-SSSSSS.VVVVVV` (start number, version, each at least six digits); the highest
 * version of a start wins.
 */
import { assert } from "@vellum/platform"
import { checksum } from "../codec/checksum.js"
import { readU64, uuidFromBytes, uuidToBytes, writeU64 } from "../codec/bytes.js"

export const HEADER_SIZE = 128
export const FOOTER_SIZE = 128
export const POSMAP_ENTRY_SIZE = 12
// The checksums of header and footer are their last word (124..128), after every field (the header's end
// with the chunk id at 19..35, the footer's with the file checksum at 120..124).
assert(HEADER_SIZE === 124 + 4, "chunkFormat: the header's fields and checksum fill HEADER_SIZE")
assert(FOOTER_SIZE === 124 + 4, "chunkFormat: the footer's fields and checksums fill FOOTER_SIZE")
assert(POSMAP_ENTRY_SIZE === 4 + 8, "chunkFormat: a position map entry is a u32 offset and a u64 position")
const HEADER_MAGIC = 0x4b434c56 // "VLCK" little-endian
const FOOTER_MAGIC = 0x46434c56 // "VLCF"
/** 2: every checksum is CRC-32 (1 used CRC-32C). */
const FORMAT_VERSION = 2

export interface ChunkHeader {
  readonly chunkSize: number
  readonly startNumber: number
  readonly endNumber: number
  readonly isScavenged: boolean
  readonly chunkId: string
}

export interface ChunkFooter {
  readonly physicalDataSize: number
  /** Logical bytes covered by the data: for an unscavenged chunk equal to physicalDataSize. */
  readonly logicalDataSize: number
  readonly posMapCount: number
  /** CRC-32 of the file up to the footer's checksum field. */
  readonly fileChecksum: number
}

export const encodeHeader = (header: ChunkHeader): Buffer => {
  const buf = Buffer.alloc(HEADER_SIZE)
  buf.writeUInt32LE(HEADER_MAGIC, 0)
  buf[4] = FORMAT_VERSION
  buf.writeUInt32LE(header.chunkSize, 6)
  buf.writeUInt32LE(header.startNumber, 10)
  buf.writeUInt32LE(header.endNumber, 14)
  buf[18] = header.isScavenged ? 1 : 0
  uuidToBytes(header.chunkId, buf, 19)
  buf.writeUInt32LE(checksum(buf, 0, 124), 124)
  return buf
}

export const decodeHeader = (buf: Buffer): ChunkHeader | string => {
  if (buf.length < HEADER_SIZE) return "header is truncated"
  if (buf.readUInt32LE(0) !== HEADER_MAGIC) return "header magic is wrong"
  // The version first: a chunk of an older format (other checksums) is named as such, not as damaged.
  if (buf[4] !== FORMAT_VERSION)
    return `unsupported chunk format version ${buf[4]} (this node writes ${FORMAT_VERSION})`
  if (checksum(buf, 0, 124) !== buf.readUInt32LE(124)) return "header checksum mismatch"
  return {
    chunkSize: buf.readUInt32LE(6),
    startNumber: buf.readUInt32LE(10),
    endNumber: buf.readUInt32LE(14),
    isScavenged: buf[18] === 1,
    chunkId: uuidFromBytes(buf, 19)
  }
}

/** Footer bytes; `fileChecksum` is the CRC of everything before footer offset 120 (see `footerChecksumInput`). */
export const encodeFooterPrefix = (footer: Omit<ChunkFooter, "fileChecksum">): Buffer => {
  const buf = Buffer.alloc(FOOTER_SIZE)
  buf.writeUInt32LE(FOOTER_MAGIC, 0)
  buf[4] = 1 // completed
  buf.writeUInt32LE(footer.physicalDataSize, 5)
  writeU64(buf, 9, footer.logicalDataSize)
  buf.writeUInt32LE(footer.posMapCount, 17)
  return buf
}

/** Seals a footer prefix with the file checksum and the footer's own checksum. */
export const sealFooter = (footer: Buffer, fileChecksum: number): Buffer => {
  footer.writeUInt32LE(fileChecksum >>> 0, 120)
  footer.writeUInt32LE(checksum(footer, 0, 124), 124)
  return footer
}

export const decodeFooter = (buf: Buffer): ChunkFooter | string => {
  if (buf.length < FOOTER_SIZE) return "footer is truncated"
  if (buf.readUInt32LE(0) !== FOOTER_MAGIC) return "footer magic is wrong (chunk not completed)"
  if (checksum(buf, 0, 124) !== buf.readUInt32LE(124)) return "footer checksum mismatch"
  if ((buf[4]! & 1) === 0) return "footer does not mark the chunk completed"
  return {
    physicalDataSize: buf.readUInt32LE(5),
    logicalDataSize: readU64(buf, 9),
    posMapCount: buf.readUInt32LE(17),
    fileChecksum: buf.readUInt32LE(120)
  }
}

/** Size of a completed chunk file. */
export const completedFileSize = (footer: Omit<ChunkFooter, "fileChecksum">): number =>
  HEADER_SIZE + footer.physicalDataSize + footer.posMapCount * POSMAP_ENTRY_SIZE + FOOTER_SIZE

/** Position map of a scavenged chunk: logical positions ascending with their physical data offsets. */
export interface PosMap {
  readonly logical: Float64Array
  readonly physical: Uint32Array
}

/** Whether typed arrays use little-endian words, as every format here does (x86 and ARM both do). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

export const encodePosMap = (map: PosMap): Buffer => {
  const count = map.logical.length
  const buf = Buffer.alloc(count * POSMAP_ENTRY_SIZE)
  if (LITTLE_ENDIAN) {
    // An entry is three aligned u32 words (offset, position low, position high): written as words, a
    // 700,000-entry map of a 256 MiB chunk costs no Buffer call per field. (Buffer.alloc is never pooled,
    // so the buffer starts at offset 0 of its own memory.)
    const words = new Uint32Array(buf.buffer, buf.byteOffset, count * 3)
    for (let i = 0; i < count; i++) {
      const position = map.logical[i]!
      words[i * 3] = map.physical[i]!
      words[i * 3 + 1] = position >>> 0
      words[i * 3 + 2] = Math.floor(position / 4294967296)
    }
    return buf
  }
  for (let i = 0; i < count; i++) {
    buf.writeUInt32LE(map.physical[i]!, i * POSMAP_ENTRY_SIZE)
    writeU64(buf, i * POSMAP_ENTRY_SIZE + 4, map.logical[i]!)
  }
  return buf
}

export const decodePosMap = (buf: Buffer, count: number): PosMap => {
  const logical = new Float64Array(count)
  const physical = new Uint32Array(count)
  for (let i = 0; i < count; i++) {
    physical[i] = buf.readUInt32LE(i * POSMAP_ENTRY_SIZE)
    logical[i] = readU64(buf, i * POSMAP_ENTRY_SIZE + 4)
  }
  return { logical, physical }
}

/** Index of the first posmap entry with logical position ≥ `position` (binary search). */
export const posMapLowerBound = (map: PosMap, position: number): number => {
  let lo = 0
  let hi = map.logical.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (map.logical[mid]! < position) lo = mid + 1
    else hi = mid
  }
  return lo
}

// At least six digits: `padStart` widens numbers past 999,999, and such a name must still parse (the
// header's start number is a u32, and the simulator's tiny chunks reach a million chunks quickly).
const CHUNK_NAME = /^chunk-(\d{6,})\.(\d{6,})$/

export const chunkFileName = (startNumber: number, version: number): string =>
  `chunk-${String(startNumber).padStart(6, "0")}.${String(version).padStart(6, "0")}`

export const parseChunkFileName = (name: string): { startNumber: number; version: number } | undefined => {
  const m = CHUNK_NAME.exec(name)
  return m === null ? undefined : { startNumber: Number(m[1]), version: Number(m[2]) }
}

export const isTempFileName = (name: string): boolean => name.endsWith(".tmp")
