/**
 * The log heals after a failed write: the failed batch is never acknowledged, writes are refused until
 * `recover` has put the log back where the last acknowledged batch left it (durably), and then they go on
 * without a restart. A power cut anywhere — in the failed write, in a recovery that fails part way, right
 * after recovery — leaves every acknowledged record and, of the failed batch, at most whole units; once
 * recovery has succeeded, none of them.
 */
import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { MemoryDisk, Prng } from "@vellum/platform"
import type { StorageFailed } from "../src/errors.js"
import { framedLength, type NewRecord } from "../src/log/records.js"
import type { TransactionLog, WriteUnit } from "../src/log/TransactionLog.js"
import {
  SEEDS_SCALE,
  flatten,
  type Placed,
  eventOfSize,
  logConfig,
  openLog,
  powerCutDisk,
  randomRecord,
  sealUnit,
  sameRecord,
  scanAll,
  type PowerCut
} from "./log-support.js"

const SEEDS = 60 * SEEDS_SCALE

/** Units that often fill or complete a chunk, so one batch crosses chunk boundaries. */
const unitsFor = (prng: Prng, cs: number): Array<WriteUnit> =>
  Array.from({ length: prng.int(1, 5) }, () => {
    const records: Array<NewRecord> = []
    let size = 0
    for (let i = prng.int(1, 3); i > 0; i--) {
      const r = prng.chance(0.3)
        ? eventOfSize(prng, prng.int(74, Math.floor(cs / 2)))
        : randomRecord(prng, Math.floor(cs / 5))
      if (size + framedLength(r) > cs) break
      size += framedLength(r)
      records.push(r)
    }
    return { records: sealUnit(records), completeChunkAfter: prng.chance(0.1) }
  })

const failureOf = (exit: Exit.Exit<unknown, StorageFailed>): StorageFailed | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined

const write = (log: TransactionLog, units: ReadonlyArray<WriteUnit>) => {
  const batch = log.prepare(units)
  const exit = Effect.runSyncExit(log.write(batch))
  return { exit, placed: units.map((u, i): Placed => ({ records: u.records, positions: batch.positions[i]! })), batch }
}

/** The log holds the acknowledged records and then, at most, whole units of the failed batch; nothing else. */
const expectLog = (log: TransactionLog, acked: ReadonlyArray<Placed>, failed: ReadonlyArray<Placed>) => {
  const all = scanAll(log, 7)
  const expected = flatten(acked)
  expected.forEach((w, i) =>
    expect(all[i] !== undefined && sameRecord(all[i]!, w.record, w.position), `acknowledged record ${i}`).toBe(true)
  )
  let at = expected.length
  for (const unit of failed) {
    if (at >= all.length) break
    unit.records.forEach((record, k) => {
      expect(
        all[at + k] !== undefined && sameRecord(all[at + k]!, record, unit.positions[k]!),
        "a unit of the failed batch is whole or absent"
      ).toBe(true)
    })
    at += unit.records.length
  }
  expect(at, "nothing but acknowledged records and whole units of the failed batch").toBe(all.length)
  const back = Effect.runSync(log.scanBackward(log.writerPosition(), log.writerPosition(), 1_000_000)).records
  expect(back.map((r) => r.logPosition)).toEqual(all.map((r) => r.logPosition).reverse())
  return all
}

const cutAfter = (cut: PowerCut, ops: number) => {
  cut.budget = cut.used + ops
  cut.cutAt = undefined
}

