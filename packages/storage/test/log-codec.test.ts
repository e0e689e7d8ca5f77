/**
 * Codec round trips and damage detection for the bytes of the transaction log: record framing
 * (records.ts), chunk header / footer / position map / file names (chunkFormat.ts) and the two-slot
 * writer checkpoint (Checkpoint.ts).
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { Effect } from "effect"
import { MemoryDisk, Prng } from "@vellum/platform"
import { ByteWriter, normalizeUuid } from "../src/codec/bytes.js"
import { checksum } from "../src/codec/checksum.js"
import {
  FOOTER_SIZE,
  HEADER_SIZE,
  chunkFileName,
  completedFileSize,
  decodeFooter,
  decodeHeader,
  decodePosMap,
  encodeFooterPrefix,
  encodeHeader,
  encodePosMap,
  isTempFileName,
  parseChunkFileName,
  posMapLowerBound,
  sealFooter
} from "../src/log/chunkFormat.js"
import { openCheckpoint } from "../src/log/Checkpoint.js"
import {
  EventFlags,
  FRAME_OVERHEAD,
  MAX_RECORD_BODY,
  RecordKind,
  bodyLength,
  decodeRecord,
  encodeRecord,
  framedLength,
  peekStream,
  type LogRecord,
  type NewRecord
} from "../src/log/records.js"
import { runOn } from "./log-support.js"

const NUM_RUNS = 300

// ---- arbitraries ----

const uuid = fc.uuid().map(normalizeUuid)
/** Any safe non-negative integer, biased towards the edges (0, 2^32 ± 1, MAX_SAFE_INTEGER). */
const u53 = fc.oneof(
  fc.constantFrom(0, 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 52, Number.MAX_SAFE_INTEGER),
  fc.maxSafeNat(),
  fc.nat()
)
const i53 = fc.oneof(
  fc.constantFrom(-1, 0, -(2 ** 32), Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
  fc.maxSafeInteger()
)
/** Well-formed strings: ASCII, any Unicode scalar (incl. astral planes), graphemes, NULs. */
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "grapheme-composite", maxLength: 10 }),
  fc.string({ unit: fc.constantFrom("\u0000", "é", "中", "😀", "\uffff", "\u{10ffff}"), maxLength: 20 }),
  fc.constant("")
)
const bytes = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), weight: 10 },
  { arbitrary: fc.constant(Buffer.alloc(0)), weight: 3 },
  { arbitrary: fc.integer({ min: 60_000, max: 200_000 }).map((n) => Buffer.alloc(n, n & 0xff)), weight: 1 }
)

const eventRecord = fc.record({
  kind: fc.constant(RecordKind.Event),
  flags: fc.integer({ min: 0, max: 0xffff }),
  eventNumber: u53,
  createdMicros: u53,
  eventId: uuid,
  stream: text,
  eventType: text,
  data: bytes,
  metadata: bytes
})
const commitRecord = fc.record({
  kind: fc.constant(RecordKind.Commit),
  transactionPosition: u53,
  firstEventNumber: u53,
  correlationId: uuid,
  timeMicros: u53
})
const epochRecord = fc.record({
  kind: fc.constant(RecordKind.Epoch),
  epochNumber: u53,
  prevEpochPosition: i53,
  epochId: uuid,
  leaderInstanceId: uuid,
  timeMicros: u53
})
const scavengePointRecord = fc.record({
  kind: fc.constant(RecordKind.ScavengePoint),
  number: u53,
  eventId: uuid,
  effectiveNowMicros: u53,
  threshold: i53,
  timeMicros: u53
})
const anyRecord: fc.Arbitrary<NewRecord> = fc.oneof(eventRecord, commitRecord, epochRecord, scavengePointRecord)
/** Log positions, including ones past 2^32 (chunk 16 of a 256 MiB log) and the largest safe integer. */
const position = u53

