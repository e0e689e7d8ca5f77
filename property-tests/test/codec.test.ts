/**
 * Codec properties:
 * - every record kind (Event, Commit, Epoch, ScavengePoint) round-trips through encodeRecord/decodeRecord,
 *   alone and packed back to back in one ByteWriter (as a write batch is), at any offset;
 * - a damaged frame (any flipped bit, a cut-off tail, a wrong expected position) is reported, never
 *   decoded into a different record;
 * - the checksum (CRC-32, zlib's) equals a bit-by-bit reference on random buffers, sub-ranges and unaligned
 *   views, and checksumUpdate continues a checksum across any split points.
 */
import { describe, it } from "vitest"
import assert from "node:assert/strict"
import * as fc from "fast-check"
import { ByteWriter } from "../../packages/storage/src/codec/bytes.js"
import { checksum, checksumUpdate } from "../../packages/storage/src/codec/checksum.js"
import {
  RecordKind,
  decodeRecord,
  encodeRecord,
  framedLength,
  type LogRecord,
  type NewRecord
} from "../../packages/storage/src/log/records.js"

// ---------------------------------------------------------------------------------------------------
// CRC-32 reference: one bit at a time, reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF.

const crcBitwise = (data: Uint8Array, crc = 0): number => {
  let c = ~crc >>> 0
  for (const byte of data) {
    c ^= byte
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1
  }
  return ~c >>> 0
}

describe("the checksum (CRC-32)", () => {
  it("matches the published check values", () => {
    assert.strictEqual(crcBitwise(Buffer.from("123456789")), 0xcbf43926)
    assert.strictEqual(checksum(Buffer.from("123456789")), 0xcbf43926)
    assert.strictEqual(checksum(new Uint8Array(0)), 0)
    assert.strictEqual(checksum(new Uint8Array(32)), 0x190a55ad) // 32 bytes of zeros
    assert.strictEqual(checksum(new Uint8Array(32).fill(0xff)), 0xff6cab0b) // 32 bytes of 0xFF
  })

  it("equals the bit-by-bit reference on random buffers", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300, size: "max" }), (data) => {
        assert.strictEqual(checksum(data), crcBitwise(data))
      }),
      { numRuns: 2000 }
    )
  })

  it("equals the reference on sub-ranges and unaligned views", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 200, size: "max" }),
        fc.nat(),
        fc.nat(),
        fc.nat(7),
        (data, a, b, shift) => {
          const start = a % (data.length + 1)
          const end = start + (b % (data.length - start + 1))
          assert.strictEqual(checksum(data, start, end), crcBitwise(data.subarray(start, end)))
          const backing = new Uint8Array(data.length + shift)
          backing.set(data, shift)
          const view = backing.subarray(shift)
          assert.strictEqual(checksum(view), crcBitwise(data))
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("checksumUpdate continues across any split points", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200, size: "max" }),
        fc.array(fc.nat(), { maxLength: 5 }),
        (data, cuts) => {
          const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((x, y) => x - y)
          let crc = 0
          let from = 0
          for (const p of [...points, data.length]) {
            crc = checksumUpdate(crc, data, from, p)
            from = p
          }
          assert.strictEqual(crc, crcBitwise(data))
          // The reference continued from a prefix's checksum gives the same answer.
          const mid = points[0] ?? 0
          assert.strictEqual(crcBitwise(data.subarray(mid), crcBitwise(data.subarray(0, mid))), crc)
        }
      ),
      { numRuns: 2000 }
    )
  })
})

// ---------------------------------------------------------------------------------------------------
// Records

const MAX_SAFE = Number.MAX_SAFE_INTEGER
const u64 = fc.oneof(
  fc.nat(1000),
  fc.integer({ min: 0, max: MAX_SAFE }),
  fc.constantFrom(0, 2 ** 32 - 1, 2 ** 32, MAX_SAFE)
)
const i64 = fc.oneof(
  fc.integer({ min: -1, max: 1000 }),
  fc.integer({ min: -MAX_SAFE, max: MAX_SAFE }),
  fc.constantFrom(-1, -(2 ** 32), MAX_SAFE, -MAX_SAFE)
)
const uuid = fc.uuid().map((u) => u.toLowerCase())
/** Well-formed Unicode (lone surrogates cannot survive UTF-8 and never arrive over HTTP). */
const text = fc.string({ unit: "binary", maxLength: 40 })
const bytes = fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b))

