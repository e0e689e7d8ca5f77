/**
 * A forward scan over the log's raw records, for whole-log passes that look at a few fields of most
 * records and decode only some (scavenge accumulation reads every record's kind, flags and time, and the
 * whole record only for tombstones and metadata).
 *
 * It visits exactly the records `TransactionLog.scanForward(from, limit)` returns, in the same order, and
 * checks each frame as `decodeRecord` does (lengths, checksum, kind, field layout), failing with
 * StorageCorrupt where that would. What differs is the cost: chunk files are read in large sequential
 * pieces straight from their handles (not through the block cache, which a whole-log pass would empty of
 * what readers need), and a record is only looked at in place — no object, no strings, no UUID per record.
 * One Effect per piece; stepping through a piece's records is a plain method call.
 *
 * With `verifyFiles`, a completed chunk the scan reads whole (from its first record to within a piece of its
 * end) is checked by its file checksum instead of each record's: the checksum is continued over each piece
 * as it is read (one native call per 4 MiB rather than one per record — about a third of a scan's time),
 * and compared when the scan leaves the chunk, after the rest of the file is read. A mismatch fails the scan
 * there, AFTER the chunk's records were handed out: such a caller must not keep what it did with a chunk
 * before the scan has left it (accumulation commits per chunk). Records it decodes are checked as ever.
 *
 * Usage: `while (yield* scan.nextPiece) while (scan.next()) { scan.kind ... scan.decode() }`.
 */
import { Effect } from "effect"
import { StorageCorrupt, type ReadError } from "../errors.js"
import { readU32Unchecked } from "../codec/bytes.js"
import { checksumUpdate } from "../codec/checksum.js"
import { takeBuffer, type BufferPool } from "./BufferPool.js"
import { isScavenged, physicalOffsetAtOrAfter, type ChunkFile } from "./ChunkFile.js"
import { FOOTER_SIZE, HEADER_SIZE, completedFileSize } from "./chunkFormat.js"
import { mapMismatch } from "./PositionMap.js"
import {
  FRAME_OVERHEAD,
  MAX_RECORD_BODY,
  decodeRecord,
  eventStreamAt,
  isWellFramed,
  type LogRecord
} from "./records.js"

/** Bytes per read of a chunk file. */
const PIECE = 4 * 1024 * 1024
/** Body bytes before the kind-specific fields: kind, version, logPosition. */
const BODY_HEADER = 10
/** Event fields before the stream name: flags, event number, created, event id. */
const EVENT_FIXED = 34
const DOLLAR = 0x24
const TWO_32 = 2 ** 32
const EMPTY = Buffer.alloc(0)

const u32 = readU32Unchecked

/** Unsigned 64-bit (within 2^53, as the codec writes them). */
const u64 = (buf: Buffer, o: number): number => u32(buf, o + 4) * TWO_32 + u32(buf, o)

/**
 * A record's fields as a scan reads them in place (what a scavenge decides by). `stream`, `eventNumber`,
 * `flags` and `createdMicros` are meaningful for event records only.
 */
export interface ScannedRecord {
  readonly kind: number
  readonly logPosition: number
  readonly stream: string
  readonly eventNumber: number
  readonly flags: number
  readonly createdMicros: number
}

/** The scan's cursor: the current record's fields, read in place. */
export class RecordScan implements ScannedRecord {
  /** The current piece of a chunk file and the offsets of its records (valid, below the limit). */
  private buf: Buffer = EMPTY
  private offsets = new Int32Array(1024)
  private positions = new Float64Array(1024)
  private count = 0
  private index = -1
  /** Frame start of the current record in the piece. */
  private at = 0
  /** The record `streamName` belongs to (an index into the piece's records; -1 after a new piece). */
  private streamOf = -1
  private streamName = ""
  /** Logical position the scan continues from when it enters the next chunk. */
  private pos: number
  private chunk: ChunkFile | undefined = undefined
  /** Physical offset of the next piece and where the chunk's scanned data ends. */
  private phys = 0
  private physEnd = 0
  /**
   * Where the scan entered the current chunk and the position the chunk's map gives for the record there
   * (undefined for an unscavenged chunk): the record found there must carry it, or the map is damaged.
   */
  private entryPhys = 0
  private entryPosition: number | undefined = undefined
  /** Logical end of what the scan may return from the current chunk. */
  private end = 0
  private done = false
  /** Whether the current chunk is checked by its file checksum (see the module header), and how far it got. */
  private verifyingFile = false
  private fileCrc = 0
  /** The file's bytes up to here are in `fileCrc`; those from where the last piece stopped are `checkedTail`. */
  private crcEnd = 0
  private checkedTail: Buffer = EMPTY
  /** The two buffers pieces are read into, in turn (allocated on first use). */
  private readonly pieces: [Buffer | undefined, Buffer | undefined] = [undefined, undefined]