/** Field-by-field equality; payloads compared with Buffer.equals (deep equality on big Buffers is slow). */
const expectRecord = (actual: LogRecord, expected: NewRecord, at: number) => {
  const strip = (r: NewRecord | LogRecord) =>
    r.kind === RecordKind.Event ? { ...r, data: r.data.length, metadata: r.metadata.length } : r
  expect(strip(actual)).toEqual(strip({ ...expected, logPosition: at } as LogRecord))
  if (actual.kind === RecordKind.Event && expected.kind === RecordKind.Event) {
    expect(actual.data.equals(expected.data)).toBe(true)
    expect(actual.metadata.equals(expected.metadata)).toBe(true)
  }
}

const encode = (record: NewRecord, at: number): Buffer => {
  const out = new ByteWriter(16)
  const n = encodeRecord(out, record, at)
  expect(n).toBe(out.length)
  return out.toBuffer()
}

// ---- the writer's cursor methods (the scavenge state's codecs) ----

describe("ByteWriter", () => {
  it("appends little-endian fields, grows from any capacity, and takes back a tail", () => {
    const w = new ByteWriter(1)
    w.u8(7)
    w.u32(0xdeadbeef)
    w.f64(-2.5)
    w.optF64(undefined)
    w.optF64(2 ** 53)
    w.str("é$")
    w.raw(Uint8Array.of(1, 2))
    const b = w.bytes()
    expect(b.length).toBe(w.length)
    expect([b[0], b.readUInt32LE(1), b.readDoubleLE(5), b[13], b[14], b.readDoubleLE(15)]).toEqual([
      7,
      0xdeadbeef,
      -2.5,
      0,
      1,
      2 ** 53
    ])
    expect([b.readUInt32LE(23), b.toString("utf8", 27, 30), b[30], b[31]]).toEqual([3, "é$", 1, 2])
    w.truncate(5)
    w.u8(9)
    expect([...w.bytes()]).toEqual([7, 0xef, 0xbe, 0xad, 0xde, 9])
  })
})

// ---- records ----

