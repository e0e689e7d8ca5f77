/**
 * After a write or sync error (or a full disk) the log accepts no more writes until it is recovered
 * (`recover`, log-heal.test.ts), keeps serving what was acknowledged, and a restart after a crash recovers
 * the acknowledged data (plus, at most, whole units of the failed batch that had become durable: the
 * "indeterminate" outcome of a write that was never acknowledged).
 */
import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { MemoryDisk, Prng, type MemoryDiskFaults } from "@vellum/platform"
import { framedLength, type NewRecord } from "../src/log/records.js"
import type { LogConfig, TransactionLog, WriteUnit } from "../src/log/TransactionLog.js"
import {
  SEEDS_SCALE,
  flatten,
  type Placed,
  eventOfSize,
  logConfig,
  openLog,
  randomRecord,
  sealUnit,
  sameRecord,
  scanAll
} from "./log-support.js"

const SEEDS = 30 * SEEDS_SCALE

const randomUnits = (prng: Prng, cs: number): Array<WriteUnit> =>
  Array.from({ length: prng.int(1, 4) }, () => {
    const records: Array<NewRecord> = []
    let size = 0
    for (let i = prng.int(1, 3); i > 0; i--) {
      const r = prng.chance(0.2) ? eventOfSize(prng, prng.int(74, cs)) : randomRecord(prng, Math.floor(cs / 4))
      if (size + framedLength(r) > cs) break
      size += framedLength(r)
      records.push(r)
    }
    return { records: sealUnit(records), completeChunkAfter: prng.chance(0.05) }
  })

const failureTag = (exit: Exit.Exit<unknown, unknown>): string | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const e = Cause.failureOption(exit.cause)
  return Option.isSome(e) ? (e.value as { _tag: string })._tag : `defect: ${Cause.pretty(exit.cause)}`
}

/** Acknowledged data reads back, every way, under the log's writer position. */
const expectReadable = (log: TransactionLog, acked: ReadonlyArray<Placed>) => {
  const expected = flatten(acked)
  const all = scanAll(log, 5)
  expect(all.length).toBeGreaterThanOrEqual(expected.length)
  expected.forEach((w, i) => expect(sameRecord(all[i]!, w.record, w.position), `record ${i}`).toBe(true))
  for (const w of expected) {
    const r = Effect.runSync(log.readRecord(w.position, log.writerPosition()))
    expect(r !== undefined && sameRecord(r, w.record, w.position)).toBe(true)
  }
  const back = Effect.runSync(log.scanBackward(log.writerPosition(), log.writerPosition(), 1_000_000)).records
  expect(back.map((r) => r.logPosition)).toEqual(all.map((r) => r.logPosition).reverse())
  return all
}

/**
 * After a reopen: all acknowledged records, then at most whole units of the failed batch, in order, and
 * nothing else.
 */
const expectRecovered = (log: TransactionLog, acked: ReadonlyArray<Placed>, failed: ReadonlyArray<Placed>) => {
  const all = expectReadable(log, acked)
  let at = flatten(acked).length
  for (const unit of failed) {
    if (at >= all.length) break
    unit.records.forEach((record, k) => {
      const r = all[at + k]
      expect(
        r !== undefined && sameRecord(r, record, unit.positions[k]!),
        "a unit of the failed batch is whole or absent"
      ).toBe(true)
    })
    at += unit.records.length
  }
  expect(at, "nothing but acknowledged data and whole units of the failed batch").toBe(all.length)
}

interface Scenario {
  readonly name: string
  /** Breaks the disk before batch `at`. */
  readonly breakDisk: (mem: MemoryDisk) => void
  readonly expectReason?: string
}

const scenarios: Array<Scenario> = [
  {
    name: "write errors (probability 1)",
    breakDisk: (mem) => mem.setFaults({ writeError: 1 }),
    expectReason: "injected I/O error"
  },
  {
    name: "sync errors (probability 1)",
    breakDisk: (mem) => mem.setFaults({ syncError: 1 }),
    expectReason: "injected I/O error"
  },
  { name: "write errors (probability 0.3)", breakDisk: (mem) => mem.setFaults({ writeError: 0.3 }) },
  { name: "sync errors (probability 0.3)", breakDisk: (mem) => mem.setFaults({ syncError: 0.3 }) },
  {
    name: "a full disk",
    breakDisk: (mem) => (mem.capacityBytes = mem.totalBytes() + new Prng(mem.totalBytes()).int(0, 3000)),
    expectReason: "no space left"
  }
]