  constructor(
    private readonly log: ChunkSource,
    from: number,
    private readonly limit: number,
    private readonly pieceBytes: number,
    private readonly verifyFiles: boolean,
    private readonly pool: BufferPool | undefined
  ) {
    this.pos = Math.max(0, from)
  }

  /** Loads the next piece of records; false once the scan has reached `limit` or the end of the log. */
  readonly nextPiece: Effect.Effect<boolean, ReadError> = Effect.suspend(() => this.load())

  /** Moves to the next record of the loaded piece; false when the piece has no more. */
  next(): boolean {
    if (++this.index >= this.count) return false
    this.at = this.offsets[this.index]!
    return true
  }

  get kind(): number {
    return this.buf[this.at + 8]!
  }

  get logPosition(): number {
    return this.positions[this.index]!
  }

  /** Framed length of the current record. */
  get length(): number {
    return u32(this.buf, this.at) + FRAME_OVERHEAD
  }

  /** Event records: the flags (EventFlags). */
  get flags(): number {
    const o = this.at + 8 + BODY_HEADER
    return this.buf[o]! | (this.buf[o + 1]! << 8)
  }

  /** Event records: the event number. */
  get eventNumber(): number {
    return u64(this.buf, this.at + 8 + BODY_HEADER + 2)
  }

  /** Event records: when the event was created (µs). */
  get createdMicros(): number {
    return u64(this.buf, this.at + 8 + BODY_HEADER + 10)
  }

  /** Event records: the stream (interned, as the decoder's; remembered for the record, as callers ask twice). */
  get stream(): string {
    if (this.streamOf !== this.index) {
      this.streamName = eventStreamAt(this.buf, this.at)
      this.streamOf = this.index
    }
    return this.streamName
  }

  /** The piece holding the current record and where its frame starts in it (to copy the frame's bytes). */
  get piece(): Buffer {
    return this.buf
  }

  get frameStart(): number {
    return this.at
  }

  /** Event records: whether the stream is a metastream (its name starts with `$$`), without decoding it. */
  get isMetastreamEvent(): boolean {
    const o = this.at + 8 + BODY_HEADER + EVENT_FIXED
    return u32(this.buf, o) >= 2 && this.buf[o + 4] === DOLLAR && this.buf[o + 5] === DOLLAR
  }

  /** Scavenge point records: when the point was written (µs). */
  get scavengePointTimeMicros(): number {
    return u64(this.buf, this.at + 8 + BODY_HEADER + 40)
  }

  /** The current record, decoded (its data and metadata are views of the piece). */
  decode(): LogRecord {
    // A copy of the frame: the piece's buffer is reused two pieces on, and the record's data are views.
    const frame = Buffer.from(this.buf.subarray(this.at, this.at + this.length))
    const result = decodeRecord(frame, 0, frame.length)
    // The frame was checked when the piece was loaded.
    if (!result.ok) throw new Error(`a checked record failed to decode (${result.problem})`)
    return result.record
  }

  private load(): Effect.Effect<boolean, ReadError> {
    return Effect.gen(this, function* () {
      this.count = 0
      this.index = -1
      this.streamOf = -1
      while (!this.done) {
        const chunk = this.chunk ?? this.enterChunk()
        if (chunk === undefined) continue
        if (chunk instanceof StorageCorrupt) return yield* chunk
        if (this.phys >= this.physEnd) {
          if (this.verifyingFile) {
            const problem = yield* this.checkFile(chunk)
            if (problem !== undefined) return yield* Effect.fail(problem)
          }
          this.leaveChunk(chunk)
          continue
        }
        // A piece that fails its checks is read once more from disk: bytes damaged on their way are not
        // damage on disk (as the log's reads do with their cache).
        let problem = yield* this.readPiece(chunk)
        if (problem !== undefined) problem = yield* this.readPiece(chunk)
        if (problem !== undefined) return yield* Effect.fail(problem)
        if (this.count > 0) return true
      }
      return false
    })
  }