describe("record codec", () => {
  it("every record kind round-trips, framed as len | checksum | body | len", () => {
    fc.assert(
      fc.property(anyRecord, position, (record, at) => {
        const buf = encode(record, at)
        expect(buf.length).toBe(framedLength(record))
        expect(buf.length).toBe(bodyLength(record) + FRAME_OVERHEAD)
        const body = buf.readUInt32LE(0)
        expect(buf.readUInt32LE(buf.length - 4)).toBe(body)
        expect(buf.readUInt32LE(4)).toBe(checksum(buf, 8, 8 + body))
        const decoded = decodeRecord(buf, 0, buf.length, at)
        expect(decoded.ok).toBe(true)
        if (!decoded.ok) return
        expect(decoded.length).toBe(buf.length)
        expectRecord(decoded.record, record, at)
        if (record.kind === RecordKind.Event) expect(peekStream(buf, 0)).toBe(record.stream)
        else expect(peekStream(buf, 0)).toBeUndefined()
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it("records decode from the middle of a larger buffer (a batch), each at its own offset", () => {
    fc.assert(
      fc.property(fc.array(anyRecord, { minLength: 1, maxLength: 8 }), position, (records, start) => {
        const out = new ByteWriter(64)
        const at: Array<number> = []
        let pos = start
        for (const r of records) {
          at.push(out.length)
          pos += encodeRecord(out, r, pos)
        }
        const buf = out.toBuffer()
        let p = start
        records.forEach((r, i) => {
          const d = decodeRecord(buf, at[i]!, buf.length, p)
          expect(d.ok).toBe(true)
          if (d.ok) expectRecord(d.record, r, p)
          p += framedLength(r)
        })
      }),
      { numRuns: 100 }
    )
  })

  it("strings with lone surrogates (not valid UTF-16) are stored with U+FFFD in their place, lengths consistent", () => {
    // UTF-8 cannot carry a lone surrogate, so such a name does not survive a write unchanged: whoever accepts
    // names (stream and event-type validation) must reject strings that are not well-formed.
    const wellFormed = (x: string) =>
      x.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 20 }), (name) => {
        const record: NewRecord = {
          kind: RecordKind.Event,
          flags: 0,
          eventNumber: 1,
          createdMicros: 1,
          eventId: "00000000-0000-4000-8000-000000000001",
          stream: name,
          eventType: name,
          data: Buffer.alloc(3),
          metadata: Buffer.alloc(0)
        }
        const buf = encode(record, 64)
        expect(buf.length).toBe(framedLength(record))
        const d = decodeRecord(buf, 0, buf.length, 64)
        expect(d.ok && d.record.kind === RecordKind.Event && [d.record.stream, d.record.eventType]).toEqual([
          wellFormed(name),
          wellFormed(name)
        ])
      }),
      { numRuns: NUM_RUNS }
    )
  })

  it("edge values survive: empty strings and payloads, positions > 2^32, event number MAX_SAFE_INTEGER", () => {
    const record: NewRecord = {
      kind: RecordKind.Event,
      flags: 0xffff,
      eventNumber: Number.MAX_SAFE_INTEGER,
      createdMicros: Number.MAX_SAFE_INTEGER,
      eventId: "ffffffff-ffff-ffff-ffff-ffffffffffff",
      stream: "",
      eventType: "",
      data: Buffer.alloc(0),
      metadata: Buffer.alloc(0)
    }
    for (const at of [0, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 12345, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      const d = decodeRecord(encode(record, at), 0, framedLength(record), at)
      expect(d.ok && d.record).toEqual({ ...record, logPosition: at })
    }
    const epoch: NewRecord = {
      kind: RecordKind.Epoch,
      epochNumber: 0,
      prevEpochPosition: -1,
      epochId: "00000000-0000-0000-0000-000000000000",
      leaderInstanceId: "01234567-89ab-cdef-0123-456789abcdef",
      timeMicros: 0
    }
    const d = decodeRecord(encode(epoch, 5), 0, framedLength(epoch), 5)
    expect(d.ok && d.record).toEqual({ ...epoch, logPosition: 5 })
  })

  it("a large payload (1 MiB of data and metadata) round-trips", () => {
    const prng = new Prng(7)
    const data = Buffer.alloc(1 << 20)
    for (let i = 0; i < data.length; i += 97) data[i] = prng.int(0, 255)
    const record: NewRecord = {
      kind: RecordKind.Event,
      flags: EventFlags.Json,
      eventNumber: 1,
      createdMicros: 2,
      eventId: "00000000-0000-4000-8000-000000000001",
      stream: "big",
      eventType: "Big",
      data,
      metadata: data.subarray(0, 1000)
    }
    const d = decodeRecord(encode(record, 2 ** 33), 0, framedLength(record), 2 ** 33)
    expect(d.ok).toBe(true)
    if (d.ok && d.record.kind === RecordKind.Event) {
      expect(d.record.data.equals(data)).toBe(true)
      expect(d.record.metadata.equals(data.subarray(0, 1000))).toBe(true)
    }
  })

  it("a record body over the 16 MiB limit is refused by the encoder", () => {
    const record: NewRecord = {
      kind: RecordKind.Event,
      flags: 0,
      eventNumber: 0,
      createdMicros: 0,
      eventId: "00000000-0000-4000-8000-000000000001",
      stream: "s",
      eventType: "T",
      data: Buffer.alloc(MAX_RECORD_BODY),
      metadata: Buffer.alloc(0)
    }
    expect(() => encode(record, 0)).toThrow(RangeError)
  })

  it("any single flipped bit in a framed record is detected", () => {
    fc.assert(
      fc.property(anyRecord, position, fc.nat(), (record, at, which) => {
        const buf = encode(record, at)
        const bit = which % (buf.length * 8)
        buf[bit >> 3]! ^= 1 << (bit & 7)
        // Whether or not the reader knows where the record should be, and with slack bytes after it.
        expect(decodeRecord(buf, 0, buf.length, at).ok).toBe(false)
        expect(decodeRecord(buf, 0, buf.length).ok).toBe(false)
        const padded = Buffer.concat([buf, Buffer.alloc(64)])
        expect(decodeRecord(padded, 0, padded.length).ok).toBe(false)
      }),
      { numRuns: 1000 }
    )
  })

  it("every single-bit flip of one small record is detected (exhaustive)", () => {
    const record: NewRecord = {
      kind: RecordKind.Event,
      flags: EventFlags.BatchBegin,
      eventNumber: 3,
      createdMicros: 4,
      eventId: "00000000-0000-4000-8000-000000000009",
      stream: "order-1",
      eventType: "Placed",
      data: Buffer.from('{"a":1}'),
      metadata: Buffer.alloc(0)
    }
    const clean = encode(record, 4096)
    for (let bit = 0; bit < clean.length * 8; bit++) {
      const buf = Buffer.from(clean)
      buf[bit >> 3]! ^= 1 << (bit & 7)
      expect(decodeRecord(buf, 0, buf.length, 4096).ok, `bit ${bit}`).toBe(false)
    }
  })

  it("truncated records, a wrong expected position and unknown kinds are reported, never thrown", () => {
    const record: NewRecord = {
      kind: RecordKind.Commit,
      transactionPosition: 1,
      firstEventNumber: 2,
      correlationId: "00000000-0000-4000-8000-000000000001",
      timeMicros: 3
    }
    const buf = encode(record, 100)
    for (let n = 0; n < buf.length; n++) {
      const d = decodeRecord(buf, 0, n, 100)
      expect(d.ok).toBe(false)
      if (!d.ok) expect(["truncated", "length", "suffix"]).toContain(d.problem)
    }
    const wrong = decodeRecord(buf, 0, buf.length, 101)
    expect(wrong.ok === false && wrong.problem).toBe("position")
    // A well-framed body with an unknown kind.
    const odd = Buffer.from(buf)
    odd[8] = 99
    odd.writeUInt32LE(checksum(odd, 8, buf.length - 4), 4)
    const k = decodeRecord(odd, 0, odd.length)
    expect(k.ok === false && k.problem).toBe("kind")
    // Zeroed bytes (a preallocated, never written tail) are not a record.
    expect(decodeRecord(Buffer.alloc(64), 0, 64).ok).toBe(false)
  })

  it("a well-checksummed body too short for its kind is reported, not read past its end", () => {
    for (const kind of [RecordKind.Event, RecordKind.Commit, RecordKind.Epoch, RecordKind.ScavengePoint]) {
      const body = Buffer.alloc(10)
      body[0] = kind
      body[1] = 1
      const buf = Buffer.alloc(body.length + FRAME_OVERHEAD + 64, 0x41) // bytes past the record are not zero
      buf.writeUInt32LE(body.length, 0)
      body.copy(buf, 8)
      buf.writeUInt32LE(checksum(body), 4)
      buf.writeUInt32LE(body.length, 8 + body.length)
      const d = decodeRecord(buf, 0, buf.length, 0)
      expect(d.ok, `kind ${kind}`).toBe(false)
    }
  })
})

// ---- chunk format ----

describe("chunk format", () => {
  it("headers round-trip and any damaged header byte is detected", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 32 - 1 }),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.nat(1000),
        fc.boolean(),
        uuid,
        fc.nat(HEADER_SIZE * 8 - 1),
        (chunkSize, startNumber, extra, isScavenged, chunkId, bit) => {
          const header = {
            chunkSize,
            startNumber,
            endNumber: Math.min(2 ** 32 - 1, startNumber + extra),
            isScavenged,
            chunkId
          }
          const buf = encodeHeader(header)
          expect(buf.length).toBe(HEADER_SIZE)
          expect(decodeHeader(buf)).toEqual(header)
          buf[bit >> 3]! ^= 1 << (bit & 7)
          expect(typeof decodeHeader(buf)).toBe("string")
          expect(typeof decodeHeader(buf.subarray(0, HEADER_SIZE - 1))).toBe("string")
        }
      ),
      { numRuns: NUM_RUNS }
    )
  })

  it("footers round-trip (sizes past 2^32) and any damaged footer byte is detected", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        u53,
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.nat(FOOTER_SIZE * 8 - 1),
        (physicalDataSize, logicalDataSize, posMapCount, fileChecksum, bit) => {
          const base = { physicalDataSize, logicalDataSize, posMapCount }
          const buf = sealFooter(encodeFooterPrefix(base), fileChecksum)
          expect(buf.length).toBe(FOOTER_SIZE)
          expect(decodeFooter(buf)).toEqual({ ...base, fileChecksum })
          expect(completedFileSize(base)).toBe(HEADER_SIZE + physicalDataSize + posMapCount * 12 + FOOTER_SIZE)
          buf[bit >> 3]! ^= 1 << (bit & 7)
          expect(typeof decodeFooter(buf)).toBe("string")
        }
      ),
      { numRuns: NUM_RUNS }
    )
    expect(typeof decodeFooter(Buffer.alloc(FOOTER_SIZE))).toBe("string")
  })

  it("position maps round-trip (logical positions past 2^32) and lower-bound finds entries", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 40 }), { maxLength: 50 }),
        fc.integer({ min: 0, max: 2 ** 40 + 1 }),
        (positions, probe) => {
          const logical = Float64Array.from([...positions].sort((a, b) => a - b))
          const physical = Uint32Array.from(logical, (_, i) => i * 40)
          const map = { logical, physical }
          const back = decodePosMap(encodePosMap(map), logical.length)
          expect([...back.logical]).toEqual([...logical])
          expect([...back.physical]).toEqual([...physical])
          const i = posMapLowerBound(back, probe)
          expect(i).toBe([...logical].filter((p) => p < probe).length)
        }
      ),
      { numRuns: NUM_RUNS }
    )
  })

  it("chunk file names round-trip, and nothing else parses as a chunk", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 999_999 }), (start, version) => {
        const name = chunkFileName(start, version)
        expect(parseChunkFileName(name)).toEqual({ startNumber: start, version })
        expect(isTempFileName(name)).toBe(false)
        expect(parseChunkFileName(`${name}.tmp`)).toBeUndefined()
        expect(isTempFileName(`${name}.tmp`)).toBe(true)
      }),
      { numRuns: NUM_RUNS }
    )
    expect(chunkFileName(3, 1)).toBe("chunk-000003.000001")
    for (const bad of [
      "chunk-1.000000",
      "chunk-000001",
      "chunk-000001.00000",
      "writer.chk",
      "chunk-00000a.000000",
      "xchunk-000001.000000"
    ]) {
      expect(parseChunkFileName(bad), bad).toBeUndefined()
    }
  })
})

