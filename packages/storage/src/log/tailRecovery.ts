/**
 * Recovery of the active chunk past the durable writer checkpoint, by checksums.
 *
 * A batch is acknowledged once its chunk bytes are synced; the writer checkpoint (writer.chk) is synced only
 * now and then (TransactionLog.ts: when the log has grown `lag` bytes past it, at every chunk completion and
 * at a clean stop). So at open the durable checkpoint may be stale: acknowledged records can lie past it. They
 * carry checksums and their own log position, which is how they are found again:
 *
 * - From the checkpoint, whole valid records are read in order (length, checksum, suffix, field layout, and
 *   the position each one must carry where it lies). The log ends at the end of the last whole write unit
 *   among them: a unit's records were written and synced with one write, so a unit missing its end was
 *   never acknowledged (a write torn at a record boundary).
 * - At the first bad record (zeros of a preallocated chunk, garbage, a record cut short): if nothing valid
 *   follows it, it is a TORN TAIL — the end of a write that was never synced, so never acknowledged — and
 *   it is cut off. If a valid record does follow, bytes that were synced were damaged afterwards: DAMAGE TO
 *   ACKNOWLEDGED DATA, and the log refuses to open (StorageCorrupt naming the chunk file and the position of
 *   the bad record). Acknowledged records are never cut silently.
 *
 * "Follows" is searched at every byte offset after the bad record (its length may be the damaged field), for
 * a record that passes every check and carries the position of the offset it lies at, up to `lag` bytes past
 * the checkpoint: the writer syncs the checkpoint before acknowledged data lies further than that past it, so
 * the record after the last acknowledged one starts within that window, and bytes beyond it can only be an
 * unacknowledged write.
 *
 * A record below the durable checkpoint is not looked at here: damage there is found when it is read, as
 * before (StorageCorrupt).
 */
import { Effect } from "effect"
import type { DiskError } from "@vellum/platform"
import { readU32Unchecked, readU64 } from "../codec/bytes.js"
import { StorageCorrupt } from "../errors.js"
import type { ChunkFile } from "./ChunkFile.js"
import { HEADER_SIZE } from "./chunkFormat.js"
import { FRAME_OVERHEAD, MAX_RECORD_BODY, endsUnitAt, isWellFramed } from "./records.js"

/** Bytes read at a time. */
const PIECE = 1024 * 1024
/** A body holds at least its kind, version and position (and a length prefix and checksum precede it). */
const MIN_BODY = 10
const POSITION = 8 + 2
/** Zero runs in the damage search are skipped a block at a time. */
const ZERO_BLOCK = Buffer.alloc(4096)

/** What open found past the durable checkpoint (the simulator counts its coverage marks from it). */
export interface TailReport {
  /** The durable checkpoint open started from. */
  readonly checkpoint: number
  /** The end of the log open settled on (≥ checkpoint): the checkpoint was moved here. */
  readonly end: number
  /**
   * Bytes cut after `end` that were not zeros (counted up to the window's end, see the module comment): the
   * records of a unit without its end, and a torn or unsynced write.
   */
  readonly cutBytes: number
}

/** The verdict on the active chunk's tail: where the log ends, or the damage that stops the open. */
export type TailVerdict =
  { readonly _tag: "Tail"; readonly report: TailReport } | { readonly _tag: "Damaged"; readonly error: StorageCorrupt }

/** One scan's verdict, and the log position of the first bad record it met (the data's end if none). */
interface Scan {
  readonly verdict: TailVerdict
  readonly firstBad: number
}

/**
 * Scans `chunk` (the active chunk, unscavenged and not completed) from the durable `checkpoint`; `fileSize` is
 * the file's size, `lag` the most bytes acknowledged data may lie past the durable checkpoint.
 *
 * A read can come back damaged on its way from the disk while the bytes stored are sound. A damaged copy only
 * ever makes a valid record look bad (a record is taken only whole with its checksum), so read as it was it
 * could refuse a sound log, or cut acknowledged records off as a torn tail. So a scan that met anything but
 * zeros past its end is done once more from the disk, as every damaged read of the log is read again, and
 * the scan whose first bad record lies further saw more of the log as it is: its verdict stands. Where both
 * met their first bad record at the same place, a valid record found after it by either scan cannot be a
 * damaged copy's doing, so damage stands; of two tails, the longer.
 */
export const scanTail = (
  chunk: ChunkFile,
  checkpoint: number,
  fileSize: number,
  chunkSize: number,
  lag: number
): Effect.Effect<TailVerdict, DiskError> =>
  Effect.flatMap(scanTailOnce(chunk, checkpoint, fileSize, chunkSize, lag), (first) => {
    if (first.verdict._tag === "Tail" && first.verdict.report.cutBytes === 0) return Effect.succeed(first.verdict)
    return Effect.map(scanTailOnce(chunk, checkpoint, fileSize, chunkSize, lag), (second) => truer(first, second))
  })

/** The verdict of the scan that saw more of the log as it is (see `scanTail`). */
const truer = (a: Scan, b: Scan): TailVerdict => {
  if (a.firstBad !== b.firstBad) return a.firstBad > b.firstBad ? a.verdict : b.verdict
  if (a.verdict._tag === "Damaged") return a.verdict
  if (b.verdict._tag === "Damaged") return b.verdict
  return b.verdict.report.end > a.verdict.report.end ? b.verdict : a.verdict
}