describe("transaction log: fail-stop", () => {
  for (const scenario of scenarios) {
    for (const preallocate of [false, true]) {
      it(`${scenario.name} (preallocate ${preallocate}): write fails with StorageFailed, later writes too, acknowledged data stays readable and recoverable`, () => {
        let failures = 0
        for (let seed = 1; seed <= SEEDS; seed++) {
          const prng = new Prng(seed)
          const mem = new MemoryDisk({ prng: prng.fork("disk") })
          const config: LogConfig = logConfig({
            chunkSize: prng.pick([512, 1024, 2048]),
            preallocate,
            verifyOnOpen: true
          })
          const log = openLog(mem.service, config, seed)
          const acked: Array<Placed> = []
          const breakAt = prng.int(0, 8)
          let failed: Array<Placed> = []
          let failedAt = -1
          for (let b = 0; b < 30 && failedAt < 0; b++) {
            if (b === breakAt) scenario.breakDisk(mem)
            const units = randomUnits(prng, config.chunkSize)
            const batch = log.prepare(units)
            const placed = units.map((u, i) => ({ records: u.records, positions: batch.positions[i]! }))
            const writerBefore = log.writerPosition()
            const exit = Effect.runSyncExit(log.write(batch))
            if (Exit.isSuccess(exit)) {
              acked.push(...placed)
              expect(log.writerPosition()).toBe(batch.endPosition)
              continue
            }
            expect(failureTag(exit)).toBe("StorageFailed")
            failed = placed
            failedAt = b
            const message = log.failed()
            expect(message).toBeDefined()
            if (scenario.expectReason !== undefined) expect(message).toContain(scenario.expectReason)
            // The checkpoint never moves past a rollover of this batch's own chunk end.
            expect(log.writerPosition()).toBeGreaterThanOrEqual(writerBefore)
            expect(log.writerPosition()).toBeLessThanOrEqual(batch.endPosition)
          }
          if (failedAt < 0) continue // the probabilistic faults did not fire this time
          failures++
          // Every later write fails, even with a healthy disk, until the log is recovered.
          mem.setFaults(undefined)
          mem.capacityBytes = undefined
          for (let i = 0; i < 3; i++) {
            const exit = Effect.runSyncExit(log.write(log.prepare([{ records: [eventOfSize(prng, 100)] }])))
            expect(failureTag(exit)).toBe("StorageFailed")
          }
          // Reads of acknowledged data still work.
          expectReadable(log, acked)
          // Power loss and restart: the acknowledged data is there, and the log writes again.
          mem.crash(prng.fork("crash"), prng.chance(0.3) ? "strict" : "random")
          const again = openLog(mem.service, config, seed + 1000)
          expectRecovered(again, acked, failed)
          const more = again.prepare([{ records: [eventOfSize(prng, 90)] }])
          Effect.runSync(again.write(more))
          expect(Effect.runSync(again.readRecord(more.positions[0]![0]!, again.writerPosition()))).toBeDefined()
          // And after another crash, everything recovered stays.
          const before = scanAll(again)
          mem.crash(prng.fork("crash-2"), "random")
          const third = openLog(mem.service, config, seed + 2000)
          const after = scanAll(third)
          expect(after.map((r) => r.logPosition)).toEqual(before.map((r) => r.logPosition))
        }
        expect(failures, "seeds in which a write failed").toBeGreaterThanOrEqual(Math.ceil(SEEDS * 0.75))
      })
    }
  }

  it("a failure on the first write of a batch leaves the acknowledged data after a crash, and the failed batch whole or not at all", () => {
    for (const faults of [{ writeError: 1 }, { syncError: 1 }] satisfies Array<MemoryDiskFaults>) {
      const prng = new Prng(7)
      const mem = new MemoryDisk({ prng: prng.fork("disk") })
      const config = logConfig({ chunkSize: 1024 })
      const log = openLog(mem.service, config)
      const acked: Array<Placed> = []
      for (let i = 0; i < 5; i++) {
        const units = [{ records: [eventOfSize(prng, 150)] }]
        const batch = log.prepare(units)
        Effect.runSync(log.write(batch))
        acked.push({ records: units[0]!.records, positions: batch.positions[0]! })
      }
      mem.setFaults(faults)
      const failed = [{ records: [eventOfSize(prng, 150)] }]
      const failedBatch = log.prepare(failed)
      expect(failureTag(Effect.runSyncExit(log.write(failedBatch)))).toBe("StorageFailed")
      mem.setFaults(undefined)
      mem.crash(prng.fork("crash"), "random")
      const again = openLog(mem.service, config)
      // Never acknowledged, so indeterminate: a failed sync may still have left its bytes on disk, whole (kept,
      // as any synced record past the checkpoint) or torn (cut).
      const kept = again.writerPosition() === 900
      if (!kept) expect(again.writerPosition()).toBe(750)
      if (faults.writeError === 1) expect(kept).toBe(false)
      const all = expectReadable(
        again,
        kept ? [...acked, { records: failed[0]!.records, positions: failedBatch.positions[0]! }] : acked
      )
      expect(all.length).toBe(kept ? 6 : 5)
    }
  })

  it("a write built before the failure but run after it is refused too", () => {
    const prng = new Prng(8)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024 }))
    const batch = log.prepare([{ records: [eventOfSize(prng, 150)] }])
    const built = log.write(batch)
    mem.setFaults({ writeError: 1 })
    expect(failureTag(Effect.runSyncExit(log.write(batch)))).toBe("StorageFailed")
    mem.setFaults(undefined)
    expect(failureTag(Effect.runSyncExit(built))).toBe("StorageFailed")
    expect(log.writerPosition()).toBe(0)
    expect(mem.readFileSync("/db/chunk-000000.000000").length).toBe(128)
  })

  it("read errors fail the read (a DiskError) but do not stop the log", () => {
    const prng = new Prng(9)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, logConfig({ chunkSize: 1024, cacheBytes: 0 }))
    const batch = log.prepare([{ records: [eventOfSize(prng, 150)] }])
    Effect.runSync(log.write(batch))
    mem.setFaults({ readError: 1 })
    expect(failureTag(Effect.runSyncExit(log.readRecord(0, log.writerPosition())))).toBe("DiskError")
    expect(failureTag(Effect.runSyncExit(log.scanForward(0, log.writerPosition(), 10)))).toBe("DiskError")
    mem.setFaults(undefined)
    expect(log.failed()).toBeUndefined()
    Effect.runSync(log.write(log.prepare([{ records: [eventOfSize(prng, 150)] }])))
    expect(scanAll(log).length).toBe(2)
  })
})
