/**
 * Writing a scavenged chunk: the records of one or more completed chunk files that a predicate keeps,
 * copied byte for byte (a record carries its logical position, so it stays valid) into one new completed
 * chunk covering the sources' whole range, with a position map and a footer sealed with the file checksum.
 *
 * The sources are read by the raw record scanner (RecordScanner.ts): sequentially, in large pieces straight
 * from their handles (not through the block cache: a scavenge would evict what readers need), each source
 * checked by its file checksum as it is read rather than record by record, and the predicate sees the
 * fields it decides by in place — no decoded record, no strings but the interned stream name. The new file
 * is written in large sequential writes: execution speed is compared with the disk's sequential write rate.
 * Effects run per piece. A source found damaged fails the rewrite after its records were copied, so the
 * rewrite is tried once more from the start (bytes damaged on their way from the disk are not damage on it)
 * before it fails.
 *
 * The output depends only on the sources' bytes and the predicate: its chunk id is derived from the
 * sources' ids and range (not drawn from Random), so two byte-identical logs rewritten alike give
 * byte-identical files (replicas and the simulator compare them).
 *
 * This module writes the temp file only; switching it in is ChunkReplacer.ts.
 */
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { Disk, type DiskError, type FileHandle } from "@vellum/platform"
import { uuidFromBytes, uuidToBytes, writeU32Unchecked, writeU64 } from "../codec/bytes.js"
import { checksumUpdate } from "../codec/checksum.js"
import { StorageCorrupt, StorageFailed } from "../errors.js"
import type { ChunkFile } from "./ChunkFile.js"
import {
  FOOTER_SIZE,
  HEADER_SIZE,
  POSMAP_ENTRY_SIZE,
  completedFileSize,
  decodeFooter,
  encodeFooterPrefix,
  encodeHeader,
  sealFooter,
  type ChunkFooter,
  type ChunkHeader
} from "./chunkFormat.js"
import { residentPosMapOf, type ResidentPosMap } from "./PositionMap.js"
import { scanRecords, type ScannedRecord } from "./RecordScanner.js"
import { takeBuffer, type BufferPool } from "./BufferPool.js"

/** Bytes per read of a source and per write of the new file. */
const PIECE = 4 * 1024 * 1024
/** Physical offsets in the position map and footer are u32. */
const MAX_PHYSICAL = 0xffffffff

export interface RewrittenChunk {
  /** Open on the temp file, which is complete and synced. */
  readonly handle: FileHandle
  readonly header: ChunkHeader
  readonly footer: ChunkFooter
  /** The map written, in its resident form (the 12-byte entries are only held while the file is written). */
  readonly posMap: ResidentPosMap
  readonly fileBytes: number
  readonly kept: number
  readonly removed: number
}

/**
 * The id of the chunk that replaces `sources`: a name-based UUID (version 8, RFC 9562) over their ids and
 * range, so equal inputs give equal files. It stays as unguessable to a client as the random ids it is
 * derived from, which is what makes the file checksum hard to forge (see TransactionLog.ts).
 */
export const scavengedChunkId = (sources: ReadonlyArray<ChunkFile>): string => {
  const hash = createHash("sha256").update("vellum/scavenged-chunk/1")
  const numbers = Buffer.alloc(8)
  numbers.writeUInt32LE(sources[0]!.header.startNumber, 0)
  numbers.writeUInt32LE(sources[sources.length - 1]!.header.endNumber, 4)
  hash.update(numbers)
  const id = Buffer.alloc(16)
  for (const source of sources) {
    uuidToBytes(source.header.chunkId, id, 0)
    hash.update(id)
  }
  const digest = hash.digest()
  digest[6] = (digest[6]! & 0x0f) | 0x80
  digest[8] = (digest[8]! & 0x3f) | 0x80
  return uuidFromBytes(digest, 0)
}

/** Buffers the new file's bytes and writes them in pieces of `capacity`, keeping the file's CRC. */
class SequentialWriter {
  private readonly buf: Buffer
  private length = 0
  /** File offset where the buffered bytes go. */
  private offset = 0
  crc = 0

  constructor(
    private readonly handle: FileHandle,
    readonly buffer: Buffer,
    capacity: number
  ) {
    this.buf = buffer.subarray(0, capacity)
  }