const eventArb: fc.Arbitrary<NewRecord> = fc.record({
  kind: fc.constant(RecordKind.Event),
  flags: fc.integer({ min: 0, max: 0xffff }),
  eventNumber: u64,
  createdMicros: u64,
  eventId: uuid,
  stream: text,
  eventType: text,
  data: bytes,
  metadata: bytes
})
const commitArb: fc.Arbitrary<NewRecord> = fc.record({
  kind: fc.constant(RecordKind.Commit),
  transactionPosition: u64,
  firstEventNumber: u64,
  correlationId: uuid,
  timeMicros: u64
})
const epochArb: fc.Arbitrary<NewRecord> = fc.record({
  kind: fc.constant(RecordKind.Epoch),
  epochNumber: u64,
  prevEpochPosition: i64,
  epochId: uuid,
  leaderInstanceId: uuid,
  timeMicros: u64
})
const scavengePointArb: fc.Arbitrary<NewRecord> = fc.record({
  kind: fc.constant(RecordKind.ScavengePoint),
  number: u64,
  eventId: uuid,
  effectiveNowMicros: u64,
  threshold: i64,
  timeMicros: u64
})
const recordArb = fc.oneof(eventArb, commitArb, epochArb, scavengePointArb)

/** What decoding must give back: the record, with its position. */
const withPosition = (record: NewRecord, logPosition: number): LogRecord => ({ ...record, logPosition }) as LogRecord

describe("record codec", () => {
  it("every kind round-trips at any offset", () => {
    fc.assert(
      fc.property(recordArb, u64, fc.nat(40), (record, position, prefix) => {
        const out = new ByteWriter(16)
        out.ensure(prefix)
        out.buf.fill(0xa5, 0, prefix)
        out.length = prefix
        const length = encodeRecord(out, record, position)
        assert.strictEqual(length, framedLength(record))
        assert.strictEqual(out.length, prefix + length)
        const decoded = decodeRecord(out.buf, prefix, out.length, position)
        assert.ok(decoded.ok, `decode failed: ${JSON.stringify(decoded)}`)
        assert.strictEqual(decoded.length, length)
        assert.deepStrictEqual(decoded.record, withPosition(record, position))
      }),
      { numRuns: 3000 }
    )
  })

  it("a batch packed in one writer decodes record by record", () => {
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 1, maxLength: 8 }), u64, (records, start) => {
        const out = new ByteWriter(64)
        const positions: Array<number> = []
        let position = Math.min(start, MAX_SAFE - 10_000_000)
        for (const r of records) {
          positions.push(position)
          position += encodeRecord(out, r, position)
        }
        const buf = out.toBuffer()
        let offset = 0
        records.forEach((r, i) => {
          const decoded = decodeRecord(buf, offset, buf.length, positions[i])
          assert.ok(decoded.ok, `record ${i}: ${JSON.stringify(decoded)}`)
          assert.deepStrictEqual(decoded.record, withPosition(r, positions[i]!))
          offset += decoded.length
        })
        assert.strictEqual(offset, buf.length)
      }),
      { numRuns: 1000 }
    )
  })

  it("a flipped bit, a cut-off frame or a wrong position is reported, never decoded", () => {
    fc.assert(
      fc.property(recordArb, u64, fc.nat(), fc.nat(7), fc.nat(), (record, position, at, bit, cut) => {
        const out = new ByteWriter(64)
        const length = encodeRecord(out, record, position)
        const good = out.toBuffer()

        const flipped = Buffer.from(good)
        flipped[at % length]! ^= 1 << bit
        const d1 = decodeRecord(flipped, 0, flipped.length)
        assert.ok(!d1.ok, `a flipped bit at byte ${at % length} went unnoticed`)

        const short = cut % length
        const d2 = decodeRecord(good, 0, short)
        assert.ok(!d2.ok, `a frame cut to ${short} of ${length} bytes decoded`)

        const d3 = decodeRecord(good, 0, good.length, position + 1)
        assert.ok(!d3.ok && d3.problem === "position", "a record read at the wrong position was returned")
      }),
      { numRuns: 3000 }
    )
  })
})
