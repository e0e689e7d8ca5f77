/**
 * One fsync per batch: the writer checkpoint is synced lazily, and open finds acknowledged records past it by
 * their checksums (tailRecovery.ts) — a torn tail is cut, damage to acknowledged data refuses the open.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { Cause, Effect, Exit, Option } from "effect"
import { Disk, MemoryDisk, Prng, type DiskService } from "@vellum/platform"
import type { StorageCorrupt } from "../src/errors.js"
import { HEADER_SIZE } from "../src/log/chunkFormat.js"
import type { NewRecord } from "../src/log/records.js"
import { openTransactionLog, type LogConfig, type TransactionLog } from "../src/log/TransactionLog.js"
import {
  DIR,
  bytesOf,
  chunkIds,
  eventOfSize,
  exitOn,
  flatten,
  logConfig,
  openLog,
  powerCutDisk,
  runOn,
  sameRecord,
  scanAll,
  sealUnit,
  writeUnits,
  type Placed
} from "./log-support.js"

const CHUNK = `${DIR}/chunk-000000.000000`

/** `batches` acknowledged batches of one to three units of one to three events each. */
const writeAcked = (log: TransactionLog, prng: Prng, batches: number): Array<Placed> => {
  const placed: Array<Placed> = []
  for (let b = 0; b < batches; b++) {
    const units = Array.from({ length: prng.int(1, 3) }, () => ({
      records: sealUnit(Array.from({ length: prng.int(1, 3) }, () => eventOfSize(prng, prng.int(80, 160))))
    }))
    const batch = writeUnits(log, units)
    units.forEach((u, i) => placed.push({ records: u.records, positions: batch.positions[i]! }))
  }
  return placed
}

/** The log holds exactly these records, in order, at their positions. */
const expectExactly = (log: TransactionLog, placed: ReadonlyArray<Placed>) => {
  const expected = flatten(placed)
  const records = scanAll(log)
  expect(records.length).toBe(expected.length)
  records.forEach((r, i) => expect(sameRecord(r, expected[i]!.record, expected[i]!.position)).toBe(true))
}

/** Writes `bytes` at a file offset and syncs them, as a write that reached the disk (or damage at rest). */
const rawWrite = (disk: DiskService, path: string, offset: number, bytes: Buffer) =>
  runOn(
    disk,
    Effect.gen(function* () {
      const handle = yield* (yield* Disk).open(path)
      yield* handle.write(offset, bytes)
      yield* handle.sync
      yield* handle.close
    })
  )

const openFailure = (disk: DiskService, config: LogConfig): StorageCorrupt => {
  const exit = exitOn(disk, openTransactionLog(config, chunkIds(1)))
  if (Exit.isSuccess(exit)) throw new Error("the log opened")
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure) || failure.value._tag !== "StorageCorrupt") throw new Error(Cause.pretty(exit.cause))
  return failure.value
}

