import { assert, it as effectIt } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, TestClock } from "effect"
import { describe, expect, it } from "vitest"
import type { DiskError } from "../src/Disk.js"
import { MemoryDisk, type MemoryDiskFaults } from "../src/MemoryDisk.js"
import { Prng } from "../src/Prng.js"
import { expectReason } from "./diskContract.js"

const run = <A>(effect: Effect.Effect<A, DiskError>): A => Effect.runSync(effect)
const N = 2000

const diskWith = (seed: number, faults?: MemoryDiskFaults, capacityBytes?: number) => {
  const disk = new MemoryDisk({ prng: new Prng(seed), faults, capacityBytes })
  run(disk.service.mkdir("/d"))
  const h = run(disk.service.open("/d/f", { create: true }))
  disk.faulty = false
  run(disk.service.syncDir("/d"))
  disk.faulty = true
  return { disk, h }
}

/** Which of N calls failed, as a string of 0/1. */
const pattern = (attempt: (i: number) => Effect.Effect<unknown, DiskError>) => {
  let out = ""
  for (let i = 0; i < N; i++) out += Exit.isFailure(Effect.runSyncExit(attempt(i))) ? "1" : "0"
  return out
}
const ones = (s: string) => s.split("").filter((c) => c === "1").length

describe("MemoryDisk faults", () => {
  it("readError fires at its probability, deterministically per seed, with reason IOError", async () => {
    const readPattern = (seed: number) => {
      const { disk, h } = diskWith(seed)
      run(h.append(Buffer.from("abcdef")))
      disk.setFaults({ readError: 0.2 })
      return { p: pattern(() => h.read(0, 6)), disk, h }
    }
    const a = readPattern(42)
    expect(ones(a.p) / N).toBeGreaterThan(0.16)
    expect(ones(a.p) / N).toBeLessThan(0.24)
    expect(a.disk.stats.faultsInjected).toBe(ones(a.p))
    expect(readPattern(42).p).toBe(a.p)
    expect(readPattern(43).p).not.toBe(a.p)
    a.disk.setFaults({ readError: 1 })
    const e = await expectReason(a.h.read(0, 1), "IOError")
    expect(e.message).toContain("EIO")
  })

  it("writeError fires at its probability and a failed write writes nothing", () => {
    const writePattern = (seed: number) => {
      const { disk, h } = diskWith(seed, { writeError: 0.1 })
      const p = pattern((i) => h.append(Buffer.from([i & 0xff])))
      return { p, disk }
    }
    const a = writePattern(7)
    expect(ones(a.p) / N).toBeGreaterThan(0.07)
    expect(ones(a.p) / N).toBeLessThan(0.13)
    expect(writePattern(7).p).toBe(a.p)
    // Exactly the successful appends are in the file, in order, and in the unsynced log.
    const expected = [...a.p].flatMap((c, i) => (c === "0" ? [i & 0xff] : []))
    expect([...a.disk.readFileSync("/d/f")]).toEqual(expected)
    expect(a.disk.unsyncedOps("/d/f")).toBe(expected.length)
  })

  it("a failed truncate changes nothing", async () => {
    const { disk, h } = diskWith(1)
    run(h.append(Buffer.from("keep me")))
    disk.setFaults({ writeError: 1 })
    await expectReason(h.truncate(2), "IOError")
    await expectReason(h.write(0, Buffer.from("X")), "IOError")
    expect(disk.readFileSync("/d/f").toString()).toBe("keep me")
    expect(disk.unsyncedOps("/d/f")).toBe(1)
  })

  it("syncError fires at its probability; a failed sync makes nothing durable", async () => {
    const syncPattern = (seed: number) => {
      const { disk, h } = diskWith(seed, { syncError: 0.3 })
      return pattern(() => h.sync) + pattern(() => disk.service.syncDir("/d"))
    }
    const p = syncPattern(9)
    expect(ones(p) / (2 * N)).toBeGreaterThan(0.26)
    expect(ones(p) / (2 * N)).toBeLessThan(0.34)
    expect(syncPattern(9)).toBe(p)

    const { disk, h } = diskWith(2)
    run(h.append(Buffer.from("unsynced")))
    disk.setFaults({ syncError: 1 })
    await expectReason(h.sync, "IOError")
    expect(disk.durableBytes("/d/f").length).toBe(0)
    run(Effect.flatMap(disk.service.open("/d/g", { create: true }), (g) => g.close))
    await expectReason(disk.service.syncDir("/d"), "IOError")
    disk.crash(new Prng(0), "strict")
    expect(disk.files()).toEqual(["/d/f"])
  })

  it("bitFlipOnRead flips one bit of the returned copy and never the stored bytes", () => {
    const original = Buffer.from("the quick brown fox")
    const { disk, h } = diskWith(5)
    run(h.append(original))
    disk.setFaults({ bitFlipOnRead: 1 })
    for (let i = 0; i < 200; i++) {
      const got = run(h.read(0, original.length))
      let bits = 0
      for (let j = 0; j < got.length; j++) for (let x = got[j]! ^ original[j]!; x !== 0; x &= x - 1) bits++
      expect(bits).toBe(1)
    }
    expect(disk.readFileSync("/d/f").equals(original)).toBe(true)

    const flips = (seed: number) => {
      const d = diskWith(seed, { bitFlipOnRead: 0.25 })
      run(d.h.append(original))
      return pattern(() =>
        Effect.filterOrFail(
          d.h.read(0, original.length),
          (buf) => buf.equals(original),
          () => undefined as never
        )
      )
    }
    const p = flips(11)
    expect(ones(p) / N).toBeGreaterThan(0.21)
    expect(ones(p) / N).toBeLessThan(0.29)
    expect(flips(11)).toBe(p)
  })

  it("capacityBytes: a write that would overflow fails with DiskFull and writes nothing", async () => {
    const { disk, h } = diskWith(1, undefined, 10)
    run(h.append(Buffer.from("12345678")))
    await expectReason(h.append(Buffer.from("abc")), "DiskFull")
    await expectReason(h.write(9, Buffer.from("ab")), "DiskFull")
    await expectReason(h.truncate(11), "DiskFull")
    // Overwriting in place does not grow the file.
    run(h.write(0, Buffer.from("ABCDEFGH")))
    const g = run(disk.service.open("/d/g", { create: true }))
    run(g.append(Buffer.from("xy")))
    await expectReason(g.append(Buffer.from("z")), "DiskFull")
    expect(disk.readFileSync("/d/f").toString()).toBe("ABCDEFGH")
    expect(disk.totalBytes()).toBe(10)
    run(h.truncate(4))
    run(g.append(Buffer.from("z")))
    expect(disk.totalBytes()).toBe(7)
  })

  it("faulty = false turns every fault off, and back on", () => {
    const { disk, h } = diskWith(3, { readError: 1, writeError: 1, syncError: 1, bitFlipOnRead: 1 }, 1)
    disk.faulty = false
    run(h.append(Buffer.from("healthy")))
    expect(run(h.read(0, 7)).toString()).toBe("healthy")
    run(h.sync)
    run(disk.service.syncDir("/d"))
    expect(disk.stats.faultsInjected).toBe(0)
    disk.faulty = true
    expect(Exit.isFailure(Effect.runSyncExit(h.read(0, 7)))).toBe(true)
    disk.setFaults(undefined)
    expect(run(h.read(0, 7)).toString()).toBe("healthy")
  })

  it("counts each fault by its kind, so a run can tell which kinds fired", () => {
    const { disk, h } = diskWith(5)
    const kinds = () => {
      const { readErrors, writeErrors, syncErrors, bitFlips, latencies, diskFullErrors } = disk.stats
      return { readErrors, writeErrors, syncErrors, bitFlips, latencies, diskFullErrors }
    }
    const none = { readErrors: 0, writeErrors: 0, syncErrors: 0, bitFlips: 0, latencies: 0, diskFullErrors: 0 }
    run(h.append(Buffer.from("abc")))
    disk.setFaults({ writeError: 1 })
    Effect.runSyncExit(h.append(Buffer.from("x")))
    Effect.runSyncExit(h.truncate(1))
    disk.setFaults({ readError: 1 })
    Effect.runSyncExit(h.read(0, 3))
    disk.setFaults({ syncError: 1 })
    Effect.runSyncExit(h.sync)
    Effect.runSyncExit(disk.service.syncDir("/d"))
    disk.setFaults({ bitFlipOnRead: 1 })
    run(h.read(0, 3))
    expect(kinds()).toEqual({ ...none, writeErrors: 2, readErrors: 1, syncErrors: 2, bitFlips: 1 })
    disk.setFaults(undefined)
    disk.capacityBytes = 3
    Effect.runSyncExit(h.append(Buffer.from("y")))
    expect(kinds().diskFullErrors).toBe(1)
    expect(disk.stats.faultsInjected).toBe(7)
  })
})

