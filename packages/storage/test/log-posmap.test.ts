/**
 * Resident position maps of scavenged chunks (log/PositionMap.ts): lookups at every position of maps of 0,
 * 1, K-1, K, K+1 and several K entries agree with a full-map reference (exact hits, removed positions,
 * at-or-after with the entries on either side, group edges, past the end), and so do random maps (fast-check)
 * and maps with gaps of several MiB and past 2^32 and records of the largest size; a typical map costs under
 * 6 bytes an entry; a map read at open equals one built from the bytes written and believes only agreeing
 * reads; a damaged map fails lookups with StorageCorrupt. Then whole logs: every read path over a scavenged
 * chunk of those sizes, before and after a reopen (damage: log-posmap-damage.test.ts).
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { Effect, Exit } from "effect"
import { MemoryDisk, transformReads, type FileHandle } from "@vellum/platform"
import { writeU64 } from "../src/codec/bytes.js"
import { StorageCorrupt } from "../src/errors.js"
import { HEADER_SIZE, POSMAP_ENTRY_SIZE, encodePosMap } from "../src/log/chunkFormat.js"
import {
  POSMAP_GROUP_ENTRIES as K,
  mappedBoundary,
  mappedOffset,
  readResidentPosMap,
  residentBytes,
  residentEntries,
  residentPosMapOf,
  type MapBounds,
  type MappedFile,
  type ResidentPosMap
} from "../src/log/PositionMap.js"
import { FRAME_OVERHEAD, MAX_RECORD_BODY, type LogRecord } from "../src/log/records.js"
import type { TransactionLog } from "../src/log/TransactionLog.js"
import { checkContent } from "./log-rewrite-support.js"
import { openLog } from "./log-support.js"
import { probes, sized, visiblePositions } from "./log-posmap-support.js"

// ---------------------------------------------------------------------------------------------------------
// Synthetic maps: records of given lengths copied back to back, with removed bytes after some.

interface Synthetic {
  readonly logical: Float64Array
  readonly physical: Uint32Array
  readonly bytes: Buffer
  readonly bounds: MapBounds
}

const START = 3 * 65536

/** A map of records of `lengths[i]` bytes, each followed by `gaps[i]` bytes of removed records. */
const mapOf = (lengths: ReadonlyArray<number>, gaps: ReadonlyArray<number>, start = START): Synthetic => {
  const count = lengths.length
  const logical = new Float64Array(count)
  const physical = new Uint32Array(count)
  let at = start + 17
  let off = 0
  for (let i = 0; i < count; i++) {
    logical[i] = at
    physical[i] = off
    off += lengths[i]!
    at += lengths[i]! + gaps[i]!
  }
  const bytes = encodePosMap({ logical, physical })
  return { logical, physical, bytes, bounds: { startPosition: start, logicalEnd: at + 9, dataSize: off } }
}

/** Every fifth record has removed records after it; the others are followed by the next kept one. */
const synthetic = (count: number): Synthetic => {
  const lengths = Array.from({ length: count }, (_, i) => 8 + ((i * 5) % 11))
  return mapOf(
    lengths,
    lengths.map((_, i) => (i % 5 === 0 ? 3 * ((i % 7) + 1) : 0))
  )
}

/** A MemoryDisk file laid out as a scavenged chunk: header, (zero) data, then the map. */
const fileOf = (mem: MemoryDisk, s: Synthetic, path = "/chunk"): MappedFile & { readonly handle: FileHandle } => {
  const handle = Effect.runSync(mem.service.open(path, { create: true }))
  const mapStart = HEADER_SIZE + s.bounds.dataSize
  Effect.runSync(handle.write(0, Buffer.alloc(mapStart)))
  if (s.bytes.length > 0) Effect.runSync(handle.write(mapStart, s.bytes))
  return { path, handle, dataSize: s.bounds.dataSize }
}

