/**
 * Raw slices of the log for replication: the leader cuts them (`readSlice`, by the records' framing, and
 * by decoding them where the framing is not as it should be, to report why), a follower checks what it
 * received before writing a byte of it (`checkSlice`). A slice is whole framed records of one chunk, ending
 * where a write unit ends (an append's records run from BatchBegin to BatchEnd; an epoch or a scavenge
 * point is a unit alone), so a follower's writer checkpoint, like a leader's, never lands inside a unit.
 * A scavenged chunk's positions are no longer contiguous: from a position in one, the leader gives pieces
 * of its file as they lie on disk instead, which the follower installs whole (log/ChunkInstaller.ts).
 */
import { Effect } from "effect"
import { InvalidRequest } from "../errors.js"
import { isScavenged } from "../log/ChunkFile.js"
import { EventFlags, RecordKind, decodeRecord, type LogRecord } from "../log/records.js"
import type { ReadError, TransactionLog } from "../log/TransactionLog.js"
import type { ChunkFile } from "../log/ChunkFile.js"
import { completedFileSize } from "../log/chunkFormat.js"
import type { RawChunk, RawSlice } from "./ReplicaLog.js"
import { wholeUnitsLength } from "./framedUnits.js"

/** Whether a write unit ends with this record. */
export const endsUnit = (record: LogRecord): boolean =>
  record.kind !== RecordKind.Event || (record.flags & EventFlags.BatchEnd) !== 0

const PAGE = 256

/**
 * Whole units from `from` (a record boundary) up to about `maxBytes` (at least one unit), within `from`'s
 * chunk and below the writer checkpoint; undefined when `from` is the writer checkpoint. A slice ending
 * where a completed chunk's data ends says so (`completesChunk`), and at that point an empty slice does.
 */
export const readSlice = (
  log: TransactionLog,
  from: number,
  maxBytes: number,
  chunkOffset = 0
): Effect.Effect<RawSlice | RawChunk | undefined, ReadError | InvalidRequest> =>
  Effect.gen(function* () {
    const writer = log.writerPosition()
    if (from === writer) return undefined
    const chunk = Number.isSafeInteger(from) && from >= 0 && from < writer ? log.chunkAt(from) : undefined
    if (chunk === undefined)
      return yield* new InvalidRequest({ message: `position ${from} is not in this log (it ends at ${writer})` })
    // Its positions are no longer contiguous: the file is sent whole.
    if (isScavenged(chunk)) return yield* readChunkPiece(chunk, chunkOffset, maxBytes)
    const completed = chunk.footer !== undefined
    const dataEnd = completed ? chunk.startPosition + chunk.footer!.logicalDataSize : writer
    if (from === dataEnd) return { position: from, end: from, bytes: new Uint8Array(0), completesChunk: true }
    // By the framing, reading more while no unit ends in what was read; anything odd is left to the decoder.
    for (let upTo = Math.min(dataEnd, from + Math.max(1, maxBytes)); ;) {
      const bytes = yield* log.readBytes(from, upTo)
      const length = wholeUnitsLength(bytes, from, maxBytes)
      if (length === "damaged") break
      if (length > 0)
        return {
          position: from,
          end: from + length,
          bytes: length === bytes.length ? bytes : bytes.subarray(0, length),
          completesChunk: completed && from + length === dataEnd
        }
      if (upTo >= dataEnd) break
      upTo = Math.min(dataEnd, from + 2 * (upTo - from))
    }
    const first = yield* Effect.either(log.readRecord(from, dataEnd))
    if (first._tag === "Left" || first.right === undefined) {
      if (first._tag === "Left" && first.left._tag === "DiskError") return yield* first.left
      return yield* new InvalidRequest({ message: `position ${from} is not where a record starts` })
    }
    let end = from
    let pos = from
    for (;;) {
      const page = yield* log.scanForward(pos, dataEnd, PAGE)
      const records = page.records
      for (let i = 0; i < records.length; i++) {
        const record = records[i]!
        const recordEnd = i + 1 < records.length ? records[i + 1]!.logPosition : page.next
        if (!endsUnit(record)) continue
        if (recordEnd - from > maxBytes && end > from) return yield* slice(end)
        end = recordEnd
        if (end - from >= maxBytes) return yield* slice(end)
      }
      if (records.length === 0 || page.next >= dataEnd) return yield* slice(end)
      pos = page.next
    }

    function slice(to: number) {
      return Effect.map(log.readBytes(from, to), (bytes) => ({
        position: from,
        end: to,
        bytes,
        completesChunk: completed && to === dataEnd
      }))
    }
  })

/** At most `maxBytes` (at least one) of a completed chunk's file from `offset`, as they lie on disk. */
const readChunkPiece = (
  chunk: ChunkFile,
  offset: number,
  maxBytes: number
): Effect.Effect<RawChunk, ReadError | InvalidRequest> =>
  Effect.gen(function* () {
    const fileSize = completedFileSize(chunk.footer!)
    if (!Number.isSafeInteger(offset) || offset < 0 || offset >= fileSize)
      return yield* new InvalidRequest({ message: `offset ${offset} is not in ${chunk.path} (${fileSize} bytes)` })
    const bytes = yield* chunk.handle.read(offset, Math.min(fileSize - offset, Math.max(1, maxBytes)))
    return {
      _tag: "RawChunk",
      startNumber: chunk.header.startNumber,
      endNumber: chunk.header.endNumber,
      chunkId: chunk.header.chunkId,
      fileSize,
      offset,
      bytes
    } satisfies RawChunk
  })

/**
 * The records of a received slice if it can be written at `writer` as it is: it starts there, lies in one
 * chunk, and holds whole, checksummed records each carrying the position it lands at, the last ending a
 * unit. Anything else is refused before a byte is written.
 */
export const checkSlice = (
  slice: RawSlice,
  writer: number,
  chunkSize: number
): ReadonlyArray<LogRecord> | InvalidRequest => {
  const bad = (why: string) => new InvalidRequest({ message: `the slice at ${slice.position} is refused: ${why}` })
  const bytes = Buffer.from(slice.bytes.buffer, slice.bytes.byteOffset, slice.bytes.length)
  if (slice.position !== writer) return bad(`this log ends at ${writer}`)
  if (slice.end !== slice.position + bytes.length) return bad(`it ends at ${slice.end}, not after its bytes`)
  const chunkEnd = (Math.floor(writer / chunkSize) + 1) * chunkSize
  if (slice.end > chunkEnd) return bad(`it runs past the end of its chunk at ${chunkEnd}`)
  if (bytes.length === 0 && !slice.completesChunk) return bad("it is empty")
  const records: Array<LogRecord> = []
  let at = 0
  while (at < bytes.length) {
    const decoded = decodeRecord(bytes, at, bytes.length, slice.position + at)
    if (!decoded.ok) return bad(`no whole record at ${slice.position + at} (${decoded.problem})`)
    records.push(decoded.record)
    at += decoded.length
  }
  const last = records[records.length - 1]
  if (last !== undefined && !endsUnit(last)) return bad("it ends inside a write unit")
  return records
}
