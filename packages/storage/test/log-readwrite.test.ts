/**
 * The transaction log's writer and readers without crashes: prepare + write of random units across many
 * small chunks, then readRecord / scanForward / scanBackward / limits / completed-chunk footers, with and
 * without preallocation, with a tiny and a roomy block cache, before and after a clean reopen.
 */
import { describe, expect, it } from "vitest"
import { Effect, Exit } from "effect"
import { MemoryDisk, Prng } from "@vellum/platform"
import { checksum } from "../src/codec/checksum.js"
import { BLOCK_SIZE } from "../src/log/BlockCache.js"
import { verifyChunkFile } from "../src/log/ChunkFile.js"
import { FOOTER_SIZE, HEADER_SIZE, completedFileSize, decodeFooter } from "../src/log/chunkFormat.js"
import { RecordKind, framedLength, type LogRecord, type NewRecord } from "../src/log/records.js"
import type { LogConfig, TransactionLog, WriteUnit } from "../src/log/TransactionLog.js"
import {
  SEEDS_SCALE,
  bytesOf,
  eventOfSize,
  filesIn,
  logConfig,
  openLog,
  randomRecord,
  sameRecord,
  scanAll,
  writeUnits
} from "./log-support.js"

const SEEDS = 15 * SEEDS_SCALE

/** Lets the test worker answer its runner between seeds (long synchronous loops starve its RPC). */
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve))

/** A plain assertion for hot loops (vitest's expect costs more than the log operations it checks). */
const check = (ok: boolean, message: () => string) => {
  if (!ok) throw new Error(message())
}

interface Written {
  readonly record: NewRecord
  readonly position: number
}

/** Bytes left in the active chunk (the last chunk of the log). */
const roomLeft = (log: TransactionLog): number => {
  const chunks = log.chunks()
  const active = chunks[chunks.length - 1]!
  return active.footer !== undefined ? log.config.chunkSize : log.config.chunkSize - active.dataSize
}

/** Records that together take exactly `bytes` (≥ 74) on disk. */
const recordsFilling = (prng: Prng, bytes: number): Array<NewRecord> => {
  const out: Array<NewRecord> = []
  let left = bytes
  while (left >= 2 * 74 && prng.chance(0.5)) {
    const n = prng.int(74, left - 74)
    out.push(eventOfSize(prng, n))
    left -= n
  }
  out.push(eventOfSize(prng, left))
  return out
}

/** A random unit shaped to hit the interesting cases: exact fills, whole chunks, overflows, tiny units. */
const randomUnit = (prng: Prng, log: TransactionLog): WriteUnit => {
  const cs = log.config.chunkSize
  const room = roomLeft(log)
  const roll = prng.int(0, 19)
  const completeChunkAfter = prng.chance(0.05)
  if (roll === 0 && room >= 74) return { records: recordsFilling(prng, room), completeChunkAfter } // exactly fills the chunk
  if (roll === 1) return { records: recordsFilling(prng, cs), completeChunkAfter } // a whole chunk
  if (roll === 2 && room + 1 <= cs && room + 1 >= 74) return { records: recordsFilling(prng, room + 1) } // one byte too many
  if (roll === 3) return { records: [] } // an empty unit
  const n = prng.int(1, 4)
  const records: Array<NewRecord> = []
  let size = 0
  for (let i = 0; i < n; i++) {
    const r = randomRecord(prng, Math.floor(cs / 6))
    if (size + framedLength(r) > cs) break
    size += framedLength(r)
    records.push(r)
  }
  return { records, completeChunkAfter }
}

const expectSameList = (actual: ReadonlyArray<LogRecord>, expected: ReadonlyArray<Written>, what: string) => {
  if (actual.length !== expected.length || actual.some((r, i) => r.logPosition !== expected[i]!.position)) {
    expect(
      actual.map((r) => r.logPosition),
      what
    ).toEqual(expected.map((w) => w.position))
  }
  actual.forEach((r, i) => {
    if (!sameRecord(r, expected[i]!.record, expected[i]!.position)) {
      throw new Error(`${what}: record ${i} at ${r.logPosition} differs from what was written`)
    }
  })
}