  /** Whether `n` more bytes fit without a flush. */
  fits(n: number): boolean {
    return this.length + n <= this.buf.length
  }

  /** Buffers bytes; the caller made room with `flush` (see `fits`) or the bytes are larger than a piece. */
  put(bytes: Uint8Array, start = 0, end = bytes.length): void {
    this.buf.set(start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end), this.length)
    this.length += end - start
  }

  flush(): Effect.Effect<void, DiskError> {
    return Effect.suspend(() => {
      if (this.length === 0) return Effect.void
      const piece = this.buf.subarray(0, this.length)
      this.crc = checksumUpdate(this.crc, piece)
      const at = this.offset
      this.offset += this.length
      this.length = 0
      // The buffer is reused only after the write completed (the Disk copies or writes it before that).
      return this.handle.write(at, piece)
    })
  }

  /** CRC-32 of every byte written or buffered so far. */
  crcSoFar(): number {
    return checksumUpdate(this.crc, this.buf, 0, this.length)
  }

  /** Writes bytes of any size: buffered when they fit, else after a flush (directly when larger than a piece). */
  write(bytes: Buffer): Effect.Effect<void, DiskError> {
    return Effect.suspend(() => {
      if (this.fits(bytes.length)) {
        this.put(bytes)
        return Effect.void
      }
      return Effect.zipRight(
        this.flush(),
        Effect.suspend(() => {
          if (this.fits(bytes.length)) {
            this.put(bytes)
            return Effect.void
          }
          const at = this.offset
          this.offset += bytes.length
          this.crc = checksumUpdate(this.crc, bytes)
          return this.handle.write(at, bytes)
        })
      )
    })
  }
}

/**
 * Whether a scavenged chunk keeps a record: a plain answer, or an Effect when answering needs I/O (the
 * scavenger's state may have to read a page). The record's fields stay valid until the answer is given.
 */
export type KeepRecord<E = never> = (record: ScannedRecord) => boolean | Effect.Effect<boolean, E>

export interface RewriteOptions<E> {
  readonly tmpPath: string
  readonly chunkSize: number
  /** Completed chunk files, ascending and contiguous. */
  readonly sources: ReadonlyArray<ChunkFile>
  readonly keep: KeepRecord<E>
  /** Where scratch buffers come from and go back to (a scavenge run's pool); allocated per rewrite without. */
  readonly pool?: BufferPool
}

/**
 * Writes the scavenged chunk replacing `sources` to `tmpPath` and syncs it. Reading a source fails with a
 * ReadError (StorageCorrupt when it is damaged, found twice); writing the temp file with StorageFailed. On
 * any failure the temp file is closed and removed (as far as the disk lets us; a leftover temp file is
 * removed when the log is opened).
 */
export const writeScavengedChunk = <E>(options: RewriteOptions<E>) =>
  Effect.catchIf(
    writeOnce(options),
    (error) => error instanceof StorageCorrupt,
    () => writeOnce(options)
  )

