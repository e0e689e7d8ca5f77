/**
 * Log records: the bytes of the transaction log.
 *
 * Framing (every record, in a chunk's data area):
 *
 *   u32 bodyLength | u32 checksum(body) | body | u32 bodyLength
 *
 * The length suffix lets `$all` be read backwards; the checksum (which the reference server lacks)
 * catches torn writes and bit rot on every read. A record's log position is the logical position of
 * its first framing byte; its "post position" is position + bodyLength + FRAME_OVERHEAD.
 *
 * Body: u8 kind | u8 version | i64 logPosition | kind-specific fields (all little-endian). Storing the
 * logical position inside the record keeps it valid when scavenging moves the record physically.
 *
 * Kinds:
 * - Event: one event of an append (also tombstones, `$metadata` events, links). Flags say JSON,
 *   link (`$>`), tombstone (hard delete), and the first/last record of one atomic append.
 * - Commit: marks a committed legacy transaction (format support; the writer commits appends
 *   implicitly and does not emit these today).
 * - Epoch: written when a node starts leading (every start of a single node); read as an event of
 *   `$epoch-information`.
 * - ScavengePoint: the boundary of a scavenge run (number, EffectiveNow, threshold); writing one
 *   completes the active chunk; read as an event of `$scavengePoints`.
 */
import { checksum } from "../codec/checksum.js"
import { Utf8Interner } from "../codec/interner.js"
import {
  readI64,
  readU32Unchecked,
  readU64,
  uuidFromBytes,
  uuidToBytes,
  writeI64,
  writeU32Unchecked,
  writeU64,
  type ByteWriter
} from "../codec/bytes.js"

export const FRAME_OVERHEAD = 12
export const MAX_RECORD_BODY = 16 * 1024 * 1024

export const RecordKind = { Event: 1, Commit: 2, Epoch: 3, ScavengePoint: 4 } as const
export type RecordKind = (typeof RecordKind)[keyof typeof RecordKind]

export const EventFlags = {
  Json: 0x01,
  Link: 0x02,
  Tombstone: 0x04,
  BatchBegin: 0x08,
  BatchEnd: 0x10
} as const

export interface EventRecord {
  readonly kind: typeof RecordKind.Event
  readonly logPosition: number
  readonly flags: number
  readonly eventNumber: number
  readonly createdMicros: number
  readonly eventId: string
  readonly stream: string
  readonly eventType: string
  readonly data: Buffer
  readonly metadata: Buffer
}

export interface CommitRecord {
  readonly kind: typeof RecordKind.Commit
  readonly logPosition: number
  readonly transactionPosition: number
  readonly firstEventNumber: number
  readonly correlationId: string
  readonly timeMicros: number
}

export interface EpochRecord {
  readonly kind: typeof RecordKind.Epoch
  readonly logPosition: number
  readonly epochNumber: number
  /** Log position of the previous epoch record, -1 for the first. */
  readonly prevEpochPosition: number
  readonly epochId: string
  readonly leaderInstanceId: string
  readonly timeMicros: number
}

export interface ScavengePointRecord {
  readonly kind: typeof RecordKind.ScavengePoint
  readonly logPosition: number
  /** Counts from 0; also the record's event number in `$scavengePoints`. */
  readonly number: number
  readonly eventId: string
  /** The time used to judge `$maxAge` for this scavenge (µs since the Unix epoch). */
  readonly effectiveNowMicros: number
  /** -1: every chunk; 0: every chunk with something to remove; > 0: minimum chunk weight. */
  readonly threshold: number
  readonly timeMicros: number
}

export type LogRecord = EventRecord | CommitRecord | EpochRecord | ScavengePointRecord

/** A record without its position: what the writer is asked to append. */
export type NewRecord =
  | Omit<EventRecord, "logPosition">
  | Omit<CommitRecord, "logPosition">
  | Omit<EpochRecord, "logPosition">
  | Omit<ScavengePointRecord, "logPosition">

const HEADER = 10 // kind, version, logPosition

/**
 * UTF-8 byte length, remembering the last stream and type asked about: the records of one append share their
 * stream and type strings, and a record's length is asked for several times on its way to the log, so most
 * calls are an identity check instead of a call into Buffer.
 */