  /**
   * The chunk holding `pos`, set up for reading; undefined when there is nothing to read in it (or the scan
   * is done); StorageCorrupt when its position map is damaged.
   */
  private enterChunk(): ChunkFile | undefined | StorageCorrupt {
    if (this.pos >= this.limit) {
      this.done = true
      return undefined
    }
    const pos = this.pos
    const chunk = this.log.chunks().find((c) => c.startPosition <= pos && pos < c.endPosition)
    if (chunk === undefined) {
      this.done = true
      return undefined
    }
    const dataEnd = chunk.startPosition + (chunk.footer !== undefined ? chunk.footer.logicalDataSize : chunk.dataSize)
    this.end = Math.min(this.limit, dataEnd)
    if (pos >= this.end) {
      // The end of the written log: nothing later can be read yet.
      if (chunk.footer === undefined && this.end < this.limit) this.done = true
      else this.pos = chunk.endPosition
      return undefined
    }
    const boundary = physicalOffsetAtOrAfter(chunk, pos)
    if (boundary instanceof StorageCorrupt) return boundary
    this.phys = boundary.offset
    this.entryPhys = boundary.offset
    this.entryPosition = boundary.at
    this.physEnd = isScavenged(chunk) ? HEADER_SIZE + chunk.dataSize : HEADER_SIZE + (this.end - chunk.startPosition)
    this.verifyingFile =
      this.verifyFiles &&
      chunk.footer !== undefined &&
      this.phys === HEADER_SIZE &&
      HEADER_SIZE + chunk.dataSize - this.physEnd <= this.pieceBytes
    // Nothing of this file is checked yet (a chunk without records is checked whole when the scan leaves it).
    this.fileCrc = 0
    this.crcEnd = 0
    this.checkedTail = EMPTY
    this.chunk = chunk
    return chunk
  }

  private leaveChunk(chunk: ChunkFile): void {
    this.chunk = undefined
    // Past the data of a chunk that is not completed, the log has nothing more yet.
    if (chunk.footer === undefined) this.done = true
    else this.pos = chunk.endPosition
  }

  /** Reads the piece at `phys` and finds its records; a StorageCorrupt when a frame fails its checks. */
  private readPiece(chunk: ChunkFile): Effect.Effect<StorageCorrupt | undefined, ReadError> {
    return Effect.gen(this, function* () {
      const dataEnd = HEADER_SIZE + chunk.dataSize
      const start = this.phys
      // At least a length prefix, even when `limit` cuts the record right after its start.
      let buf = yield* this.readPieceBytes(
        chunk,
        start,
        Math.min(dataEnd, Math.max(start + 8, Math.min(this.physEnd, start + this.pieceBytes))) - start
      )
      this.count = 0
      if (buf.length === 0) return this.damaged(chunk, this.pos, "truncated")
      const verifying = this.verifyingFile
      if (verifying && start === HEADER_SIZE) {
        this.fileCrc = checksumUpdate(0, yield* chunk.handle.read(0, HEADER_SIZE))
        this.crcEnd = HEADER_SIZE
      }
      let at = 0
      while (at < buf.length) {
        const position = isScavenged(chunk) ? this.pos : chunk.startPosition + (start + at - HEADER_SIZE)
        if (at + 8 > buf.length) {
          if (at === 0) return this.damaged(chunk, position, "truncated")
          break
        }
        const body = u32(buf, at)
        if (body < BODY_HEADER || body > MAX_RECORD_BODY) return this.damaged(chunk, position, "length")
        const total = body + FRAME_OVERHEAD
        if (at + total > buf.length) {
          if (at > 0) break
          // A record longer than a piece, or one that starts below `limit` and ends past it: read it whole,
          // up to the end of the chunk's data.
          buf = yield* chunk.handle.read(start, Math.min(dataEnd - start, total))
          if (total > buf.length) return this.damaged(chunk, position, "truncated")
        }
        if (!isWellFramed(buf, at, body, !verifying)) return this.damaged(chunk, position, "frame")
        const logPosition = u64(buf, at + 10)
        const mismatch = start + at === this.entryPhys ? mapMismatch(this.entryPosition, logPosition) : undefined
        if (mismatch !== undefined) return this.damaged(chunk, position, mismatch)
        if (logPosition >= this.end) {
          this.phys = this.physEnd
          break
        }
        if (this.count === this.offsets.length) this.grow()
        this.offsets[this.count] = at
        this.positions[this.count++] = logPosition
        this.pos = isScavenged(chunk) ? logPosition + 1 : logPosition + total
        at += total
      }
      if (this.phys !== this.physEnd) this.phys = start + at
      if (verifying) {
        // The checksum must cover the very bytes the scan looked at: every byte of this piece goes in once, and
        // bytes a previous piece already put in (the record it stopped before) must be read the same again.
        const overlap = Math.min(this.crcEnd - start, buf.length)
        if (overlap > 0 && buf.compare(this.checkedTail, 0, overlap, 0, overlap) !== 0) {
          return this.damaged(chunk, this.pos, "two reads of the same bytes differ")
        }
        this.fileCrc = checksumUpdate(this.fileCrc, buf, Math.max(0, overlap))
        this.crcEnd = Math.max(this.crcEnd, start + buf.length)
        this.checkedTail = buf.subarray(at)
      }
      this.buf = buf
      return undefined
    })
  }