const writeOnce = <E>(options: RewriteOptions<E>) =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const { tmpPath, sources, keep, pool } = options
    const writing = <A>(effect: Effect.Effect<A, DiskError>) =>
      Effect.mapError(
        effect,
        (error) => new StorageFailed({ message: `writing the scavenged chunk ${tmpPath} failed: ${error.message}` })
      )
    const first = sources[0]!
    const last = sources[sources.length - 1]!
    const header: ChunkHeader = {
      chunkSize: options.chunkSize,
      startNumber: first.header.startNumber,
      endNumber: last.header.endNumber,
      isScavenged: true,
      chunkId: scavengedChunkId(sources)
    }
    if (yield* writing(disk.exists(tmpPath))) yield* writing(disk.remove(tmpPath))
    const handle = yield* writing(disk.open(tmpPath, { create: true, exclusive: true }))
    const abandon = Effect.zipRight(Effect.ignore(handle.close), Effect.ignore(disk.remove(tmpPath)))

    let sourceBytes = 0
    for (const source of sources) sourceBytes += HEADER_SIZE + source.dataSize
    const outBytes = Math.min(PIECE, Math.max(64 * 1024, sourceBytes + FOOTER_SIZE))
    const out = new SequentialWriter(handle, takeBuffer(pool, outBytes), outBytes)
    const scan = scanRecords({ chunks: () => sources }, first.startPosition, last.endPosition, {
      pieceBytes: PIECE,
      verifyFiles: true,
      pool
    })
    // The position map is built in its file format as records are kept (a 256 MiB chunk keeps ~700,000):
    // one buffer of 12-byte entries, grown by half, is what is written and what the resident map is built
    // from (typed arrays of the entries and then their encoding held each record's entry three times).
    let mapBuf = takeBuffer(pool, 4096 * POSMAP_ENTRY_SIZE)
    // The scratch goes back to the pool when the rewrite ends, whichever way (the resident map is a copy).
    const giveBack = Effect.sync(() => {
      scan.release()
      pool?.give(out.buffer)
      pool?.give(mapBuf)
    })
    const body = Effect.gen(function* () {
      out.put(encodeHeader(header))
      let kept = 0
      let dataBytes = 0
      let removed = 0
      // Kept records are copied in runs (a piece's frames lie back to back), not one by one: appends write
      // streams' events together, so kept and removed records come in long runs.
      const copy = (piece: Buffer, start: number, end: number) =>
        out.fits(end - start)
          ? (out.put(piece, start, end), Effect.void)
          : writing(out.write(piece.subarray(start, end)))
      while (yield* scan.nextPiece) {
        const piece = scan.piece
        let runStart = -1
        let runEnd = -1
        while (scan.next()) {
          const answer = keep(scan)
          if (!(answer === true || answer === false ? answer : yield* answer)) {
            removed++
            if (runStart >= 0) {
              yield* copy(piece, runStart, runEnd)
              runStart = -1
            }
            continue
          }
          const total = scan.length
          if (dataBytes + total > MAX_PHYSICAL) {
            return yield* Effect.fail(
              new StorageFailed({ message: `a scavenged chunk cannot hold more than ${MAX_PHYSICAL} bytes of records` })
            )
          }
          if (runStart < 0) runStart = scan.frameStart
          runEnd = scan.frameStart + total
          const entry = kept * POSMAP_ENTRY_SIZE
          if (entry + POSMAP_ENTRY_SIZE > mapBuf.length) {
            const grown = takeBuffer(pool, Math.ceil(kept * 1.5) * POSMAP_ENTRY_SIZE)
            mapBuf.copy(grown, 0, 0, entry)
            pool?.give(mapBuf)
            mapBuf = grown
          }
          writeU32Unchecked(mapBuf, entry, dataBytes)
          writeU64(mapBuf, entry + 4, scan.logPosition)
          kept++
          dataBytes += total
        }
        if (runStart >= 0) yield* copy(piece, runStart, runEnd)
      }
      const mapBytes = mapBuf.subarray(0, kept * POSMAP_ENTRY_SIZE)
      yield* writing(out.write(mapBytes))
      // The logical end of the data is the last source's: positions past it were never written.
      const base = {
        physicalDataSize: dataBytes,
        logicalDataSize: last.startPosition + last.footer!.logicalDataSize - first.startPosition,
        posMapCount: kept
      }
      const posMap = residentPosMapOf(mapBytes, kept, {
        startPosition: first.startPosition,
        logicalEnd: first.startPosition + base.logicalDataSize,
        dataSize: dataBytes
      })
      if (posMap.problem !== undefined)
        return yield* Effect.die(new Error(`the rewrite built a position map it cannot read back: ${posMap.problem}`))
      const prefix = encodeFooterPrefix(base)
      const footerBytes = sealFooter(prefix, checksumUpdate(out.crcSoFar(), prefix, 0, 120))
      yield* writing(out.write(footerBytes))
      yield* writing(out.flush())
      yield* writing(handle.sync)
      const footer = decodeFooter(footerBytes)
      if (typeof footer === "string")
        return yield* Effect.die(new Error(`footer encoder produced an invalid footer: ${footer}`))
      const result: RewrittenChunk = {
        handle,
        header,
        footer,
        posMap,
        fileBytes: completedFileSize(base),
        kept,
        removed
      }
      return result
    })
    return yield* Effect.ensuring(
      Effect.onError(body, () => abandon),
      giveBack
    )
  })