let lastStream = ""
let lastStreamBytes = 0
let lastType = ""
let lastTypeBytes = 0
const streamLength = (s: string): number => {
  if (s !== lastStream) {
    lastStream = s
    lastStreamBytes = Buffer.byteLength(s, "utf8")
  }
  return lastStreamBytes
}
const typeLength = (s: string): number => {
  if (s !== lastType) {
    lastType = s
    lastTypeBytes = Buffer.byteLength(s, "utf8")
  }
  return lastTypeBytes
}

/** The body length a record will have (without framing). */
export const bodyLength = (record: NewRecord): number => {
  switch (record.kind) {
    case RecordKind.Event:
      return (
        HEADER +
        2 +
        8 +
        8 +
        16 +
        4 +
        streamLength(record.stream) +
        4 +
        typeLength(record.eventType) +
        4 +
        record.data.length +
        4 +
        record.metadata.length
      )
    case RecordKind.Commit:
      return HEADER + 8 + 8 + 16 + 8
    case RecordKind.Epoch:
      return HEADER + 8 + 8 + 16 + 16 + 8
    case RecordKind.ScavengePoint:
      return HEADER + 8 + 16 + 8 + 8 + 8
  }
}

/** On-disk size of a record including framing. */
export const framedLength = (record: NewRecord): number => bodyLength(record) + FRAME_OVERHEAD

const writeString = (buf: Buffer, offset: number, s: string): number => {
  // Short ASCII (most stream names and types) is copied in a loop: cheaper than a call into Buffer.
  const length = s.length
  if (length <= 64) {
    let i = 0
    for (; i < length; i++) {
      const c = s.charCodeAt(i)
      if (c > 0x7f) break
      buf[offset + 4 + i] = c
    }
    if (i === length) {
      writeU32Unchecked(buf, offset, length)
      return offset + 4 + length
    }
  }
  const n = buf.write(s, offset + 4, "utf8")
  buf.writeUInt32LE(n, offset)
  return offset + 4 + n
}

const writeBytes = (buf: Buffer, offset: number, bytes: Uint8Array): number => {
  writeU32Unchecked(buf, offset, bytes.length)
  buf.set(bytes, offset + 4)
  return offset + 4 + bytes.length
}

/**
 * Appends the framed record at `logPosition` to `out`; returns the framed length.
 * The body is written in place and checksummed, so a batch is encoded into one buffer with no copies.
 */
export const encodeRecord = (out: ByteWriter, record: NewRecord, logPosition: number): number => {
  const body = bodyLength(record)
  if (body > MAX_RECORD_BODY) throw new RangeError(`record body of ${body} bytes exceeds ${MAX_RECORD_BODY}`)
  out.ensure(body + FRAME_OVERHEAD)
  const buf = out.buf
  const start = out.length
  const b = start + 8
  // Unchecked stores: `ensure` made room for the whole frame, and the length check below catches a miscount.
  writeU32Unchecked(buf, start, body)
  buf[b] = record.kind
  buf[b + 1] = 1
  writeU64(buf, b + 2, logPosition)
  let o = b + HEADER
  switch (record.kind) {
    case RecordKind.Event:
      buf[o] = record.flags
      buf[o + 1] = record.flags >>> 8
      writeU64(buf, o + 2, record.eventNumber)
      writeU64(buf, o + 10, record.createdMicros)
      uuidToBytes(record.eventId, buf, o + 18)
      o = writeString(buf, o + 34, record.stream)
      o = writeString(buf, o, record.eventType)
      o = writeBytes(buf, o, record.data)
      o = writeBytes(buf, o, record.metadata)
      break
    case RecordKind.Commit:
      writeU64(buf, o, record.transactionPosition)
      writeU64(buf, o + 8, record.firstEventNumber)
      uuidToBytes(record.correlationId, buf, o + 16)
      writeU64(buf, o + 32, record.timeMicros)
      o += 40
      break
    case RecordKind.Epoch:
      writeU64(buf, o, record.epochNumber)
      writeI64(buf, o + 8, record.prevEpochPosition)
      uuidToBytes(record.epochId, buf, o + 16)
      uuidToBytes(record.leaderInstanceId, buf, o + 32)
      writeU64(buf, o + 48, record.timeMicros)
      o += 56
      break
    case RecordKind.ScavengePoint:
      writeU64(buf, o, record.number)
      uuidToBytes(record.eventId, buf, o + 8)
      writeU64(buf, o + 24, record.effectiveNowMicros)
      writeI64(buf, o + 32, record.threshold)
      writeU64(buf, o + 40, record.timeMicros)
      o += 48
      break
  }
  if (o !== b + body) throw new Error(`record encoder wrote ${o - b} bytes, expected ${body}`)
  writeU32Unchecked(buf, start + 4, checksum(buf, b, b + body))
  writeU32Unchecked(buf, b + body, body)
  out.length = b + body + 4
  return body + FRAME_OVERHEAD
}