const lowerBound = (values: Float64Array, position: number): number => {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (values[mid]! < position) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Checks both lookups at `position` against the full arrays. */
const agreesAt = (s: Synthetic, map: ResidentPosMap, position: number): void => {
  const file: MappedFile = { path: "/chunk", dataSize: s.bounds.dataSize }
  const count = s.logical.length
  const j = lowerBound(s.logical, position)
  const exact = j < count && s.logical[j] === position ? s.physical[j] : undefined
  expect(mappedOffset(file, map, position), `exact ${position}`).toBe(exact)
  expect(mappedBoundary(file, map, position), `boundary ${position}`).toEqual({
    offset: j < count ? s.physical[j] : s.bounds.dataSize,
    at: j < count ? s.logical[j] : undefined,
    before: j > 0 ? s.logical[j - 1] : undefined
  })
}

/** Every entry, its neighbours, and the chunk's edges. */
const probesOf = (s: Synthetic): Array<number> => {
  const out = [s.bounds.startPosition, s.bounds.startPosition + 1, s.bounds.logicalEnd - 1, s.bounds.logicalEnd]
  for (const p of s.logical) out.push(p - 1, p, p + 1)
  return out
}

const COUNTS = [0, 1, K - 1, K, K + 1, 3 * K, 3 * K + 5]

describe("resident position map: lookups", () => {
  for (const count of COUNTS) {
    it(`a map of ${count} entries read at open answers like the full map at every position`, () => {
      const s = synthetic(count)
      const map = Effect.runSync(readResidentPosMap(fileOf(new MemoryDisk(), s).handle, count, s.bounds))
      expect(map.problem).toBeUndefined()
      for (let p = START - 2; p <= s.bounds.logicalEnd + 2; p++) agreesAt(s, map, p)
    })
  }

  it("gaps of several MiB and past 2^32, and records of the largest size, round-trip", () => {
    const largest = MAX_RECORD_BODY + FRAME_OVERHEAD
    const lengths = Array.from({ length: 3 * K + 7 }, (_, i) => [largest, 9, largest - 1, 300, 128, 127][i % 6]!)
    const gaps = lengths.map((_, i) => [7 * 1024 * 1024 + 3, 0, 2 ** 33 + 5, 1, 2 ** 45 - 1, 127][i % 6]!)
    const s = mapOf(lengths, gaps, 2 ** 40)
    const map = residentPosMapOf(s.bytes, lengths.length, s.bounds)
    expect(map.problem).toBeUndefined()
    for (const p of probesOf(s)) agreesAt(s, map, p)
  })

  it("random maps answer like the full map (fast-check)", () => {
    const entry = fc.record({
      length: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: MAX_RECORD_BODY + FRAME_OVERHEAD })),
      gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 2 ** 40 }))
    })
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 4 * K + 3 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 }),
        (entries, fractions) => {
          const s = mapOf(
            entries.map((e) => e.length),
            entries.map((e) => e.gap)
          )
          const map = residentPosMapOf(s.bytes, entries.length, s.bounds)
          expect(map.problem).toBeUndefined()
          for (const p of probesOf(s)) agreesAt(s, map, p)
          const span = s.bounds.logicalEnd - START
          for (const f of fractions) agreesAt(s, map, START + Math.floor(f * span))
        }
      ),
      { numRuns: 150, seed: 815 }
    )
  })
})