describe("transaction log: one fsync per batch", () => {
  it("a batch within a chunk costs one sync (two with a checkpoint lag of 0, as before), and close syncs the checkpoint", () => {
    for (const [lag, perBatch] of [
      [undefined, 1],
      [0, 2]
    ] as const) {
      const mem = new MemoryDisk()
      const config = logConfig({ chunkSize: 64 * 1024, ...(lag === undefined ? {} : { checkpointLagBytes: lag }) })
      const log = openLog(mem.service, config)
      const before = mem.stats.syncs
      writeAcked(log, new Prng(16), 50)
      expect(mem.stats.syncs - before).toBe(50 * perBatch)
      Effect.runSync(log.close)
      // A clean stop leaves nothing past the checkpoint.
      expect(openLog(mem.service, config).recovered).toEqual({
        checkpoint: log.writerPosition(),
        end: log.writerPosition(),
        cutBytes: 0
      })
    }
  })

  it("a stale checkpoint with valid records past it: they are kept and the checkpoint is moved to their end", () => {
    for (const preallocate of [false, true]) {
      const mem = new MemoryDisk()
      const config = logConfig({ chunkSize: 4096, preallocate })
      const log = openLog(mem.service, config)
      const placed = writeAcked(log, new Prng(1), 6)
      const end = log.writerPosition()
      // Only what was synced survives: every batch's bytes, and writer.chk as open created it.
      mem.crash(new Prng(2), "strict")
      const again = openLog(mem.service, config)
      expect(again.recovered).toEqual({ checkpoint: 0, end, cutBytes: 0 })
      expect(again.writerPosition()).toBe(end)
      expectExactly(again, placed)
      // The move was durable: the next open starts from it.
      mem.crash(new Prng(3), "strict")
      expect(openLog(mem.service, config).recovered).toEqual({ checkpoint: end, end, cutBytes: 0 })
    }
  })

  it("a tail read damaged on its way from the disk is read again: neither cut as torn nor refused as damaged", () => {
    // Flip a bit in the first read of the chunk's tail (the scan's) at a given record: the last one would look
    // like a torn tail, an earlier one like damage to acknowledged data. The bytes stored are sound.
    for (const victim of ["last", "first"] as const) {
      const mem = new MemoryDisk()
      const config = logConfig({ chunkSize: 4096 })
      const log = openLog(mem.service, config)
      const placed = writeAcked(log, new Prng(4), 6)
      const end = log.writerPosition()
      mem.crash(new Prng(5), "strict")
      const positions = flatten(placed).map((p) => p.position)
      const target = victim === "last" ? positions[positions.length - 1]! : positions[0]!
      let flipped = 0
      const flipping: DiskService = {
        ...mem.service,
        open: (path, options) =>
          Effect.map(mem.service.open(path, options), (handle) => ({
            ...handle,
            read: (position: number, length: number) =>
              Effect.map(handle.read(position, length), (bytes) => {
                const at = HEADER_SIZE + target + 12 - position
                if (!path.endsWith("chunk-000000.000000") || flipped > 0 || at < 0 || at >= bytes.length) return bytes
                flipped++
                const copy = Buffer.from(bytes)
                copy[at]! ^= 0x10
                return copy
              })
          }))
      }
      const again = openLog(flipping, config)
      expect(flipped).toBe(1)
      expect(again.recovered?.end).toBe(end)
      expect(again.writerPosition()).toBe(end)
      expectExactly(again, placed)
    }
  })

  it("the checkpoint is synced once the log has grown past it by the lag, so it never lags further", () => {
    const lag = 400
    const mem = new MemoryDisk()
    const config = logConfig({ chunkSize: 8192, checkpointLagBytes: lag })
    let log = openLog(mem.service, config)
    const prng = new Prng(4)
    let lagged = 0
    for (let b = 0; b < 30; b++) {
      writeAcked(log, prng, 1)
      mem.crash(new Prng(b), "strict")
      log = openLog(mem.service, config)
      const { checkpoint, end } = log.recovered!
      expect(end - checkpoint).toBeLessThanOrEqual(lag)
      if (end > checkpoint) lagged++
    }
    // The lag was used: not every batch synced the checkpoint.
    expect(lagged).toBeGreaterThan(0)
  })

  it("a tail torn at every byte of the last record is cut, and every acknowledged record before it is kept", () => {
    for (const preallocate of [false, true]) {
      const config = logConfig({ chunkSize: 4096, preallocate })
      const last = sealUnit([eventOfSize(new Prng(5), 150)])[0]!
      for (let k = 0; k < 150; k++) {
        const mem = new MemoryDisk()
        const log = openLog(mem.service, config)
        const placed = writeAcked(log, new Prng(6), 4)
        const end = log.writerPosition()
        const whole = bytesOf(last, end)
        const torn = whole.subarray(0, k)
        rawWrite(mem.service, CHUNK, HEADER_SIZE + end, torn)
        mem.crash(new Prng(k), "strict")
        const again = openLog(mem.service, config)
        // In a preallocated chunk the bytes a tear missed may be the zeros already there (the high bytes of the
        // length suffix): then the record is whole on disk, and kept.
        if (preallocate && whole.subarray(k).every((b) => b === 0)) {
          expect(again.writerPosition()).toBe(end + whole.length)
          continue
        }
        expect([preallocate, k, again.writerPosition()]).toEqual([preallocate, k, end])
        expect(again.recovered!.cutBytes).toBe(torn.filter((b) => b !== 0).length)
        expectExactly(again, placed)
        // The torn bytes are gone from the file: a new write goes where they were.
        const next = writeUnits(again, [{ records: [last] }])
        expect([k, next.positions[0]![0]]).toEqual([k, end])
        expectExactly(again, [...placed, { records: [last], positions: [end] }])
      }
    }
  })

  it("a unit whose records are whole but whose end is missing (a write torn at a record boundary) is cut", () => {
    const config = logConfig({ chunkSize: 4096 })
    const mem = new MemoryDisk()
    const log = openLog(mem.service, config)
    const placed = writeAcked(log, new Prng(7), 3)
    const end = log.writerPosition()
    const unit = sealUnit([
      eventOfSize(new Prng(8), 100),
      eventOfSize(new Prng(9), 100),
      eventOfSize(new Prng(10), 100)
    ])
    // The first two records of a three-record unit reached the disk.
    const partial = Buffer.concat([bytesOf(unit[0]!, end), bytesOf(unit[1]!, end + 100)])
    rawWrite(mem.service, CHUNK, HEADER_SIZE + end, partial)
    mem.crash(new Prng(11), "strict")
    const again = openLog(mem.service, config)
    expect(again.writerPosition()).toBe(end)
    expect(again.recovered!.cutBytes).toBe(partial.filter((b) => b !== 0).length)
    expectExactly(again, placed)
  })

  it("a bit flipped in any byte of a record that a valid record follows refuses the open, naming chunk and position", () => {
    for (const preallocate of [false, true]) {
      const config = logConfig({ chunkSize: 4096, preallocate })
      const damaged = { at: 0, length: 0 }
      for (let i = 0; i === 0 || i < damaged.length; i++) {
        const mem = new MemoryDisk()
        const log = openLog(mem.service, config)
        const placed = writeAcked(log, new Prng(12), 4)
        // The second unit's first record; every record after it is valid.
        const target = flatten(placed)[placed[0]!.records.length]!
        damaged.at = target.position
        damaged.length = bytesOf(target.record, target.position).length
        mem.crash(new Prng(13), "strict")
        const byte = mem.readFileSync(CHUNK).subarray(HEADER_SIZE + damaged.at + i, HEADER_SIZE + damaged.at + i + 1)
        rawWrite(mem.service, CHUNK, HEADER_SIZE + damaged.at + i, Buffer.from([byte[0]! ^ (1 << (i % 8))]))
        const before = mem.readFileSync(CHUNK)
        const error = openFailure(mem.service, config)
        expect(error.path).toBe(CHUNK)
        expect(error.position).toBe(damaged.at)
        expect(error.message).toContain("chunk-000000.000000")
        expect(error.message).toContain(`log position ${damaged.at}`)
        // Nothing was cut.
        expect(mem.readFileSync(CHUNK).equals(before)).toBe(true)
      }
    }
  })

  it("damage below the durable checkpoint is not looked for at open: the read that meets it reports it, as before", () => {
    const config = logConfig({ chunkSize: 4096, checkpointLagBytes: 0 })
    const mem = new MemoryDisk()
    const log = openLog(mem.service, config)
    const placed = writeAcked(log, new Prng(14), 4)
    const target = flatten(placed)[1]!
    mem.crash(new Prng(15), "strict")
    rawWrite(mem.service, CHUNK, HEADER_SIZE + target.position + 30, Buffer.from([0xff]))
    const again = openLog(mem.service, config)
    expect(again.recovered).toEqual({ checkpoint: log.writerPosition(), end: log.writerPosition(), cutBytes: 0 })
    const read = Effect.runSyncExit(again.readRecord(target.position, again.writerPosition()))
    expect(Exit.isFailure(read) && Cause.pretty(read.cause)).toContain("StorageCorrupt")
  })

  it("property: random batch histories cut by a power loss at a random operation keep every acknowledged unit, each unit whole or absent, and never look damaged", () => {
    const event = fc.integer({ min: 80, max: 400 })
    const unit = fc.array(event, { minLength: 1, maxLength: 3 })
    const history = fc.array(fc.array(unit, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 25 })
    fc.assert(
      fc.property(
        history,
        fc.boolean(),
        fc.constantFrom(0, 300, 1500, 1 << 20),
        fc.nat({ max: 120 }),
        fc.integer({ min: 1, max: 1 << 30 }),
        (batches, preallocate, lag, budget, seed) => {
          const config = logConfig({ chunkSize: 2048, preallocate, checkpointLagBytes: lag })
          const mem = new MemoryDisk()
          const cut = { budget: Number.MAX_SAFE_INTEGER, used: 0, cutAt: undefined as string | undefined }
          const log = openLog(powerCutDisk(mem, cut), config)
          cut.budget = cut.used + budget
          const prng = new Prng(seed)
          const acked: Array<Placed> = []
          const attempted: Array<Placed> = []
          for (const sizes of batches) {
            const units = sizes.map((s) => ({ records: sealUnit(s.map((n) => eventOfSize(prng, n))) }))
            const batch = log.prepare(units)
            const placed = units.map((u, i) => ({
              records: u.records as ReadonlyArray<NewRecord>,
              positions: batch.positions[i]!
            }))
            attempted.push(...placed)
            if (Exit.isFailure(Effect.runSyncExit(log.write(batch)))) break
            acked.push(...placed)
          }
          mem.crash(prng.fork("crash"), prng.chance(0.3) ? "strict" : "random")
          const again = openLog(mem.service, config)
          const records = scanAll(again)
          // A prefix of the attempted units, whole units only, and at least the acknowledged ones.
          let units = 0
          let count = 0
          while (units < attempted.length && count + attempted[units]!.records.length <= records.length) {
            count += attempted[units]!.records.length
            units++
          }
          expect(count).toBe(records.length)
          expect(units).toBeGreaterThanOrEqual(acked.length)
          const expected = flatten(attempted.slice(0, units))
          records.forEach((r, i) => expect(sameRecord(r, expected[i]!.record, expected[i]!.position)).toBe(true))
        }
      ),
      { numRuns: 150, seed: 22 }
    )
  })
})