/** Body bytes after the 10-byte header for the fixed-size kinds (see `bodyLength`). */
const FIXED_FIELDS: Readonly<Record<number, number>> = {
  [RecordKind.Commit]: 40,
  [RecordKind.Epoch]: 56,
  [RecordKind.ScavengePoint]: 48
}

/** Why bytes at a position are not a valid record. */
export type FrameProblem = "length" | "checksum" | "suffix" | "kind" | "position" | "truncated"

export type DecodeResult =
  | { readonly ok: true; readonly record: LogRecord; readonly length: number }
  | { readonly ok: false; readonly problem: FrameProblem }

/** Event fields before the stream name: flags, event number, created time, event id. */
const EVENT_FIXED = 34

/**
 * Whether the framed record at `at`, whose body length `body` was read and fits in `buf`, is one
 * `decodeRecord` would accept — suffix, checksum, kind and field layout — without decoding it (for scans
 * that look at a few fields in place). `withChecksum: false` skips the record's checksum, for a scan that
 * checks the whole file's checksum instead.
 */
export const isWellFramed = (buf: Buffer, at: number, body: number, withChecksum = true): boolean => {
  if (body < HEADER || body > MAX_RECORD_BODY) return false
  const b = at + 8
  const end = b + body
  if (end + 4 > buf.length || readU32Unchecked(buf, end) !== body) return false
  if (withChecksum && checksum(buf, b, end) !== readU32Unchecked(buf, at + 4)) return false
  const kind = buf[b]!
  if (kind !== RecordKind.Event) {
    const fixed = FIXED_FIELDS[kind]
    return fixed !== undefined && body - HEADER === fixed
  }
  // Four length-prefixed fields (stream, type, data, metadata) must end exactly at the body's end.
  let o = b + HEADER + EVENT_FIXED
  for (let field = 0; field < 4; field++) {
    if (o + 4 > end) return false
    o += 4 + readU32Unchecked(buf, o)
  }
  return o === end
}

/**
 * Whether the well-framed record whose frame starts at `at` ends a write unit (one append's records run from
 * BatchBegin to BatchEnd; any other kind is a unit alone): the log's end and a replica's slice never lie
 * inside a unit.
 */
export const endsUnitAt = (buf: Buffer, at: number): boolean =>
  buf[at + 8] !== RecordKind.Event || (buf[at + 8 + HEADER]! & EventFlags.BatchEnd) !== 0

const EMPTY = Buffer.alloc(0)

/** Stream names and event types repeat from record to record; decode them through one shared cache. */
const names = new Utf8Interner()

/**
 * The stream name of the well-framed event record whose frame starts at `at`, through the decoder's shared
 * interner (for scans that read a few fields in place).
 */
export const eventStreamAt = (buf: Buffer, at: number): string => {
  const o = at + 8 + HEADER + EVENT_FIXED
  return names.decode(buf, o + 4, o + 4 + buf.readUInt32LE(o))
}

/**
 * Length of the length-prefixed field at `offset`, checked to end inside the record (else a RangeError).
 * The prefix itself must lie inside the record too: the reads here are unchecked (`readU32Unchecked`).
 */
const fieldLength = (buf: Buffer, offset: number, end: number): number => {
  if (offset + 4 > end) throw new RangeError("a field runs past the record")
  const n = readU32Unchecked(buf, offset)
  if (offset + 4 + n > end) throw new RangeError("a field runs past the record")
  return n
}

// Data and metadata are views, not copies: the buffers records are decoded from (cached blocks, fresh disk
// reads, concatenated spans) are never written after they are made, so the bytes stay valid for as long as
// a caller keeps the event. Copying was a quarter of a read's time (mostly garbage collection).
const view = (buf: Buffer, start: number, n: number): Buffer => (n === 0 ? EMPTY : buf.subarray(start, start + n))

/**
 * Decodes the framed record starting at `offset` of `buf`, which holds bytes up to `limit`.
 * `expectedPosition` (when given) must equal the position stored in the record: a record read from the
 * wrong place is reported, not returned.
 */