describe("MemoryDisk latency", () => {
  effectIt.effect("sleeps on Effect's Clock before the operation", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk({ prng: new Prng(1), faults: { latencyMs: { min: 10, max: 10 } } })
      const fiber = yield* Effect.fork(disk.service.syncDir("/"))
      yield* TestClock.adjust("9 millis")
      assert.isTrue((yield* Fiber.poll(fiber))._tag === "None")
      assert.strictEqual(disk.stats.dirSyncs, 0)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      assert.strictEqual(disk.stats.dirSyncs, 1)
      assert.strictEqual(disk.stats.latencies, 1)
    })
  )

  effectIt.effect("latencyChance decides which operations wait, and the range is respected", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk({ prng: new Prng(2), faults: { latencyMs: { min: 1, max: 5 }, latencyChance: 0.5 } })
      const timed = Effect.map(Effect.timed(disk.service.syncDir("/")), ([d]) => Duration.toMillis(d))
      const fiber = yield* Effect.fork(Effect.forEach(Array.from({ length: 200 }), () => timed))
      while ((yield* Fiber.poll(fiber))._tag === "None") yield* TestClock.adjust("1 millis")
      const durations = yield* Fiber.join(fiber)
      const delayed = durations.filter((ms) => ms > 0)
      assert.isTrue(delayed.length > 70 && delayed.length < 130, `delayed ${delayed.length}`)
      assert.isTrue(delayed.every((ms) => ms >= 1 && ms <= 5))
      assert.deepStrictEqual(new Set(delayed).size, 5)
      assert.strictEqual(disk.stats.faultsInjected, delayed.length)
    })
  )
})
