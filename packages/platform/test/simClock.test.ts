import { Clock, Duration, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { DEFAULT_SIM_EPOCH_MS, SimClock } from "../src/sim/SimClock.js"
import { SimScheduler } from "../src/sim/SimScheduler.js"
import { runSim, SimWorld } from "../src/sim/SimRuntime.js"

/** A fiber on a hand-driven scheduler with the given clock: the lowest-level harness. */
const forkOn = <A, E>(clock: Clock.Clock, scheduler: SimScheduler, effect: Effect.Effect<A, E>) =>
  Effect.runFork(Effect.withClock(effect, clock), { scheduler, immediate: false })

describe("SimClock", () => {
  it("starts at the 2026-01-01 epoch by default and at a chosen epoch otherwise", () => {
    expect(new SimClock().unsafeCurrentTimeMillis()).toBe(Date.UTC(2026, 0, 1))
    expect(DEFAULT_SIM_EPOCH_MS).toBe(Date.UTC(2026, 0, 1))
    const c = new SimClock({ epochMs: 1000 })
    expect(c.unsafeCurrentTimeMillis()).toBe(1000)
    expect(c.unsafeCurrentTimeNanos()).toBe(1000n * 1_000_000n)
    expect(Effect.runSync(c.currentTimeMillis)).toBe(1000)
    expect(Effect.runSync(c.currentTimeNanos)).toBe(1_000_000_000n)
  })

  it("fires timers in (due time, insertion) order, one instant per advanceToNext", () => {
    const clock = new SimClock({ epochMs: 0 })
    const sched = new SimScheduler()
    const log: Array<string> = []
    const sleeper = (name: string, ms: number) =>
      forkOn(
        clock,
        sched,
        Effect.sleep(ms).pipe(
          Effect.andThen(Clock.currentTimeMillis),
          Effect.map((t) => log.push(`${name}@${t}`))
        )
      )
    sleeper("c", 30)
    sleeper("a1", 10)
    sleeper("b", 20)
    sleeper("a2", 10)
    expect(clock.pendingTimers).toBe(0) // nothing ran yet: immediate: false
    sched.runUntilIdle()
    expect(clock.pendingTimers).toBe(4)
    expect(clock.nextDue()).toBe(10)

    expect(clock.advanceToNext()).toBe(true)
    expect(clock.currentMillis).toBe(10)
    expect(clock.pendingTimers).toBe(2) // both timers due at 10 fired
    expect(log).toEqual([]) // firing only queues the fibers
    sched.runUntilIdle()
    expect(log).toEqual(["a1@10", "a2@10"])

    while (clock.advanceToNext()) sched.runUntilIdle()
    expect(log).toEqual(["a1@10", "a2@10", "b@20", "c@30"])
    expect(clock.advanceToNext()).toBe(false)
    expect(clock.nextDue()).toBeUndefined()
    expect(clock.firedCount).toBe(4)
  })

  it("advanceBy fires everything due on the way and never moves time backwards", () => {
    const clock = new SimClock({ epochMs: 100 })
    const sched = new SimScheduler()
    const done: Array<number> = []
    for (const ms of [5, 50, 500]) forkOn(clock, sched, Effect.sleep(ms).pipe(Effect.map(() => done.push(ms))))
    sched.runUntilIdle()
    expect(clock.advanceBy(60)).toBe(2)
    expect(clock.currentMillis).toBe(160)
    sched.runUntilIdle()
    expect(done).toEqual([5, 50])
    clock.advanceTo(10)
    expect(clock.currentMillis).toBe(160)
    expect(() => clock.advanceBy(-1)).toThrow(RangeError)
    expect(clock.pendingTimers).toBe(1)
  })

  it("interrupting a sleeping fiber removes its timer", () => {
    const clock = new SimClock({ epochMs: 0 })
    const sched = new SimScheduler()
    let woke = false
    const fibers = [10, 20, 30, 40, 50].map((ms) =>
      forkOn(
        clock,
        sched,
        Effect.sleep(ms).pipe(
          Effect.map(() => {
            woke = ms === 30
          })
        )
      )
    )
    sched.runUntilIdle()
    expect(clock.pendingTimers).toBe(5)
    fibers[2].unsafeInterruptAsFork(fibers[2].id())
    sched.runUntilIdle()
    expect(clock.pendingTimers).toBe(4)
    expect(fibers[2].unsafePoll()).not.toBeNull()
    expect(Exit.isInterrupted(fibers[2].unsafePoll()!)).toBe(true)
    const dues: Array<number> = []
    while (clock.nextDue() !== undefined) {
      dues.push(clock.nextDue()!)
      clock.advanceToNext()
      sched.runUntilIdle()
    }
    expect(dues).toEqual([10, 20, 40, 50]) // heap order intact after removal from the middle
    expect(woke).toBe(false)
  })

  it("keeps heap order under many random inserts and cancels", () => {
    const clock = new SimClock({ epochMs: 0 })
    const sched = new SimScheduler()
    const fired: Array<number> = []
    const fibers: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
    let x = 12345
    const rnd = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 1000
    for (let i = 0; i < 500; i++) {
      const ms = rnd()
      fibers.push(
        forkOn(
          clock,
          sched,
          Effect.sleep(ms).pipe(
            Effect.andThen(Clock.currentTimeMillis),
            Effect.map((t) => fired.push(t))
          )
        )
      )
    }
    sched.runUntilIdle()
    for (let i = 0; i < 500; i += 3) fibers[i].unsafeInterruptAsFork(fibers[i].id())
    sched.runUntilIdle()
    expect(clock.pendingTimers).toBe(500 - 167)
    while (clock.advanceToNext()) sched.runUntilIdle()
    expect(fired.length).toBe(333)
    expect([...fired].sort((a, b) => a - b)).toEqual(fired)
  })

  it("offset views share the queue and shift only wall time", () => {
    const clock = new SimClock({ epochMs: 1_000 })
    const sched = new SimScheduler()
    const skewed = clock.withOffset(-250)
    expect(skewed.unsafeCurrentTimeMillis()).toBe(750)
    let seen = 0
    forkOn(
      skewed,
      sched,
      Effect.sleep(100).pipe(
        Effect.andThen(Clock.currentTimeMillis),
        Effect.map((t) => {
          seen = t
        })
      )
    )
    sched.runUntilIdle()
    expect(clock.pendingTimers).toBe(1)
    clock.advanceToNext()
    sched.runUntilIdle()
    expect(clock.currentMillis).toBe(1_100)
    expect(seen).toBe(850)
    skewed.offsetMs = 10.7
    expect(skewed.unsafeCurrentTimeNanos()).toBe(1_110n * 1_000_000n)
  })

  it("cancelOwner drops that owner's timers and ignores its later sleeps", () => {
    const clock = new SimClock({ epochMs: 0 })
    const sched = new SimScheduler()
    const a = clock.view({ owner: clock.allocateOwner() })
    const b = clock.view({ owner: clock.allocateOwner() })
    const log: Array<string> = []
    forkOn(a, sched, Effect.sleep(10).pipe(Effect.map(() => log.push("a"))))
    forkOn(b, sched, Effect.sleep(20).pipe(Effect.map(() => log.push("b"))))
    sched.runUntilIdle()
    expect(clock.cancelOwner(a.owner)).toBe(1)
    forkOn(a, sched, Effect.sleep(5).pipe(Effect.map(() => log.push("a-late"))))
    sched.runUntilIdle()
    expect(clock.pendingTimers).toBe(1)
    while (clock.advanceToNext()) sched.runUntilIdle()
    expect(log).toEqual(["b"])
    expect(() => clock.cancelOwner(0)).toThrow()
  })

  it("rounds sub-millisecond sleeps up, runs zero sleeps at the same instant, never fires beyond setTimeout's limit", () => {
    const program = Effect.gen(function* () {
      const t0 = yield* Clock.currentTimeMillis
      yield* Effect.sleep(Duration.micros(300n))
      const t1 = yield* Clock.currentTimeMillis
      yield* Effect.sleep(0)
      const t2 = yield* Clock.currentTimeMillis
      yield* Effect.sleep(Duration.nanos(2_500_000n))
      const t3 = yield* Clock.currentTimeMillis
      return [t1 - t0, t2 - t1, t3 - t2]
    })
    expect(runSim(program, { seed: 1 })).toEqual(Exit.succeed([1, 0, 3]))
    expect(() => runSim(Effect.sleep(Duration.infinity), { seed: 1 })).toThrow(/deadlock/)
    expect(() => runSim(Effect.sleep(Duration.days(30)), { seed: 1 })).toThrow(/deadlock/)
    expect(Exit.isSuccess(runSim(Effect.sleep(Duration.days(24)), { seed: 1 }))).toBe(true)
  })

  it("raw timers: schedule/cancelTimer without fibers, ordered with sleeps", () => {
    const clock = new SimClock({ epochMs: 0 })
    const log: Array<string> = []
    const t1 = clock.schedule(20, () => log.push("t20"))
    clock.schedule(10, () => log.push("t10"))
    const t3 = clock.schedule(10, () => log.push("t10-cancelled"))
    clock.schedule(0.2, () => log.push("t1"))
    expect(t1.due).toBe(20)
    expect(clock.cancelTimer(t3)).toBe(true)
    expect(clock.cancelTimer(t3)).toBe(false)
    expect(clock.advanceTo(15)).toBe(2)
    expect(log).toEqual(["t1", "t10"])
    expect(clock.cancelTimer(t1)).toBe(true)
    expect(clock.advanceToNext()).toBe(false)
    const owner = clock.allocateOwner()
    clock.schedule(5, () => log.push("owned"), owner)
    clock.cancelOwner(owner)
    const late = clock.schedule(5, () => log.push("owned-late"), owner)
    expect(clock.cancelTimer(late)).toBe(false)
    clock.advanceBy(100)
    expect(log).toEqual(["t1", "t10"])
  })

  it("timers of interrupted sleeps do not hold time: timeout, race, interrupt with a sleeping finalizer", () => {
    const world = new SimWorld({ seed: 1, epochMs: 0 })
    const fast = world.fork("n", Effect.sleep(10).pipe(Effect.timeout("1 hour")))
    const race = world.fork("n", Effect.race(Effect.sleep("2 hours"), Effect.sleep(20)))
    const finals: Array<number> = []
    const victim = world.fork(
      "n",
      Effect.sleep("3 hours").pipe(
        Effect.onInterrupt(() =>
          Effect.sleep(7).pipe(
            Effect.andThen(Clock.currentTimeMillis),
            Effect.map((t) => finals.push(t))
          )
        )
      )
    )
    world.run({ maxSimMs: 0 })
    expect(world.clock.pendingTimers).toBe(5)
    victim.unsafeInterruptAsFork(victim.id())
    world.run({ maxSimMs: 0 })
    expect(world.clock.pendingTimers).toBe(5) // the 3-hour timer went when the finalizer's 7 ms one came
    const r = world.run()
    expect(r.reason).toBe("quiescent")
    expect(world.now).toBe(20) // not 1 hour, 2 hours or 3 hours
    expect(world.clock.pendingTimers).toBe(0)
    expect(finals).toEqual([7])
    expect(Exit.isSuccess(fast.unsafePoll()!)).toBe(true)
    expect(Exit.isSuccess(race.unsafePoll()!)).toBe(true)
    expect(Exit.isInterrupted(victim.unsafePoll()!)).toBe(true)
  })
})