// ---- checkpoint ----

describe("two-slot checkpoint", () => {
  const PATH = "/cp/writer.chk"

  it("reads back the last value written, across reopens", () => {
    const mem = new MemoryDisk()
    runOn(mem.service, mem.service.mkdir("/cp"))
    const values = [0, 1, 2 ** 32, 2 ** 32 + 7, Number.MAX_SAFE_INTEGER, 12]
    for (const v of values) {
      runOn(
        mem.service,
        Effect.gen(function* () {
          const cp = yield* openCheckpoint(PATH, -1)
          yield* cp.write(v)
          expect(cp.value()).toBe(v)
          yield* cp.close
          const again = yield* openCheckpoint(PATH, -1)
          expect(again.value()).toBe(v)
          yield* again.close
        })
      )
    }
    const fresh = runOn(mem.service, openCheckpoint("/cp/other.chk", -1))
    expect(fresh.value()).toBe(-1)
  })

  it("a torn or garbage slot write leaves the previous value readable", () => {
    fc.assert(
      fc.property(
        fc.array(u53, { minLength: 1, maxLength: 6 }),
        fc.uint8Array({ minLength: 1, maxLength: 16 }),
        fc.nat(15),
        fc.boolean(),
        (values, garbage, tearAt, strict) => {
          const mem = new MemoryDisk({ prng: new Prng(values.length + garbage.length) })
          const svc = mem.service
          runOn(svc, svc.mkdir("/cp"))
          runOn(svc, svc.syncDir("/"))
          const cp = runOn(svc, openCheckpoint(PATH, -1))
          for (const v of values) runOn(svc, cp.write(v))
          runOn(svc, svc.syncDir("/cp"))
          const last = values[values.length - 1]!
          // Write k (from 1) went to slot k mod 2, so the next one goes to the slot not holding `last`.
          const target = (values.length + 1) % 2
          const held = mem.readFileSync(PATH).subarray((1 - target) * 16, (1 - target) * 16 + 8)
          expect(held.readUInt32LE(0) + held.readUInt32LE(4) * 2 ** 32).toBe(last)
          // Garbage over part of the other slot, unsynced (a torn write), then power loss.
          const h = runOn(svc, svc.open(PATH))
          runOn(
            svc,
            h.write(target * 16 + Math.min(tearAt, 16 - 1), Buffer.from(garbage).subarray(0, 16 - Math.min(tearAt, 15)))
          )
          mem.crash(new Prng(tearAt), strict ? "strict" : "random")
          const reopened = runOn(svc, openCheckpoint(PATH, -1))
          expect(reopened.value()).toBe(last)
        }
      ),
      { numRuns: NUM_RUNS }
    )
  })

  it("a write interrupted by a crash yields either the old or the new value, never anything else", () => {
    for (let seed = 0; seed < 200; seed++) {
      const prng = new Prng(seed)
      const mem = new MemoryDisk({ prng: prng.fork("disk") })
      const svc = mem.service
      runOn(svc, svc.mkdir("/cp"))
      const cp = runOn(svc, openCheckpoint(PATH, 0))
      const n = prng.int(0, 5)
      let last = 0
      for (let i = 0; i < n; i++) runOn(svc, cp.write((last = prng.int(0, 2 ** 50))))
      runOn(svc, svc.syncDir("/cp"))
      // The next write reaches the file but not its sync.
      const next = prng.int(0, 2 ** 50)
      mem.setFaults({ syncError: 1 })
      expect(Effect.runSyncExit(cp.write(next))._tag).toBe("Failure")
      mem.setFaults(undefined)
      mem.crash(prng.fork("crash"), "random")
      const value = runOn(svc, openCheckpoint(PATH, 0)).value()
      expect([last, next]).toContain(value)
    }
  })

  it("both slots damaged falls back to the initial value", () => {
    const mem = new MemoryDisk()
    const svc = mem.service
    runOn(svc, svc.mkdir("/cp"))
    const cp = runOn(svc, openCheckpoint(PATH, 5))
    runOn(svc, cp.write(9))
    runOn(svc, cp.write(10))
    const h = runOn(svc, svc.open(PATH))
    runOn(svc, h.write(0, Buffer.alloc(32, 0xff)))
    expect(runOn(svc, openCheckpoint(PATH, 5)).value()).toBe(5)
  })

  it("sequence numbers that wrap past 2^32 still pick the newer slot", () => {
    const mem = new MemoryDisk()
    const svc = mem.service
    runOn(svc, svc.mkdir("/cp"))
    // Hand-craft slots: seq 0xffffffff holds 1 (older), seq 0 (wrapped) holds 2 (newer).
    const slot = (value: number, seq: number) => {
      const b = Buffer.alloc(16)
      b.writeUInt32LE(value, 0)
      b.writeUInt32LE(seq, 8)
      b.writeUInt32LE(checksum(b, 0, 12), 12)
      return b
    }
    const h = runOn(svc, svc.open(PATH, { create: true }))
    runOn(svc, h.write(0, Buffer.concat([slot(2, 0), slot(1, 0xffffffff)])))
    const cp = runOn(svc, openCheckpoint(PATH, -1))
    expect(cp.value()).toBe(2)
    // And the next write goes to the older slot, so it is read back.
    runOn(svc, cp.write(3))
    expect(runOn(svc, openCheckpoint(PATH, -1)).value()).toBe(3)
  })
})