/** Reads everything back in every way the log offers and compares with what was written. */
const checkReads = (log: TransactionLog, written: ReadonlyArray<Written>, prng: Prng, limitProbes = 2) => {
  const writer = log.writerPosition()
  for (const w of written) {
    const r = Effect.runSync(log.readRecord(w.position, writer))
    if (r === undefined || !sameRecord(r, w.record, w.position)) throw new Error(`readRecord(${w.position}) differs`)
    // Not visible under a limit at or before its position.
    if (Effect.runSync(log.readRecord(w.position, w.position)) !== undefined)
      throw new Error(`readRecord(${w.position}) ignores its limit`)
  }
  // Forward in pages of random sizes.
  const forward: Array<LogRecord> = []
  let from = 0
  while (true) {
    const page = prng.int(1, 12)
    const r = Effect.runSync(log.scanForward(from, writer, page))
    if (r.records.length > page) throw new Error("scanForward returned more than asked")
    forward.push(...r.records)
    if (r.reachedEnd || r.records.length === 0) {
      expect(r.reachedEnd).toBe(true)
      break
    }
    check(r.next > from, () => `scanForward did not advance from ${from}`)
    from = r.next
  }
  expectSameList(forward, written, "scanForward")
  // Backward in pages of random sizes.
  const backward: Array<LogRecord> = []
  from = writer
  while (true) {
    const page = prng.int(1, 12)
    const r = Effect.runSync(log.scanBackward(from, writer, page))
    if (r.records.length > page) throw new Error("scanBackward returned more than asked")
    backward.push(...r.records)
    if (r.reachedEnd || r.records.length === 0) {
      expect(r.reachedEnd).toBe(true)
      break
    }
    check(r.next < from, () => `scanBackward did not move back from ${from}`)
    from = r.next
  }
  expectSameList(backward, [...written].reverse(), "scanBackward")
  // Limits: at record boundaries (positions and post positions) and anywhere at all.
  for (let i = 0; i < limitProbes && written.length > 0; i++) {
    const w = prng.pick(written)
    // Backward scans need record boundaries (as `next` values and the writer position are): a position
    // inside a record cannot be read backwards from.
    const boundaries = [w.position, w.position + framedLength(w.record)]
    for (const limit of [...boundaries, prng.int(0, writer), w.position + prng.int(1, framedLength(w.record) - 1)]) {
      const below = written.filter((x) => x.position < limit)
      expectSameList(Effect.runSync(log.scanForward(0, limit, 1_000_000)).records, below, `scanForward limit ${limit}`)
      if (boundaries.includes(limit)) {
        expectSameList(
          Effect.runSync(log.scanBackward(writer, limit, 1_000_000)).records,
          [...below].reverse(),
          `scanBackward limit ${limit}`
        )
      }
    }
    // `from` at a record: forward includes it, backward excludes it.
    expectSameList(
      Effect.runSync(log.scanForward(w.position, writer, 1_000_000)).records,
      written.filter((x) => x.position >= w.position),
      "scanForward from"
    )
    expectSameList(
      Effect.runSync(log.scanBackward(w.position, writer, 1_000_000)).records,
      written.filter((x) => x.position < w.position).reverse(),
      "scanBackward from"
    )
  }
}

/** Every chunk but the active one is completed, with a valid footer and a matching file checksum. */
const checkChunks = (mem: MemoryDisk, log: TransactionLog) => {
  const chunks = log.chunks()
  chunks.forEach((chunk, i) => {
    expect(chunk.header.startNumber).toBe(i)
    const bytes = mem.readFileSync(chunk.path)
    if (i === chunks.length - 1) {
      expect(chunk.footer, `active chunk ${i}`).toBeUndefined()
      expect(bytes.length).toBe(HEADER_SIZE + (log.config.preallocate ? log.config.chunkSize : chunk.dataSize))
      expect(log.writerPosition()).toBe(chunk.startPosition + chunk.dataSize)
      return
    }
    expect(chunk.footer, `chunk ${i} is completed`).toBeDefined()
    const footer = decodeFooter(bytes.subarray(bytes.length - FOOTER_SIZE))
    if (typeof footer === "string") throw new Error(`chunk ${i}: ${footer}`)
    expect(bytes.length).toBe(completedFileSize(footer))
    expect(footer.physicalDataSize).toBe(chunk.dataSize)
    expect(footer.logicalDataSize).toBe(chunk.dataSize)
    expect(checksum(bytes, 0, bytes.length - 8)).toBe(footer.fileChecksum)
    Effect.runSync(verifyChunkFile(chunk))
  })
}