export const decodeRecord = (buf: Buffer, offset: number, limit: number, expectedPosition?: number): DecodeResult => {
  if (offset + 8 > limit || limit > buf.length) return { ok: false, problem: "truncated" }
  const body = readU32Unchecked(buf, offset)
  if (body < HEADER || body > MAX_RECORD_BODY) return { ok: false, problem: "length" }
  const b = offset + 8
  const end = b + body
  if (end + 4 > limit) return { ok: false, problem: "truncated" }
  if (readU32Unchecked(buf, end) !== body) return { ok: false, problem: "suffix" }
  if (checksum(buf, b, end) !== readU32Unchecked(buf, offset + 4)) return { ok: false, problem: "checksum" }
  const kind = buf[b]!
  // A fixed-size record must fill its body exactly: a shorter body would otherwise be read past its end
  // (into the length suffix and the next record), a longer one would carry bytes nobody checks.
  const fixed = FIXED_FIELDS[kind]
  if (fixed !== undefined && body - HEADER !== fixed) return { ok: false, problem: "length" }
  const logPosition = readU64(buf, b + 2)
  if (expectedPosition !== undefined && logPosition !== expectedPosition) return { ok: false, problem: "position" }
  const o = b + HEADER
  try {
    const record = decodeBody(buf, kind, logPosition, o, end)
    if (record === undefined) return { ok: false, problem: "kind" }
    return { ok: true, record, length: body + FRAME_OVERHEAD }
  } catch {
    return { ok: false, problem: "length" }
  }
}

const decodeBody = (buf: Buffer, kind: number, logPosition: number, o: number, end: number): LogRecord | undefined => {
  switch (kind) {
    case RecordKind.Event: {
      // The fixed fields are read unchecked, so they must fit before the variable ones are looked at.
      if (o + EVENT_FIXED > end) return undefined
      const flags = buf[o]! | (buf[o + 1]! << 8)
      const eventNumber = readU64(buf, o + 2)
      const createdMicros = readU64(buf, o + 10)
      const eventId = uuidFromBytes(buf, o + 18)
      let at = o + EVENT_FIXED
      const streamLength = fieldLength(buf, at, end)
      const stream = names.decode(buf, at + 4, at + 4 + streamLength)
      at += 4 + streamLength
      const typeLength = fieldLength(buf, at, end)
      const eventType = names.decode(buf, at + 4, at + 4 + typeLength)
      at += 4 + typeLength
      const dataLength = fieldLength(buf, at, end)
      const data = view(buf, at + 4, dataLength)
      at += 4 + dataLength
      const metadataLength = fieldLength(buf, at, end)
      const metadata = view(buf, at + 4, metadataLength)
      if (at + 4 + metadataLength !== end) return undefined
      return {
        kind: RecordKind.Event,
        logPosition,
        flags,
        eventNumber,
        createdMicros,
        eventId,
        stream,
        eventType,
        data,
        metadata
      }
    }
    case RecordKind.Commit:
      return {
        kind: RecordKind.Commit,
        logPosition,
        transactionPosition: readU64(buf, o),
        firstEventNumber: readU64(buf, o + 8),
        correlationId: uuidFromBytes(buf, o + 16),
        timeMicros: readU64(buf, o + 32)
      }
    case RecordKind.Epoch:
      return {
        kind: RecordKind.Epoch,
        logPosition,
        epochNumber: readU64(buf, o),
        prevEpochPosition: readI64(buf, o + 8),
        epochId: uuidFromBytes(buf, o + 16),
        leaderInstanceId: uuidFromBytes(buf, o + 32),
        timeMicros: readU64(buf, o + 48)
      }
    case RecordKind.ScavengePoint:
      return {
        kind: RecordKind.ScavengePoint,
        logPosition,
        number: readU64(buf, o),
        eventId: uuidFromBytes(buf, o + 8),
        effectiveNowMicros: readU64(buf, o + 24),
        threshold: readI64(buf, o + 32),
        timeMicros: readU64(buf, o + 40)
      }
    default:
      return undefined
  }
}

/** Reads only the stream name of an event record (for index collision checks) without decoding the rest. */
export const peekStream = (buf: Buffer, offset: number): string | undefined => {
  const b = offset + 8
  if (buf[b] !== RecordKind.Event) return undefined
  const o = b + HEADER + 34
  const n = buf.readUInt32LE(o)
  return buf.toString("utf8", o + 4, o + 4 + n)
}