  /**
   * Reads a piece into whichever of the scan's two buffers does not hold the current piece (whose tail the
   * next piece is compared with): a whole-log pass reads gigabytes, and a fresh 4 MiB buffer per read left
   * the garbage collector and malloc holding hundreds of MiB of them at once.
   */
  private readPieceBytes(chunk: ChunkFile, start: number, length: number): Effect.Effect<Buffer, ReadError> {
    if (length > this.pieceBytes) return chunk.handle.read(start, length)
    const slot = this.pieces[0]?.buffer === this.buf.buffer ? 1 : 0
    const target = (this.pieces[slot] ??= takeBuffer(this.pool, this.pieceBytes))
    return Effect.map(chunk.handle.readInto(start, target.subarray(0, length)), (n) => target.subarray(0, n))
  }

  /** Gives the scan's piece buffers back to its pool: the scan (and every record view of it) is done. */
  release(): void {
    for (let slot = 0; slot < 2; slot++) {
      const buffer = this.pieces[slot]
      if (buffer !== undefined && this.pool !== undefined) this.pool.give(buffer)
      this.pieces[slot] = undefined
    }
    this.buf = EMPTY
    this.checkedTail = EMPTY
  }

  /** The rest of a file checked by its checksum (a scan's limit may stop short of its last record). */
  private checkFile(chunk: ChunkFile): Effect.Effect<StorageCorrupt | undefined, ReadError> {
    return Effect.gen(this, function* () {
      const footer = chunk.footer!
      const checkedEnd = completedFileSize(footer) - FOOTER_SIZE + 120
      const rest = yield* chunk.handle.read(this.crcEnd, checkedEnd - this.crcEnd)
      this.verifyingFile = false
      if (checksumUpdate(this.fileCrc, rest) === footer.fileChecksum) return undefined
      return new StorageCorrupt({
        message: `${chunk.path}: the file checksum does not match its contents (the bytes read may have been damaged on the way; scan again)`,
        path: chunk.path,
        position: chunk.startPosition
      })
    })
  }

  private grow(): void {
    const offsets = new Int32Array(this.offsets.length * 2)
    offsets.set(this.offsets)
    this.offsets = offsets
    const positions = new Float64Array(this.positions.length * 2)
    positions.set(this.positions)
    this.positions = positions
  }

  private damaged(chunk: ChunkFile, position: number, problem: string): StorageCorrupt {
    this.count = 0
    return new StorageCorrupt({
      message: `${chunk.path}: the record at log position ${position} is damaged (${problem})`,
      path: chunk.path,
      position
    })
  }
}

export interface ScanOptions {
  /** Bytes per read of a chunk file (tests use small pieces to cut records across them). */
  readonly pieceBytes?: number
  /** Check completed chunks read whole by their file checksum rather than each record's (module header). */
  readonly verifyFiles?: boolean
  /** Where the piece buffers come from (and go back to on `release`): a scavenge run's pool. */
  readonly pool?: BufferPool
}

/** What a scan needs of the log (a TransactionLog is one): its chunk files, in order. */
export interface ChunkSource {
  readonly chunks: () => ReadonlyArray<ChunkFile>
}

/** A scan of the records with position ≥ `from` and < `limit` (`from` as for `scanForward`). */
export const scanRecords = (log: ChunkSource, from: number, limit: number, options: ScanOptions = {}): RecordScan =>
  new RecordScan(log, from, limit, options.pieceBytes ?? PIECE, options.verifyFiles ?? false, options.pool)