const runWorkload = (seed: number, overrides: Partial<LogConfig>) => {
  const prng = new Prng(seed)
  const mem = new MemoryDisk({ prng: prng.fork("disk") })
  const config = logConfig({ chunkSize: prng.pick([512, 1024, 2048, 4096]), ...overrides })
  let log = openLog(mem.service, config, seed)
  expect(log.maxUnitBytes).toBe(config.chunkSize)
  const written: Array<Written> = []
  const batches = prng.int(5, 40)
  for (let b = 0; b < batches; b++) {
    const units: Array<WriteUnit> = []
    const n = prng.int(1, 6)
    // Units are shaped against the log as it is before this batch; later units of a batch land wherever.
    for (let u = 0; u < n; u++) units.push(randomUnit(prng, log))
    const before = log.writerPosition()
    const batch = writeUnits(log, units)
    expect(log.writerPosition()).toBe(batch.endPosition)
    let prevEnd = before
    units.forEach((unit, u) => {
      const positions = batch.positions[u]!
      check(positions.length === unit.records.length, () => `unit ${u}: ${positions.length} positions`)
      let at = positions[0] ?? batch.unitEnds[u]!
      check(at >= prevEnd, () => `unit ${u} at ${at} overlaps the previous one (ends ${prevEnd})`)
      unit.records.forEach((record, k) => {
        check(positions[k] === at, () => `record ${k} of unit ${u} at ${positions[k]}, expected ${at}`)
        written.push({ record, position: at })
        at += framedLength(record)
      })
      check(batch.unitEnds[u] === at, () => `unit ${u} ends at ${batch.unitEnds[u]}, expected ${at}`)
      if (unit.records.length > 0) {
        // A unit never straddles chunks.
        check(
          Math.floor(positions[0]! / config.chunkSize) === Math.floor((at - 1) / config.chunkSize),
          () => `unit ${u} straddles chunks`
        )
      }
      if (unit.completeChunkAfter === true && unit.records.length > 0) {
        const chunk = log.chunks()[Math.floor(positions[0]! / config.chunkSize)]!
        expect(chunk.footer?.logicalDataSize, "completeChunkAfter").toBe(at - chunk.startPosition)
      }
      prevEnd = at
    })
    // What was just written is readable at once (also through blocks cached before it was written).
    for (const w of written.slice(-6)) {
      const r = Effect.runSync(log.readRecord(w.position, log.writerPosition()))
      if (r === undefined || !sameRecord(r, w.record, w.position))
        throw new Error(`seed ${seed}: fresh readRecord(${w.position}) differs`)
    }
    if (prng.chance(0.1)) checkReads(log, written, prng, 1)
  }
  checkReads(log, written, prng)
  checkChunks(mem, log)
  // A clean close and reopen shows the same log, and writing continues.
  Effect.runSync(log.close)
  log = openLog(mem.service, config, seed + 1)
  checkReads(log, written, prng)
  checkChunks(mem, log)
  const more = writeUnits(log, [{ records: [eventOfSize(prng, 100)] }])
  expect(Effect.runSync(log.readRecord(more.positions[0]![0]!, log.writerPosition()))).toBeDefined()
  return { written, mem, log }
}

