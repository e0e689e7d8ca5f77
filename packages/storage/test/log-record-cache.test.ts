/**
 * The decoded-record cache (RecordCache.ts): a hot record is handed out as the same object, with its
 * payloads copied out of the cached block; and what a position holds after a truncation is what is read
 * there, never the record the cache kept from before.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { MemoryDisk, Prng } from "@vellum/platform"
import { BlockCache } from "../src/log/BlockCache.js"
import { RecordCache } from "../src/log/RecordCache.js"
import { RecordKind, type LogRecord } from "../src/log/records.js"
import { NotCached, type TransactionLog } from "../src/log/TransactionLog.js"
import { eventOfSize, logConfig, openLog, runOn, sameRecord, scanAll, writeUnits } from "./log-support.js"
import { Model, buildLog, checkContent, keepByPosition } from "./log-rewrite-support.js"

const cachedAt = (log: TransactionLog, position: number): LogRecord | undefined => {
  const record = log.readRecordCached(position, log.writerPosition())
  if (record === NotCached) throw new Error(`the record at ${position} is not cached`)
  return record
}

describe("decoded-record cache", () => {
  it("hands out the same record object for a hot position, its payload not a view into a block", () => {
    const disk = new MemoryDisk()
    const log = openLog(disk.service, logConfig({ chunkSize: 64 * 1024 }))
    const prng = new Prng(7)
    const records = Array.from({ length: 20 }, () => eventOfSize(prng, 300))
    const batch = writeUnits(log, [{ records }])
    // The first read fills the block cache; the decoded record is kept from then on.
    runOn(disk.service, log.readRecord(batch.positions[0]![0]!, log.writerPosition()))
    records.forEach((record, k) => {
      const position = batch.positions[0]![k]!
      const first = cachedAt(log, position)!
      expect(sameRecord(first, record, position)).toBe(true)
      expect(cachedAt(log, position)).toBe(first)
      expect(runOn(disk.service, log.readRecord(position, log.writerPosition()))).toBe(first)
      if (first.kind === RecordKind.Event) expect(first.data.buffer.byteLength).toBeLessThan(64 * 1024)
    })
    // A scan hands out the very objects the point reads got.
    const scanned = scanAll(log)
    expect(scanned.length).toBe(records.length)
    scanned.forEach((record, k) => expect(record).toBe(cachedAt(log, batch.positions[0]![k]!)))
  })

  it("after a truncation, a position holds the record written there since", () => {
    const disk = new MemoryDisk()
    const log = openLog(disk.service, logConfig({ chunkSize: 64 * 1024 }))
    const prng = new Prng(11)
    const kept = writeUnits(log, [{ records: [eventOfSize(prng, 200)] }])
    const cut = writeUnits(log, [{ records: [eventOfSize(prng, 250), eventOfSize(prng, 250)] }])
    const position = cut.positions[0]![0]!
    // Read (and keep decoded) the records that will be cut, by point reads and by a scan.
    runOn(disk.service, log.readRecord(position, log.writerPosition()))
    const before = cachedAt(log, position)!
    expect(scanAll(log).length).toBe(3)
    runOn(disk.service, log.truncate(kept.endPosition))
    const replacement = eventOfSize(prng, 250)
    const rewritten = writeUnits(log, [{ records: [replacement] }])
    expect(rewritten.positions[0]![0]).toBe(position)
    const after = runOn(disk.service, log.readRecord(position, log.writerPosition()))!
    expect(after).not.toBe(before)
    expect(sameRecord(after, replacement, position)).toBe(true)
    expect(sameRecord(cachedAt(log, position)!, replacement, position)).toBe(true)
    const scanned = scanAll(log)
    expect(scanned.length).toBe(2)
    expect(sameRecord(scanned[1]!, replacement, position)).toBe(true)
  })

  it("after a scavenge, a removed record reads as absent and the others as they were, though all were kept decoded", () => {
    for (const seed of [1, 2, 3]) {
      const { log, written } = buildLog(seed)
      const model = new Model(written)
      // Every record read (by point reads and scans) and so kept decoded before the chunks are replaced.
      checkContent(log, model)
      const keep = keepByPosition(seed)
      Effect.runSync(log.replaceChunks(0, 2, keep))
      const [, removed] = model.remove(0, 2, keep)
      expect(removed).toBeGreaterThan(0)
      checkContent(log, model)
      for (const w of written)
        if (!model.alive.has(w.position)) expect(log.readRecordCached(w.position, log.writerPosition())).toBeUndefined()
    }
  })

  it("drops everything when the block cache forgets a file, and keeps nothing decoded from bytes read before", () => {
    const blocks = new BlockCache(1 << 20)
    const decoded = new RecordCache(1 << 20, blocks)
    const record: LogRecord = {
      kind: RecordKind.Commit,
      logPosition: 100,
      transactionPosition: 0,
      firstEventNumber: 0,
      correlationId: "c",
      timeMicros: 0
    }
    const epoch = decoded.epoch
    expect(decoded.store(record, epoch)).toBe(record)
    expect(decoded.get(100)).toBe(record)
    blocks.evictFile(3)
    expect(decoded.get(100)).toBeUndefined()
    // Bytes read before that eviction may be the ones it was for.
    decoded.store(record, epoch)
    expect(decoded.get(100)).toBeUndefined()
    decoded.store(record, decoded.epoch)
    expect(decoded.get(100)).toBe(record)
  })

  it("keeps nothing with a zero budget", () => {
    const blocks = new BlockCache(0)
    const decoded = new RecordCache(0, blocks)
    const prng = new Prng(3)
    const event = { ...eventOfSize(prng, 120), logPosition: 0 } as LogRecord
    expect(decoded.store(event, decoded.epoch)).toBe(event)
    expect(decoded.get(0)).toBeUndefined()
    expect(decoded.residentBytes).toBe(0)
  })
})
