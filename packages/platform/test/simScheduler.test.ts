import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { SimLivelockError, SimScheduler } from "../src/sim/SimScheduler.js"
import { SimClock } from "../src/sim/SimClock.js"

describe("SimScheduler", () => {
  it("runs lower priority numbers first, FIFO within a priority, one task per step", () => {
    const s = new SimScheduler({ name: "n1" })
    const log: Array<string> = []
    s.scheduleTask(() => log.push("p0-a"), 0)
    s.scheduleTask(() => log.push("p5-a"), 5)
    s.scheduleTask(() => log.push("p-1"), -1)
    s.scheduleTask(() => log.push("p0-b"), 0)
    s.scheduleTask(() => log.push("p5-b"), 5)
    expect(s.pending).toBe(5)
    expect(s.step()).toBe(true)
    expect(log).toEqual(["p-1"])
    expect(s.runUntilIdle()).toBe(4)
    expect(log).toEqual(["p-1", "p0-a", "p0-b", "p5-a", "p5-b"])
    expect(s.step()).toBe(false)
    expect(s.pending).toBe(0)
    expect(s.tasksRun).toBe(5)
  })

  it("keeps FIFO order across ring-buffer growth and wrap-around", () => {
    const s = new SimScheduler()
    const out: Array<number> = []
    let next = 0
    for (let i = 0; i < 3000; i++) s.scheduleTask(() => out.push(next++), 0)
    expect(s.runSlice(2000)).toBe(2000)
    for (let i = 0; i < 3000; i++) s.scheduleTask(() => out.push(next++), 0)
    s.runUntilIdle()
    expect(out).toEqual(Array.from({ length: 6000 }, (_, i) => i))
  })

  it("paused: tasks stay queued until resumed", () => {
    const s = new SimScheduler()
    let ran = 0
    s.scheduleTask(() => ran++, 0)
    s.paused = true
    expect(s.step()).toBe(false)
    expect(s.runUntilIdle()).toBe(0)
    expect(s.runnable).toBe(false)
    expect(s.pending).toBe(1)
    s.paused = false
    expect(s.runUntilIdle()).toBe(1)
    expect(ran).toBe(1)
  })

  it("crash drops queued tasks and refuses new ones", () => {
    const s = new SimScheduler()
    let ran = 0
    s.scheduleTask(() => ran++, 0)
    s.crash()
    s.scheduleTask(() => ran++, 0)
    expect(s.pending).toBe(0)
    expect(s.isCrashed).toBe(true)
    expect(s.runUntilIdle()).toBe(0)
    expect(ran).toBe(0)
  })

  it("runUntilIdle throws a clear livelock error when work never ends", () => {
    const s = new SimScheduler({ name: "busy" })
    const again = (): void => s.scheduleTask(again, 0)
    s.scheduleTask(again, 0)
    expect(() => s.runUntilIdle(1000)).toThrow(SimLivelockError)
    expect(() => s.runUntilIdle(1000)).toThrow(/"busy" still had runnable tasks after 1000 tasks/)
    // Finishing exactly at the budget is not a livelock.
    const t = new SimScheduler()
    for (let i = 0; i < 10; i++) t.scheduleTask(() => {}, 0)
    expect(t.runUntilIdle(10)).toBe(10)
  })

  it("livelock guard catches Effect fibers that only ever yield", () => {
    const s = new SimScheduler({ name: "spin" })
    Effect.runFork(Effect.forever(Effect.yieldNow()), { scheduler: s, immediate: false })
    expect(() => s.runUntilIdle(10_000)).toThrow(SimLivelockError)
  })

  it("Effect.yieldNow alternates fibers in FIFO order", () => {
    const s = new SimScheduler()
    const log: Array<string> = []
    const worker = (name: string) =>
      Effect.forEach(
        [1, 2, 3],
        (i) => Effect.sync(() => log.push(`${name}${i}`)).pipe(Effect.andThen(Effect.yieldNow())),
        { discard: true }
      )
    Effect.runFork(worker("a"), { scheduler: s, immediate: false })
    Effect.runFork(worker("b"), { scheduler: s, immediate: false })
    s.runUntilIdle()
    expect(log).toEqual(["a1", "b1", "a2", "b2", "a3", "b3"])
  })

  it("long computations are cut by shouldYield so other fibers interleave", () => {
    const run = (maxOpsBeforeYield?: number) => {
      const s = new SimScheduler(maxOpsBeforeYield === undefined ? {} : { maxOpsBeforeYield })
      const log: Array<string> = []
      const loop = (name: string) =>
        Effect.forEach(Array.from({ length: 5000 }), () => Effect.sync(() => log.push(name)), { discard: true })
      Effect.runFork(loop("a"), { scheduler: s, immediate: false })
      Effect.runFork(loop("b"), { scheduler: s, immediate: false })
      const tasks = s.runUntilIdle()
      let switches = 0
      for (let i = 1; i < log.length; i++) if (log[i] !== log[i - 1]) switches++
      return { switches, tasks, n: log.length }
    }
    const dflt = run()
    expect(dflt.n).toBe(10_000)
    expect(dflt.switches).toBeGreaterThan(2) // 2048 ops per slice by default
    const fine = run(50)
    expect(fine.switches).toBeGreaterThan(dflt.switches * 10)
  })

  it("timer wake-ups are queued on the sleeping fiber's own scheduler", () => {
    const clock = new SimClock({ epochMs: 0 })
    const a = new SimScheduler({ name: "a" })
    const b = new SimScheduler({ name: "b" })
    const log: Array<string> = []
    Effect.runFork(Effect.withClock(Effect.sleep(10).pipe(Effect.map(() => log.push("a"))), clock), {
      scheduler: a,
      immediate: false
    })
    Effect.runFork(Effect.withClock(Effect.sleep(10).pipe(Effect.map(() => log.push("b"))), clock), {
      scheduler: b,
      immediate: false
    })
    a.runUntilIdle()
    b.runUntilIdle()
    clock.advanceToNext()
    expect([a.pending, b.pending]).toEqual([1, 1])
    b.runUntilIdle()
    expect(log).toEqual(["b"])
    a.runUntilIdle()
    expect(log).toEqual(["b", "a"])
  })
})
