// Effect's own time-based combinators must run on the sim clock, synchronously, with no real time.
import { Cause, Clock, Deferred, Effect, Either, Exit, Fiber, Logger, Queue, Random, Ref, Schedule } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { DEFAULT_SIM_EPOCH_MS } from "../src/sim/SimClock.js"
import { runSim, SimRunError } from "../src/sim/SimRuntime.js"

const HOUR = 3_600_000

const ok = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  throw new Error(`expected success, got ${String(exit.cause)}`)
}

describe("Effect under the sim clock", () => {
  afterEach(() => vi.restoreAllMocks())

  it("a one-hour sleep completes in milliseconds of wall time", () => {
    const wall0 = performance.now()
    const t = ok(runSim(Effect.sleep("1 hour").pipe(Effect.andThen(Clock.currentTimeMillis)), { seed: 1 }))
    expect(t).toBe(DEFAULT_SIM_EPOCH_MS + HOUR)
    expect(performance.now() - wall0).toBeLessThan(500)
  })

  it("Clock.currentTimeMillis advances only through timers", () => {
    const program = Effect.gen(function* () {
      const t0 = yield* Clock.currentTimeMillis
      let acc = 0
      for (let i = 0; i < 200_000; i++) acc += i
      yield* Effect.forEach(Array.from({ length: 5000 }), () => Effect.yieldNow(), { discard: true })
      const t1 = yield* Clock.currentTimeMillis
      yield* Effect.sleep("250 millis")
      const t2 = yield* Clock.currentTimeMillis
      const n = yield* Clock.currentTimeNanos
      return { d1: t1 - t0, d2: t2 - t1, nanosOk: n === BigInt(t2) * 1_000_000n, acc: acc > 0 }
    })
    expect(ok(runSim(program, { seed: 1 }))).toEqual({ d1: 0, d2: 250, nanosOk: true, acc: true })
  })

  it("Effect.timeout: the slow effect times out at the right simulated instant", () => {
    const program = Effect.gen(function* () {
      const t0 = yield* Clock.currentTimeMillis
      const slow = yield* Effect.sleep("2 hours").pipe(Effect.as("slow"), Effect.timeout("30 minutes"), Effect.either)
      const t1 = yield* Clock.currentTimeMillis
      const fast = yield* Effect.sleep("1 second").pipe(Effect.as("fast"), Effect.timeout("30 minutes"))
      const t2 = yield* Clock.currentTimeMillis
      return { slowTimedOut: Either.isLeft(slow), fast, d1: t1 - t0, d2: t2 - t1 }
    })
    expect(ok(runSim(program, { seed: 2 }))).toEqual({ slowTimedOut: true, fast: "fast", d1: 30 * 60_000, d2: 1000 })
  })

  it("Schedule.spaced repeats on simulated time", () => {
    const program = Effect.gen(function* () {
      const ticks = yield* Ref.make<Array<number>>([])
      const t0 = yield* Clock.currentTimeMillis
      yield* Clock.currentTimeMillis.pipe(
        Effect.flatMap((t) => Ref.update(ticks, (xs) => [...xs, t - t0])),
        Effect.repeat(Schedule.spaced("1 minute").pipe(Schedule.compose(Schedule.recurs(59))))
      )
      return yield* Ref.get(ticks)
    })
    const ticks = ok(runSim(program, { seed: 3 }))
    expect(ticks.length).toBe(60)
    expect(ticks).toEqual(Array.from({ length: 60 }, (_, i) => i * 60_000))
  })

  it("Effect.race: the earlier timer wins and the loser's timer is cancelled", () => {
    const program = Effect.gen(function* () {
      const t0 = yield* Clock.currentTimeMillis
      const winner = yield* Effect.race(
        Effect.sleep("2 seconds").pipe(Effect.as("slow")),
        Effect.sleep("1 second").pipe(Effect.as("fast"))
      )
      const t1 = yield* Clock.currentTimeMillis
      return { winner, d: t1 - t0 }
    })
    expect(ok(runSim(program, { seed: 4 }))).toEqual({ winner: "fast", d: 1000 })
  })

  it("Queue, Deferred and Fiber.join work between fibers on one node", () => {
    const program = Effect.gen(function* () {
      const q = yield* Queue.bounded<number>(2)
      const gate = yield* Deferred.make<string>()
      const producer = yield* Effect.fork(
        Effect.forEach([1, 2, 3, 4, 5], (i) => Effect.sleep(10).pipe(Effect.andThen(Queue.offer(q, i))), {
          discard: true
        })
      )
      const consumer = yield* Effect.fork(
        Effect.gen(function* () {
          let sum = 0
          for (let i = 0; i < 5; i++) sum += yield* Queue.take(q)
          yield* Deferred.succeed(gate, `sum=${sum}`)
          return sum
        })
      )
      const msg = yield* Deferred.await(gate)
      yield* Fiber.join(producer)
      const sum = yield* Fiber.join(consumer)
      const t = yield* Clock.currentTimeMillis
      return { msg, sum, t: t - DEFAULT_SIM_EPOCH_MS }
    })
    expect(ok(runSim(program, { seed: 5 }))).toEqual({ msg: "sum=15", sum: 15, t: 50 })
  })

  it("Random is seeded per world: same seed same draws, different seed different draws", () => {
    const draws = Effect.forEach(Array.from({ length: 8 }), () => Random.nextInt)
    const a = ok(runSim(draws, { seed: 42 }))
    const b = ok(runSim(draws, { seed: 42 }))
    const c = ok(runSim(draws, { seed: 43 }))
    expect(a).toEqual(b)
    expect(a).not.toEqual(c)
  })

  it("failures and defects come back as the Exit", () => {
    expect(runSim(Effect.fail("boom"), { seed: 1 })).toEqual(Exit.fail("boom"))
    const exit = runSim(Effect.sleep(5).pipe(Effect.andThen(Effect.die(new Error("bad")))), { seed: 1 })
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
  })

  it("deadlock: a fiber waiting on something nobody will complete is reported, not hung", () => {
    const stuck = Effect.gen(function* () {
      const d = yield* Deferred.make<void>()
      yield* Effect.sleep("1 minute")
      yield* Deferred.await(d)
    })
    expect(() => runSim(stuck, { seed: 1 })).toThrow(SimRunError)
    expect(() => runSim(stuck, { seed: 1 })).toThrow(/deadlock.*after 60000 simulated ms/)
  })

  it("budgets: simulated time and steps", () => {
    try {
      runSim(Effect.sleep("2 hours"), { seed: 1, maxSimMs: HOUR })
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(SimRunError)
      expect((e as SimRunError).reason).toBe("time-limit")
    }
    expect(() => runSim(Effect.forever(Effect.yieldNow()), { seed: 1, maxSteps: 5000 })).toThrow(/maxSteps/)
    expect(() => runSim(Effect.forever(Effect.sleep(10)), { seed: 1, maxSimMs: 1000 })).toThrow(/maxSimMs=1000/)
  })

  it("nothing escapes to real timers, microtasks or promises", () => {
    const spies = [
      vi.spyOn(globalThis, "setTimeout"),
      vi.spyOn(globalThis, "setInterval"),
      vi.spyOn(globalThis, "setImmediate"),
      vi.spyOn(globalThis, "queueMicrotask")
    ]
    // Promise.prototype.then by hand: vi.spyOn on it recurses through vitest's own promise use.
    const originalThen = Promise.prototype.then
    let thenCalls = 0
    Promise.prototype.then = function (this: Promise<unknown>, ...args: Array<any>) {
      thenCalls++
      return originalThen.apply(this, args as any)
    } as any
    const program = Effect.gen(function* () {
      const q = yield* Queue.unbounded<number>()
      const f = yield* Effect.fork(
        Effect.forEach([1, 2, 3], (i) => Queue.offer(q, i).pipe(Effect.delay("1 second")), { discard: true })
      )
      const r = yield* Effect.race(Queue.take(q), Effect.sleep("1 hour").pipe(Effect.as(-1)))
      yield* Fiber.join(f)
      yield* Effect.sleep("5 seconds").pipe(Effect.timeout("1 second"), Effect.ignore)
      yield* Effect.logDebug("log lines read the sim clock too")
      return r
    })
    let result: number
    try {
      result = ok(runSim(program, { seed: 9 }))
    } finally {
      Promise.prototype.then = originalThen
    }
    expect(result).toBe(1)
    expect(thenCalls).toBe(0)
    for (const spy of spies) expect(spy).not.toHaveBeenCalled()
  })

  it("log timestamps come from the sim clock", () => {
    const dates: Array<number> = []
    const logger = Logger.make(({ date }) => {
      dates.push(date.getTime())
    })
    const program = Effect.log("a").pipe(Effect.andThen(Effect.sleep("1 minute")), Effect.andThen(Effect.log("b")))
    ok(runSim(program.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger))), { seed: 1 }))
    expect(dates).toEqual([DEFAULT_SIM_EPOCH_MS, DEFAULT_SIM_EPOCH_MS + 60_000])
  })
})