describe("resident position map: memory and open", () => {
  it("holds every entry: 16 bytes a group plus its deltas, in arrays of its own (not views of the bytes read)", () => {
    for (const count of [...COUNTS, 10 * K + 1]) {
      const s = synthetic(count)
      const map = Effect.runSync(readResidentPosMap(fileOf(new MemoryDisk(), s).handle, count, s.bounds))
      expect(residentEntries(map)).toBe(count)
      // These records' steps and gaps are all below 128: one byte each.
      expect(residentBytes(map)).toBe(Math.ceil(count / K) * 16 + Math.max(0, count - Math.ceil(count / K)) * 2)
      expect(map).toEqual(residentPosMapOf(s.bytes, count, s.bounds))
    }
  })

  it("a typical map costs 3-4 bytes an entry (under 6)", () => {
    // Records of 80-1,100 bytes; about a third followed by removed records of up to 20 KiB.
    let seed = 7
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return Math.floor((seed / 2147483648) * n)
    }
    const lengths = Array.from({ length: 20000 }, () => 80 + next(1020))
    const s = mapOf(
      lengths,
      lengths.map(() => (next(3) === 0 ? 80 + next(20000) : 0))
    )
    const map = residentPosMapOf(s.bytes, lengths.length, s.bounds)
    const perEntry = residentBytes(map) / lengths.length
    expect(perEntry).toBeLessThan(6)
    expect(perEntry).toBeGreaterThan(2)
    for (let i = 0; i < lengths.length; i += 97) agreesAt(s, map, s.logical[i]! + (i % 2))
  })

  it("a map read at open believes only reads that agree: a flipped bit in one read changes nothing", () => {
    const s = synthetic(3 * K + 5)
    const file = fileOf(new MemoryDisk(), s)
    const clean = residentPosMapOf(s.bytes, s.logical.length, s.bounds)
    for (let byte = 0; byte < s.bytes.length; byte += 7) {
      let reads = 0
      const handle = transformReads(file.handle, (_, bytes) => {
        if (reads++ !== 0) return bytes
        const copy = Buffer.from(bytes)
        copy[byte] ^= 1 << (byte % 8)
        return copy
      })
      expect(Effect.runSync(readResidentPosMap(handle, s.logical.length, s.bounds))).toEqual(clean)
    }
  })

  it("reads that never agree fail the open of the map with a DiskError", () => {
    const s = synthetic(K + 1)
    const file = fileOf(new MemoryDisk(), s)
    let reads = 0
    const handle = transformReads(file.handle, (_, bytes) => {
      const copy = Buffer.from(bytes)
      copy[reads++ % bytes.length] ^= 1
      return copy
    })
    const exit = Effect.runSyncExit(readResidentPosMap(handle, s.logical.length, s.bounds))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : "no failure").toBe("DiskError")
  })

  const damagedShapes: Array<[string, (s: Synthetic) => void]> = [
    ["a first offset that is not 0", (s) => s.bytes.writeUInt32LE(5, 0)],
    ["offsets that go back", (s) => s.bytes.writeUInt32LE(s.physical[K + 3]! - 200, (K + 4) * POSMAP_ENTRY_SIZE)],
    [
      "positions that overlap the record before",
      (s) => writeU64(s.bytes, (K + 7) * POSMAP_ENTRY_SIZE + 4, s.logical[K + 6]! + 1)
    ],
    ["a first position before the chunk", (s) => writeU64(s.bytes, 4, START - 1)],
    [
      "a last offset past the data",
      (s) => s.bytes.writeUInt32LE(s.bounds.dataSize + 1, (s.logical.length - 1) * POSMAP_ENTRY_SIZE)
    ],
    [
      "a last record past the chunk's positions",
      (s) => writeU64(s.bytes, (s.logical.length - 1) * POSMAP_ENTRY_SIZE + 4, s.bounds.logicalEnd)
    ]
  ]
  for (const [name, damage] of damagedShapes) {
    it(`a map with ${name} is damaged: every lookup fails with StorageCorrupt`, () => {
      const s = synthetic(2 * K + 3)
      damage(s)
      const file = fileOf(new MemoryDisk(), s)
      const map = Effect.runSync(readResidentPosMap(file.handle, s.logical.length, s.bounds))
      expect(map.problem).toContain("position map is damaged")
      expect(residentEntries(map)).toBe(0)
      for (const p of [s.logical[0]!, s.logical[K + 5]!, START]) {
        expect(mappedOffset(file, map, p)).toBeInstanceOf(StorageCorrupt)
        expect(mappedBoundary(file, map, p)).toBeInstanceOf(StorageCorrupt)
      }
    })
  }
})

// ---------------------------------------------------------------------------------------------------------
// Whole logs (log-posmap-support.ts).

const firstFrom = (log: TransactionLog, p: number): LogRecord | undefined =>
  Effect.runSync(log.scanForward(p, log.writerPosition(), 1)).records[0]

const lastBefore = (log: TransactionLog, p: number): LogRecord | undefined =>
  Effect.runSync(log.scanBackward(p, log.writerPosition(), 1)).records[0]

describe("scavenged chunks in a log", () => {
  for (const count of [0, 1, K - 1, K, K + 1, 3 * K + 5, 655]) {
    it(`a chunk scavenged to ${count} records reads right on every path, before and after a reopen`, () => {
      const { mem, config, log, model, kept } = sized(count)
      const chunk = log.chunks()[1]!
      expect(chunk.posMap?.count).toBe(count)
      expect(residentEntries(chunk.posMap!)).toBe(count)
      const visible = visiblePositions(model)
      for (const reader of [log, openLog(mem.service, config)]) {
        expect(residentEntries(reader.chunks()[1]!.posMap!)).toBe(count)
        checkContent(reader, model)
        for (const p of probes(kept)) {
          expect(firstFrom(reader, p)?.logPosition, `first record from ${p}`).toBe(visible.find((v) => v >= p))
          expect(lastBefore(reader, p)?.logPosition, `last record before ${p}`).toBe(visible.filter((v) => v < p).pop())
        }
      }
    })
  }
})