describe("transaction log: healing after a failed write", () => {
  for (const preallocate of [false, true]) {
    it(`a write failing at any disk operation, then recovery failing at any step, power cuts between (preallocate ${preallocate})`, () => {
      const outcomes = { healed: 0, crashedInRecovery: 0, crashedBeforeRecovery: 0, rolledBackChunks: 0 }
      for (let seed = 1; seed <= SEEDS; seed++) {
        const prng = new Prng(seed)
        const mem = new MemoryDisk({ prng: prng.fork("disk") })
        const cut: PowerCut = { budget: Number.POSITIVE_INFINITY, used: 0, cutAt: undefined }
        const config = logConfig({ chunkSize: prng.pick([512, 1024]), preallocate, verifyOnOpen: true })
        let log = openLog(powerCutDisk(mem, cut), config, seed)
        const acked: Array<Placed> = []
        for (let b = prng.int(0, 5); b > 0; b--) {
          const { exit, placed } = write(log, unitsFor(prng, config.chunkSize))
          expect(Exit.isSuccess(exit)).toBe(true)
          acked.push(...placed)
        }
        const before = log.writerPosition()
        const chunksBefore = log.chunks().length
        cutAfter(cut, prng.int(0, 30))
        const failing = write(log, unitsFor(prng, config.chunkSize))
        if (Exit.isSuccess(failing.exit)) {
          acked.push(...failing.placed)
          continue
        }
        const failure = failureOf(failing.exit)!
        expect(failure._tag).toBe("StorageFailed")
        expect(failure.reason).toBe("IOError")
        expect(failure.message).not.toContain("/db")
        expect(failure.detail).toContain("/db")
        if (log.chunks().length > chunksBefore) outcomes.rolledBackChunks++
        // Refused until recovered, even on a healthy disk.
        cut.budget = Number.POSITIVE_INFINITY
        expect(failureOf(write(log, [{ records: [eventOfSize(prng, 90)] }]).exit)?._tag).toBe("StorageFailed")

        const plan = prng.pick(["crash", "partial recovery, crash", "heal"] as const)
        let healed = false
        if (plan === "partial recovery, crash") {
          cutAfter(cut, prng.int(0, 12))
          healed = Exit.isSuccess(Effect.runSyncExit(log.recover))
        }
        if (plan !== "heal") {
          mem.crash(prng.fork("crash"), prng.chance(0.3) ? "strict" : "random")
          cut.budget = Number.POSITIVE_INFINITY
          log = openLog(powerCutDisk(mem, cut), config, seed + 1000)
          expectLog(log, acked, healed ? [] : failing.placed)
          if (healed) outcomes.healed++
          else if (plan === "crash") outcomes.crashedBeforeRecovery++
          else outcomes.crashedInRecovery++
          continue
        }
        Effect.runSync(log.recover)
        outcomes.healed++
        expect(log.failure()).toBeUndefined()
        expect(log.writerPosition()).toBe(before)
        expectLog(log, acked, [])
        // Writes go on where the acknowledged ones stopped, across rollovers (footers from the restored
        // running checksum, which verifyOnOpen checks below).
        for (let b = prng.int(1, 6); b > 0; b--) {
          const { exit, placed } = write(log, unitsFor(prng, config.chunkSize))
          expect(Exit.isSuccess(exit)).toBe(true)
          acked.push(...placed)
        }
        expectLog(log, acked, [])
        mem.crash(prng.fork("crash-after"), prng.chance(0.3) ? "strict" : "random")
        log = openLog(powerCutDisk(mem, cut), config, seed + 2000)
        expectLog(log, acked, [])
      }
      const total = outcomes.healed + outcomes.crashedInRecovery + outcomes.crashedBeforeRecovery
      expect(total, JSON.stringify(outcomes)).toBeGreaterThanOrEqual(SEEDS / 2)
      expect(outcomes.rolledBackChunks, JSON.stringify(outcomes)).toBeGreaterThan(0)
      expect(outcomes.crashedInRecovery, JSON.stringify(outcomes)).toBeGreaterThan(0)
    })
  }

  it("a full disk: the append fails with DiskFull, keeps failing while full, and once space is freed recovery lets the next append in", () => {
    for (const preallocate of [false, true]) {
      const prng = new Prng(3)
      const mem = new MemoryDisk({ prng: prng.fork("disk") })
      const config = logConfig({ chunkSize: 1024, preallocate })
      let log = openLog(mem.service, config)
      const acked: Array<Placed> = []
      for (let i = 0; i < 3; i++) {
        const { exit, placed } = write(log, [{ records: [eventOfSize(prng, 200)] }])
        expect(Exit.isSuccess(exit)).toBe(true)
        acked.push(...placed)
      }
      // No room for another chunk: the batch that needs one fails.
      mem.capacityBytes = mem.totalBytes() + (preallocate ? 0 : 300)
      let failure: StorageFailed | undefined
      for (let i = 0; i < 10 && failure === undefined; i++) {
        const { exit, placed } = write(log, [{ records: [eventOfSize(prng, 300)] }])
        failure = failureOf(exit)
        if (failure === undefined) acked.push(...placed)
      }
      expect(failure?.reason).toBe("DiskFull")
      expect(failure?.message).toBe("the disk is full: writes are refused until space is freed")
      // Recovery itself needs no new space, but writes still find the disk full.
      Effect.runSync(log.recover)
      expect(failureOf(write(log, [{ records: [eventOfSize(prng, 300)] }]).exit)?.reason).toBe("DiskFull")
      expect(failureOf(write(log, [{ records: [eventOfSize(prng, 100)] }]).exit)?.reason).toBe("DiskFull")
      mem.capacityBytes = undefined
      Effect.runSync(log.recover)
      const later = write(log, [{ records: [eventOfSize(prng, 300)] }])
      expect(Exit.isSuccess(later.exit)).toBe(true)
      acked.push(...later.placed)
      mem.crash(prng.fork("crash"), "random")
      log = openLog(mem.service, config, 2)
      const all = expectLog(log, acked, [])
      expect(all.length).toBe(flatten(acked).length)
    }
  })
})
