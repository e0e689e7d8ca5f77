/**
 * One open chunk file: its header, its footer once completed, its resident position map once scavenged
 * (PositionMap.ts), and the operations that create, complete and map positions of a chunk. The
 * chunk format itself is described in chunkFormat.ts.
 */
import { Effect } from "effect"
import { Disk, DiskError, join, type FileHandle } from "@vellum/platform"
import { checksumUpdate } from "../codec/checksum.js"
import { StorageCorrupt } from "../errors.js"
import {
  FOOTER_SIZE,
  HEADER_SIZE,
  chunkFileName,
  completedFileSize,
  decodeFooter,
  decodeHeader,
  encodeFooterPrefix,
  encodeHeader,
  sealFooter,
  type ChunkFooter,
  type ChunkHeader
} from "./chunkFormat.js"
import {
  mappedBoundary,
  mappedOffset,
  readResidentPosMap,
  type MapBoundary,
  type ResidentPosMap
} from "./PositionMap.js"

let nextFileId = 1

export interface ChunkFile {
  /** Unique per opened file: the block cache's key, so a replaced chunk never serves stale blocks. */
  readonly fileId: number
  readonly path: string
  readonly header: ChunkHeader
  readonly handle: FileHandle
  readonly startPosition: number
  /** First logical position after this chunk. */
  readonly endPosition: number
  footer: ChunkFooter | undefined
  /** Why the bytes where a footer would be are not one (for error messages; set by `openChunkFile`). */
  footerProblem: string | undefined
  /** A completed scavenged chunk's position map, resident and delta-compressed (PositionMap.ts). */
  posMap: ResidentPosMap | undefined
  /** Physical bytes of record data (the writer's offset for the active chunk). */
  dataSize: number
}

export const isCompleted = (chunk: ChunkFile): boolean => chunk.footer !== undefined

/** A ChunkFile for an open file whose header is known (its footer and position map are set by the caller). */
export const makeChunkFile = (path: string, header: ChunkHeader, handle: FileHandle): ChunkFile => ({
  fileId: nextFileId++,
  path,
  header,
  handle,
  startPosition: header.startNumber * header.chunkSize,
  endPosition: (header.endNumber + 1) * header.chunkSize,
  footer: undefined,
  footerProblem: undefined,
  posMap: undefined,
  dataSize: 0
})

/** Whether the chunk's positions go through a position map (a completed scavenged chunk), not arithmetic. */
export const isScavenged = (chunk: ChunkFile): boolean => chunk.posMap !== undefined

/**
 * The physical file offset of the record at a logical position, or undefined when a scavenge removed it
 * (or the position is not a record of this scavenged chunk); StorageCorrupt when the chunk's map is damaged.
 */
export const physicalOffset = (chunk: ChunkFile, position: number): number | undefined | StorageCorrupt => {
  if (chunk.posMap === undefined) return HEADER_SIZE + (position - chunk.startPosition)
  const off = mappedOffset(chunk, chunk.posMap, position)
  return typeof off === "number" ? HEADER_SIZE + off : off
}

/**
 * Physical offset of the first record at or after a logical position (for scans), or the data end; for a
 * scavenged chunk also the positions its map gives for the records on either side (a scan checks the record
 * it reads there against them: `at` forward, `before` backward). Unscavenged: both undefined. StorageCorrupt
 * when the chunk's map is damaged.
 */
export const physicalOffsetAtOrAfter = (chunk: ChunkFile, position: number): MapBoundary | StorageCorrupt => {
  if (chunk.posMap === undefined)
    return { offset: HEADER_SIZE + Math.max(0, position - chunk.startPosition), at: undefined, before: undefined }
  const boundary = mappedBoundary(chunk, chunk.posMap, position)
  return boundary instanceof StorageCorrupt ? boundary : { ...boundary, offset: HEADER_SIZE + boundary.offset }
}

const corrupt = (path: string, message: string) => new StorageCorrupt({ message: `${path}: ${message}`, path })

/** Opens an existing chunk file, reading its header and (if present) its footer and position map. */
export const openChunkFile = (path: string, chunkSize: number) =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const handle = yield* disk.open(path)
    const size = yield* handle.size
    const header = decodeHeader(yield* handle.read(0, HEADER_SIZE))
    if (typeof header === "string") return yield* Effect.fail(corrupt(path, header))
    if (header.chunkSize !== chunkSize) {
      return yield* Effect.fail(
        corrupt(path, `chunk size ${header.chunkSize} differs from the configured ${chunkSize}`)
      )
    }
    const chunk = makeChunkFile(path, header, handle)
    if (size >= HEADER_SIZE + FOOTER_SIZE) {
      const footer = decodeFooter(yield* handle.read(size - FOOTER_SIZE, FOOTER_SIZE))
      if (typeof footer === "string") chunk.footerProblem = footer
      else if (completedFileSize(footer) !== size)
        chunk.footerProblem = `the footer's sizes add up to ${completedFileSize(footer)} bytes, the file has ${size}`
      else {
        chunk.footer = footer
        chunk.dataSize = footer.physicalDataSize
        // A scavenged chunk always maps positions, even with no record left: its positions are then all
        // removed (read as undefined), not offsets into data that is not there.
        // A damaged map is remembered and fails lookups, not the open.
        if (footer.posMapCount > 0 || header.isScavenged) {
          chunk.posMap = yield* readResidentPosMap(handle, footer.posMapCount, {
            startPosition: chunk.startPosition,
            logicalEnd: chunk.startPosition + footer.logicalDataSize,
            dataSize: footer.physicalDataSize
          })
        }
      }
    }
    return chunk
  })