describe("transaction log: writer and readers", () => {
  const configs: Array<[string, Partial<LogConfig>]> = [
    ["not preallocated", { preallocate: false }],
    ["preallocated", { preallocate: true }],
    ["tiny block cache", { cacheBytes: 1 }],
    ["no block cache, preallocated", { cacheBytes: 0, preallocate: true }]
  ]
  for (const [name, overrides] of configs) {
    it(`random units round-trip through every read path (${name})`, async () => {
      for (let seed = 1; seed <= SEEDS; seed++) {
        try {
          runWorkload(seed, overrides)
        } catch (e) {
          throw new Error(`seed ${seed}: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
        }
        await breathe()
      }
    })
  }

  // Scans decode one 64 KiB cache block at a time and read a record crossing a block boundary whole: chunks
  // of several blocks, records from tiny to larger than a block, warm and cold caches.
  for (const [name, cacheBytes] of [
    ["roomy block cache", 8 << 20],
    ["tiny block cache", 1]
  ] as const) {
    it(`scans across block boundaries return every record once, in order (${name})`, async () => {
      for (let seed = 1; seed <= 3 * SEEDS_SCALE; seed++) {
        const prng = new Prng(seed)
        const mem = new MemoryDisk({ prng: prng.fork("disk") })
        const log = openLog(
          mem.service,
          logConfig({ chunkSize: 512 * 1024, cacheBytes, preallocate: prng.chance(0.5) }),
          seed
        )
        const written: Array<Written> = []
        while (log.writerPosition() < 1_200_000) {
          const records = Array.from({ length: prng.int(1, 8) }, () =>
            eventOfSize(
              prng,
              prng.chance(0.1) ? prng.int(60_000, 140_000) : prng.int(74, prng.chance(0.5) ? 200 : 3000)
            )
          )
          const batch = writeUnits(log, [{ records }])
          records.forEach((record, k) => written.push({ record, position: batch.positions[0]![k]! }))
          // Read while writing too: blocks of the active chunk are cached before they are full.
          if (prng.chance(0.2)) expect(scanAll(log, prng.int(1, 50)).length).toBe(written.length)
        }
        checkReads(log, written, prng, 2)
        await breathe()
      }
    })
  }

  it("scans page by page through a record boundary a few bytes either side of a block boundary", () => {
    for (let delta = -12; delta <= 12; delta++) {
      const prng = new Prng(100 + delta)
      const mem = new MemoryDisk()
      const log = openLog(mem.service, logConfig({ chunkSize: 512 * 1024, cacheBytes: 8 << 20 }))
      // The first record ends `delta` bytes from the first block boundary of the file.
      const records = [
        eventOfSize(prng, BLOCK_SIZE + delta - HEADER_SIZE),
        ...Array.from({ length: 5 }, () => eventOfSize(prng, prng.int(74, 120)))
      ]
      const batch = writeUnits(log, [{ records }])
      const written = records.map((record, k) => ({ record, position: batch.positions[0]![k]! }))
      try {
        checkReads(log, written, prng, 1)
      } catch (e) {
        throw new Error(`delta ${delta}: ${e instanceof Error ? e.message : String(e)}`, { cause: e })
      }
    }
  })

  it("a unit that exactly fills a chunk is written there, and the next unit starts the next chunk", () => {
    const prng = new Prng(1)
    const mem = new MemoryDisk()
    const config = logConfig({ chunkSize: 1024 })
    const log = openLog(mem.service, config)
    const first = writeUnits(log, [{ records: [eventOfSize(prng, 300)] }])
    const fill = writeUnits(log, [{ records: recordsFilling(prng, 1024 - 300) }])
    expect(fill.positions[0]![0]).toBe(300)
    expect(fill.endPosition).toBe(1024)
    expect(log.writerPosition()).toBe(1024)
    const next = writeUnits(log, [{ records: [eventOfSize(prng, 100)] }])
    expect(next.positions[0]).toEqual([1024])
    expect(log.chunks().length).toBe(2)
    expect(log.chunks()[0]!.footer?.physicalDataSize).toBe(1024)
    expect(first.positions[0]).toEqual([0])
  })

  it("a unit that does not fit rolls the chunk over; the chunk's tail is a gap", () => {
    const prng = new Prng(2)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024 }))
    writeUnits(log, [{ records: [eventOfSize(prng, 1000)] }])
    const b = writeUnits(log, [{ records: [eventOfSize(prng, 25 + 74)] }, { records: [eventOfSize(prng, 74)] }])
    expect(b.positions).toEqual([[1024], [1024 + 99]])
    expect(log.chunks()[0]!.footer?.logicalDataSize).toBe(1000)
    // Positions in the gap hold no records.
    expect(Effect.runSync(log.scanForward(1000, log.writerPosition(), 10)).records.map((r) => r.logPosition)).toEqual([
      1024, 1123
    ])
    expect(Effect.runSync(log.scanBackward(1024, log.writerPosition(), 10)).records.map((r) => r.logPosition)).toEqual([
      0
    ])
  })

  it("completeChunkAfter completes the chunk right after the unit, in the same write", () => {
    const prng = new Prng(3)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024 }))
    const b = writeUnits(log, [
      { records: [eventOfSize(prng, 100)], completeChunkAfter: true },
      { records: [eventOfSize(prng, 100)] }
    ])
    expect(b.positions).toEqual([[0], [1024]])
    const c = writeUnits(log, [{ records: [eventOfSize(prng, 100)], completeChunkAfter: true }])
    expect(c.endPosition).toBe(2048)
    expect(log.writerPosition()).toBe(2048)
    expect(log.chunks().map((ch) => ch.footer?.physicalDataSize)).toEqual([100, 200, undefined])
  })

  it("a unit bigger than a chunk throws RangeError in prepare and changes nothing", () => {
    const prng = new Prng(4)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024 }))
    writeUnits(log, [{ records: [eventOfSize(prng, 200)] }])
    expect(() => log.prepare([{ records: [eventOfSize(prng, 1025)] }])).toThrow(RangeError)
    expect(() =>
      log.prepare([
        { records: [eventOfSize(prng, 100)] },
        { records: [eventOfSize(prng, 600), eventOfSize(prng, 600)] }
      ])
    ).toThrow(RangeError)
    expect(log.writerPosition()).toBe(200)
    const whole = writeUnits(log, [{ records: [eventOfSize(prng, 1024)] }])
    expect(whole.positions).toEqual([[1024]])
    expect(log.writerPosition()).toBe(2048)
  })

  it("a prepared batch that no longer follows the log end is refused (a defect), not written", () => {
    const prng = new Prng(5)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024 }))
    const stale = log.prepare([{ records: [eventOfSize(prng, 100)] }])
    writeUnits(log, [{ records: [eventOfSize(prng, 100)] }])
    const exit = Effect.runSyncExit(log.write(stale))
    expect(Exit.isFailure(exit) && exit.cause._tag).toBe("Die")
    expect(log.writerPosition()).toBe(100)
  })

  it("readRecord outside the data: undefined past the limit, before 0 and at a chunk's data end; StorageCorrupt in the gap or inside a record", () => {
    const prng = new Prng(6)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024 }))
    writeUnits(log, [{ records: [eventOfSize(prng, 1000)] }, { records: [eventOfSize(prng, 100)] }])
    const writer = log.writerPosition()
    expect(Effect.runSync(log.readRecord(-1, writer))).toBeUndefined()
    expect(Effect.runSync(log.readRecord(writer, writer))).toBeUndefined()
    expect(Effect.runSync(log.readRecord(10 * 1024, Number.MAX_SAFE_INTEGER))).toBeUndefined()
    // The end of a completed chunk's data is a boundary (the last record's post position): no record.
    expect(Effect.runSync(log.readRecord(1000, writer))).toBeUndefined()
    // Inside the gap, or inside a record: no record can start there.
    for (const p of [1010, 1023, 3, 1024 + 50]) {
      const exit = Effect.runSyncExit(log.readRecord(p, writer))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag, `position ${p}`).toBe(
        "StorageCorrupt"
      )
    }
  })

  it("scans with a limit past the written log: forward stops where later records start, backward starts at the end", () => {
    const prng = new Prng(10)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024 }))
    writeUnits(log, [{ records: [eventOfSize(prng, 600)] }, { records: [eventOfSize(prng, 600)] }])
    const first = Effect.runSync(log.scanForward(0, Number.MAX_SAFE_INTEGER, 100))
    expect(first.records.map((r) => r.logPosition)).toEqual([0, 1024])
    expect(first.next).toBe(1624)
    expect(first.reachedEnd).toBe(false)
    writeUnits(log, [{ records: [eventOfSize(prng, 100)] }])
    expect(
      Effect.runSync(log.scanForward(first.next, Number.MAX_SAFE_INTEGER, 100)).records.map((r) => r.logPosition)
    ).toEqual([1624])
    const back = Effect.runSync(log.scanBackward(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 100))
    expect(back.records.map((r) => r.logPosition)).toEqual([1624, 1024, 0])
    expect(back.reachedEnd).toBe(true)
  })

  it("record kinds other than events are written and read like events", () => {
    const prng = new Prng(7)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024 }))
    const records: Array<NewRecord> = []
    for (let i = 0; records.length < 12; i++) {
      const r = randomRecord(prng, 50)
      if (r.kind !== RecordKind.Event) records.push(r)
    }
    const b = writeUnits(
      log,
      records.map((r) => ({ records: [r] }))
    )
    const all = scanAll(log, 5)
    expect(all.length).toBe(12)
    all.forEach((r, i) =>
      expect(bytesOf(r, r.logPosition).equals(bytesOf(records[i]!, b.positions[i]![0]!))).toBe(true)
    )
  })

  it("the first open creates chunk 0 and writer.chk durably", () => {
    const mem = new MemoryDisk()
    openLog(mem.service, logConfig())
    mem.crash(new Prng(1), "strict")
    expect(filesIn(mem).sort()).toEqual(["chunk-000000.000000", "writer.chk"])
    const log = openLog(mem.service, logConfig())
    expect(log.writerPosition()).toBe(0)
  })
})
