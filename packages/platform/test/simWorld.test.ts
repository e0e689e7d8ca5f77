import { Clock, Deferred, Effect, Fiber, Random } from "effect"
import { describe, expect, it } from "vitest"
import { SimWorld } from "../src/sim/SimRuntime.js"

/** Two nodes, each with a few fibers that trace, yield and sleep a random 10..12 ms. */
const chatter = (seed: number, opts: { traceSchedule?: boolean } = {}) => {
  const world = new SimWorld({ seed, traceLines: 10_000, ...opts })
  for (const node of ["n1", "n2"]) {
    for (let f = 0; f < 3; f++) {
      world.fork(
        node,
        Effect.gen(function* () {
          for (let i = 0; i < 20; i++) {
            const r = yield* Random.nextIntBetween(10, 13)
            yield* Effect.sync(() => world.trace(`${node}/${f} step ${i} r=${r}`))
            yield* Effect.yieldNow()
            yield* Effect.sync(() => world.trace(`${node}/${f} after-yield ${i}`))
            yield* Effect.sleep(r)
          }
        })
      )
    }
  }
  const result = world.run()
  return { world, result }
}

describe("SimWorld", () => {
  it("runs to quiescence and the same seed gives the same trace hash and lines", () => {
    const a = chatter(7)
    const b = chatter(7)
    expect(a.result.reason).toBe("quiescent")
    expect(a.world.traceCount).toBe(2 * 3 * 20 * 2)
    expect(a.world.traceHash).toMatch(/^[0-9a-f]{16}$/)
    expect(a.world.traceHash).toBe(b.world.traceHash)
    expect(a.world.traceLines).toEqual(b.world.traceLines)
    expect(a.world.now).toBe(b.world.now)
  })

  it("different seeds interleave the nodes differently", () => {
    const hashes = new Set<string>()
    const orders = new Set<string>()
    for (const seed of [1, 2, 3, 4, 5]) {
      const { world } = chatter(seed)
      hashes.add(world.traceHash)
      orders.add(world.traceLines.map((l) => l.split(" ")[1]).join(","))
    }
    expect(hashes.size).toBe(5)
    expect(orders.size).toBeGreaterThan(1)
  })

  it("traceSchedule folds scheduling decisions into the hash, deterministically", () => {
    expect(chatter(11, { traceSchedule: true }).world.traceHash).toBe(
      chatter(11, { traceSchedule: true }).world.traceHash
    )
    expect(chatter(11, { traceSchedule: true }).world.traceHash).not.toBe(chatter(11).world.traceHash)
  })

  it("trace hash is FNV-1a 64 over the time and the event", () => {
    const w = new SimWorld({ seed: 1, epochMs: 0 })
    expect(w.traceHash).toBe("cbf29ce484222325")
    w.trace("a")
    const w2 = new SimWorld({ seed: 99, epochMs: 0 })
    w2.trace("a")
    expect(w.traceHash).toBe(w2.traceHash) // the seed only matters through what happens
    w2.trace("b")
    expect(w2.traceHash).not.toBe(w.traceHash)
    const split1 = new SimWorld({ seed: 1 })
    split1.trace("ab")
    split1.trace("c")
    const split2 = new SimWorld({ seed: 1 })
    split2.trace("a")
    split2.trace("bc")
    expect(split1.traceHash).not.toBe(split2.traceHash)
  })

  it("keeps only the last traceLines lines", () => {
    const w = new SimWorld({ seed: 1, epochMs: 0, traceLines: 3 })
    for (let i = 0; i < 5; i++) w.trace(`e${i}`)
    expect(w.traceLines).toEqual(["0 e2", "0 e3", "0 e4"])
  })

  it("the stop condition and the time budget stop the loop", () => {
    const world = new SimWorld({ seed: 3 })
    let ticks = 0
    world.fork("n", Effect.forever(Effect.sleep(100).pipe(Effect.andThen(Effect.sync(() => ticks++)))))
    const r1 = world.run({ until: () => ticks >= 5 })
    expect(r1.reason).toBe("condition")
    expect(r1.elapsedMs).toBe(500)
    const r2 = world.run({ maxSimMs: 1050 })
    expect(r2.reason).toBe("time-limit")
    expect(r2.elapsedMs).toBe(1050)
    expect(ticks).toBe(15)
    const r3 = world.run({ maxSteps: 10 })
    expect(r3.reason).toBe("step-limit")
    expect(r3.steps).toBe(10)
  })

  it("crash drops the node's queued work, its timers never fire and finalizers do not run", () => {
    const world = new SimWorld({ seed: 5 })
    const log: Array<string> = []
    world.fork(
      "a",
      Effect.sleep(50).pipe(
        Effect.andThen(Effect.sync(() => log.push("a woke"))),
        Effect.ensuring(Effect.sync(() => log.push("a finalizer")))
      )
    )
    world.fork(
      "b",
      Effect.forever(
        Effect.sleep(20).pipe(
          Effect.andThen(Clock.currentTimeMillis),
          Effect.map((t) => log.push(`b ${t - world.clock.currentMillis}`))
        )
      )
    )
    world.run({ maxSimMs: 10 })
    expect(world.clock.pendingTimers).toBe(2)
    world.fork(
      "a",
      Effect.sync(() => log.push("a queued task"))
    ) // queued, never runs
    world.crash("a")
    expect(world.node("a").state).toBe("crashed")
    expect(world.node("a").scheduler.pending).toBe(0)
    expect(world.clock.pendingTimers).toBe(1)
    world.run({ maxSimMs: 200 })
    expect(log.filter((l) => l.startsWith("a"))).toEqual([])
    expect(log.filter((l) => l.startsWith("b")).length).toBe(10)
    expect(() => world.fork("a", Effect.void)).toThrow(/crashed/)
  })

  it("restart gives a fresh incarnation with new timers and a new Random stream", () => {
    const world = new SimWorld({ seed: 5 })
    const draws: Array<number> = []
    const boot = Effect.gen(function* () {
      draws.push(yield* Random.nextInt)
      yield* Effect.sleep(30)
      draws.push(-1)
    })
    world.fork("a", boot)
    world.run({ maxSimMs: 10 })
    const n2 = world.restart("a")
    expect(n2.incarnation).toBe(1)
    expect(n2.state).toBe("running")
    world.fork("a", boot)
    world.run()
    expect(draws.length).toBe(4 - 1) // first incarnation's wake-up never happened
    expect(draws[0]).not.toBe(draws[1])
    expect(draws[2]).toBe(-1)
    expect(world.nodeNames).toEqual(["a"])
  })

  it("pause freezes a node while others go on; resumed, it wakes at the current time", () => {
    const world = new SimWorld({ seed: 8 })
    let aTicks = 0
    let bTicks = 0
    let aLastSeen = 0
    world.fork(
      "a",
      Effect.forever(
        Effect.sleep(10).pipe(
          Effect.andThen(Clock.currentTimeMillis),
          Effect.map((t) => {
            aTicks++
            aLastSeen = t
          })
        )
      )
    )
    world.fork("b", Effect.forever(Effect.sleep(10).pipe(Effect.map(() => bTicks++))))
    world.run({ maxSimMs: 5 })
    world.pause("a")
    expect(world.node("a").state).toBe("paused")
    world.run({ maxSimMs: 100 })
    expect(aTicks).toBe(0)
    expect(bTicks).toBe(10)
    expect(world.node("a").scheduler.pending).toBe(1) // its timer fired; the wake-up waits
    world.resume("a")
    world.run({ maxSimMs: 0 })
    expect(aTicks).toBe(1)
    expect(aLastSeen).toBe(world.clock.currentMillis)
    world.run({ maxSimMs: 30 })
    expect(aTicks).toBe(4)
  })

  it("a paused node's pending work does not keep the world from going quiescent", () => {
    const world = new SimWorld({ seed: 8 })
    world.fork("a", Effect.void)
    world.pause("a")
    expect(world.run().reason).toBe("quiescent")
    world.resume("a")
    expect(world.run().steps).toBe(1)
  })

  it("nodes see their own clock offset and talk through a Deferred", () => {
    const world = new SimWorld({ seed: 2, epochMs: 1_000_000 })
    world.addNode("skewed", { clockOffsetMs: 5_000 })
    expect(() => world.addNode("skewed")).toThrow(/exists/)
    const answer = Effect.runSync(Deferred.make<number>())
    const server = world.fork(
      "skewed",
      Effect.sleep(100).pipe(
        Effect.andThen(Clock.currentTimeMillis),
        Effect.tap((t) => Deferred.succeed(answer, t))
      )
    )
    const client = world.fork("plain", Deferred.await(answer).pipe(Effect.zip(Clock.currentTimeMillis)))
    world.run()
    expect(server.unsafePoll()?._tag).toBe("Success")
    const exit = client.unsafePoll()
    expect(exit?._tag === "Success" ? exit.value : undefined).toEqual([1_005_100, 1_000_100])
  })

  it("the stop condition sees a fiber finish without running other nodes to idle", () => {
    const world = new SimWorld({ seed: 4 })
    world.fork("busy", Effect.forever(Effect.yieldNow()))
    const f = world.fork("main", Effect.sleep(1).pipe(Effect.as(42)))
    // 'busy' never idles, so time can only advance if... it cannot: the budget ends the run instead.
    const r = world.run({ until: () => f.unsafePoll() !== null, maxSteps: 2000 })
    expect(r.reason).toBe("step-limit")
    world.crash("busy")
    const r2 = world.run({ until: () => f.unsafePoll() !== null })
    expect(r2.reason).toBe("condition")
  })

  it("dispose lets every leftover fiber end (crashed, paused, daemon) so the world can be collected", () => {
    const rootsBefore = Fiber.unsafeRoots().length
    const world = new SimWorld({ seed: 6 })
    const finalized: Array<string> = []
    const server = (name: string) =>
      Effect.forever(Effect.sleep(10)).pipe(Effect.ensuring(Effect.sync(() => finalized.push(name))))
    world.fork("a", server("a"))
    world.fork("b", server("b"))
    world.fork("c", Effect.forkDaemon(server("c-daemon")).pipe(Effect.andThen(Effect.sleep("1 day"))))
    world.run({ maxSimMs: 100 })
    world.crash("a")
    world.pause("b")
    expect(Fiber.unsafeRoots().length - rootsBefore).toBe(4)
    expect(finalized).toEqual([]) // crash and pause run no finalizer
    expect(world.dispose()).toBe(0)
    expect(Fiber.unsafeRoots().length).toBe(rootsBefore)
    expect([...finalized].sort()).toEqual(["a", "b", "c-daemon"])
    expect(world.dispose()).toBe(0)
    expect(() => world.run()).toThrow(/disposed/)
    expect(() => world.fork("a", Effect.void)).toThrow(/disposed/)
  })

  it("a crashed scheduler parks work instead of running it", () => {
    const world = new SimWorld({ seed: 6 })
    const d = Effect.runSync(Deferred.make<void>())
    let woke = false
    world.fork(
      "a",
      Deferred.await(d).pipe(
        Effect.map(() => {
          woke = true
        })
      )
    )
    world.run()
    world.crash("a")
    world.fork("b", Deferred.succeed(d, undefined)) // wakes a fiber on the crashed node
    world.run()
    expect(woke).toBe(false)
    expect(world.node("a").scheduler.pending).toBe(0)
    expect(world.node("a").scheduler.parkedCount).toBe(1)
    world.dispose()
  })
  it("advance moves the clock across a crashed node's downtime; the restarted node sees the later time", () => {
    const world = new SimWorld({ seed: 3 })
    const seen: Array<number> = []
    world.fork("n", Effect.sleep(50))
    world.run({ until: () => world.now > 0 && seen.length > 0, maxSteps: 10 })
    const before = world.now
    world.crash("n")
    world.advance(30_000)
    expect(world.now).toBe(before + 30_000)
    world.restart("n")
    world.fork(
      "n",
      Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => seen.push(t)))
    )
    expect(world.run().reason).toBe("quiescent")
    expect(seen).toEqual([before + 30_000])
    expect(() => world.advance(-1)).toThrow(RangeError)
  })
})