const scanTailOnce = (
  chunk: ChunkFile,
  checkpoint: number,
  fileSize: number,
  chunkSize: number,
  lag: number
): Effect.Effect<Scan, DiskError> =>
  Effect.gen(function* () {
    const base = chunk.startPosition - HEADER_SIZE
    const dataEnd = Math.min(fileSize, HEADER_SIZE + chunkSize)
    let at = HEADER_SIZE + (checkpoint - chunk.startPosition)
    let unitEnd = at
    let buf: Buffer = Buffer.alloc(0)
    let bufStart = at
    let problem: string | undefined
    while (at < dataEnd) {
      if (at + 8 > bufStart + buf.length) {
        buf = yield* chunk.handle.read(at, Math.min(PIECE, dataEnd - at))
        bufStart = at
      }
      const o = at - bufStart
      if (o + 8 > buf.length) {
        problem = "truncated"
        break
      }
      const body = readU32Unchecked(buf, o)
      if (body < MIN_BODY || body > MAX_RECORD_BODY) {
        problem = "length"
        break
      }
      const total = body + FRAME_OVERHEAD
      if (at + total > dataEnd) {
        problem = "truncated"
        break
      }
      if (o + total > buf.length) {
        buf = yield* chunk.handle.read(at, Math.max(total, Math.min(PIECE, dataEnd - at)))
        bufStart = at
      }
      const r = at - bufStart
      if (!isWellFramed(buf, r, body) || readU64(buf, r + POSITION) !== base + at) {
        problem = "frame"
        break
      }
      at += total
      if (endsUnitAt(buf, r)) unitEnd = at
    }
    // Where the window ends (see the module comment): no acknowledged byte lies further past the checkpoint.
    const windowEnd = Math.min(dataEnd, HEADER_SIZE + (checkpoint + lag - chunk.startPosition))
    if (problem !== undefined) {
      const following = yield* findRecordAfter(chunk, at, dataEnd, checkpoint + lag)
      if (following !== undefined) {
        const verdict: TailVerdict = {
          _tag: "Damaged",
          error: new StorageCorrupt({
            message: `${chunk.path}: the record at log position ${base + at} is damaged (${problem}) and a valid record follows it at ${following}: acknowledged data is damaged, the log is not opened (restore this chunk from a replica or a backup)`,
            path: chunk.path,
            position: base + at
          })
        }
        return { verdict, firstBad: base + at }
      }
    }
    const cutBytes = yield* nonZeroBytes(chunk, unitEnd, Math.max(at, windowEnd))
    const verdict: TailVerdict = { _tag: "Tail", report: { checkpoint, end: base + unitEnd, cutBytes } }
    return { verdict, firstBad: base + at }
  })

/**
 * The log position of a valid record starting after physical offset `bad` and at or before log position
 * `lastStart`, within the chunk's bytes below `dataEnd`; undefined when there is none.
 */
const findRecordAfter = (
  chunk: ChunkFile,
  bad: number,
  dataEnd: number,
  lastStart: number
): Effect.Effect<number | undefined, DiskError> =>
  Effect.gen(function* () {
    const base = chunk.startPosition - HEADER_SIZE
    // The last offset a record could start at: within the window, with room for a header.
    const last = Math.min(lastStart - base, dataEnd - (8 + MIN_BODY + 4))
    for (let start = bad + 1; start <= last; start += PIECE) {
      // Read past the piece by a record's first bytes, so a record starting near its end is seen whole enough.
      const piece = yield* chunk.handle.read(start, Math.min(PIECE + POSITION + 8, dataEnd - start))
      const end = Math.min(PIECE, last - start + 1)
      for (let o = 0; o < end; o++) {
        if (o % ZERO_BLOCK.length === 0 && o + ZERO_BLOCK.length <= piece.length) {
          // No record starts where its length prefix would be four zeros: skip to the block's last three bytes.
          if (ZERO_BLOCK.compare(piece, o, o + ZERO_BLOCK.length) === 0) {
            o += ZERO_BLOCK.length - 4
            continue
          }
        }
        if (o + POSITION + 8 > piece.length) break
        const body = readU32Unchecked(piece, o)
        if (body < MIN_BODY || body > MAX_RECORD_BODY) continue
        if (readU64(piece, o + POSITION) !== base + start + o) continue
        const total = body + FRAME_OVERHEAD
        if (start + o + total > dataEnd) continue
        const frame = o + total <= piece.length ? piece : yield* chunk.handle.read(start + o, total)
        if (isWellFramed(frame, frame === piece ? o : 0, body)) return base + start + o
      }
    }
    return undefined
  })

/** How many bytes in [from, to) of the chunk file are not zero (a preallocated chunk is zeros past its data). */
const nonZeroBytes = (chunk: ChunkFile, from: number, to: number): Effect.Effect<number, DiskError> =>
  Effect.gen(function* () {
    let count = 0
    for (let start = from; start < to; start += PIECE) {
      const piece = yield* chunk.handle.read(start, Math.min(PIECE, to - start))
      for (let o = 0; o < piece.length; o += ZERO_BLOCK.length) {
        const n = Math.min(ZERO_BLOCK.length, piece.length - o)
        if (ZERO_BLOCK.compare(piece, o, o + n, 0, n) === 0) continue
        for (let i = o; i < o + n; i++) if (piece[i] !== 0) count++
      }
    }
    return count
  })