/** Recomputes a completed chunk's file checksum and compares it with the footer's. */
export const verifyChunkFile = (chunk: ChunkFile) =>
  Effect.gen(function* () {
    const footer = chunk.footer
    if (footer === undefined) return yield* Effect.fail(corrupt(chunk.path, "chunk is not completed"))
    const end = completedFileSize(footer) - FOOTER_SIZE + 120
    // A mismatch is believed only when two reads agree on it (the first may have been damaged on its way).
    if ((yield* checksumPrefix(chunk.handle, end)) === footer.fileChecksum) return
    if ((yield* agreedChecksumPrefix(chunk.handle, end)) !== footer.fileChecksum) {
      return yield* Effect.fail(corrupt(chunk.path, "chunk checksum mismatch: the file is damaged"))
    }
  })

/** Reads of a file's prefix before two in a row must agree. */
const CHECKSUM_READ_ATTEMPTS = 5

/**
 * `checksumPrefix`, believed only once two reads in a row give the same checksum: a read can return bytes
 * damaged on their way that the disk does not hold, and a checksum written into a footer from such a read
 * would make a sound file look damaged forever.
 */
export const agreedChecksumPrefix = (handle: FileHandle, length: number): Effect.Effect<number, DiskError> =>
  Effect.gen(function* () {
    let previous = yield* checksumPrefix(handle, length)
    for (let attempt = 1; attempt < CHECKSUM_READ_ATTEMPTS; attempt++) {
      const next = yield* checksumPrefix(handle, length)
      if (next === previous) return next
      previous = next
    }
    return yield* new DiskError({
      reason: "IOError",
      op: "read",
      path: handle.path,
      message: `${CHECKSUM_READ_ATTEMPTS} reads of ${handle.path} gave different checksums`
    })
  })

/** CRC-32 of the first `length` bytes of a file, read in 4 MiB pieces. */
export const checksumPrefix = (handle: FileHandle, length: number): Effect.Effect<number, DiskError> =>
  Effect.gen(function* () {
    const piece = 4 * 1024 * 1024
    let crc = 0
    for (let at = 0; at < length; at += piece) {
      const buf = yield* handle.read(at, Math.min(piece, length - at))
      crc = checksumUpdate(crc, buf)
    }
    return crc
  })

export interface NewChunkOptions {
  readonly dir: string
  readonly startNumber: number
  readonly chunkSize: number
  readonly chunkId: string
  /** Size the file to its full data area up front (cheaper fdatasync on real disks). */
  readonly preallocate: boolean
}

/**
 * Creates an empty ongoing chunk durably: written under a temp name with its header, synced, renamed
 * into place, directory synced — so a crash never leaves a chunk name without a valid header.
 */
export const createChunkFile = (options: NewChunkOptions) =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const name = chunkFileName(options.startNumber, 0)
    const path = join(options.dir, name)
    const tmp = `${path}.tmp`
    if (yield* disk.exists(tmp)) yield* disk.remove(tmp)
    const header: ChunkHeader = {
      chunkSize: options.chunkSize,
      startNumber: options.startNumber,
      endNumber: options.startNumber,
      isScavenged: false,
      chunkId: options.chunkId
    }
    const tmpHandle = yield* disk.open(tmp, { create: true, exclusive: true })
    yield* tmpHandle.write(0, encodeHeader(header))
    if (options.preallocate) yield* tmpHandle.truncate(HEADER_SIZE + options.chunkSize)
    yield* tmpHandle.sync
    yield* tmpHandle.close
    yield* disk.rename(tmp, path)
    yield* disk.syncDir(options.dir)
    const handle = yield* disk.open(path)
    return makeChunkFile(path, header, handle)
  })

/**
 * Completes the active chunk: footer with the whole-file checksum, file shrunk to its final size, synced.
 * `runningCrc` is the CRC of header + data when the writer kept it; otherwise (the chunk was reopened) it is
 * recomputed from disk, from reads that agree.
 */
export const completeChunkFile = (chunk: ChunkFile, runningCrc: number | undefined) =>
  Effect.gen(function* () {
    const base = { physicalDataSize: chunk.dataSize, logicalDataSize: chunk.dataSize, posMapCount: 0 }
    const crc = runningCrc ?? (yield* agreedChecksumPrefix(chunk.handle, HEADER_SIZE + chunk.dataSize))
    const prefix = encodeFooterPrefix(base)
    const footerBytes = sealFooter(prefix, checksumUpdate(crc, prefix, 0, 120))
    yield* chunk.handle.write(HEADER_SIZE + chunk.dataSize, footerBytes)
    yield* chunk.handle.truncate(completedFileSize(base))
    yield* chunk.handle.sync
    const footer = decodeFooter(footerBytes)
    if (typeof footer === "string")
      return yield* Effect.die(new Error(`footer encoder produced an invalid footer: ${footer}`))
    chunk.footer = footer
  })
