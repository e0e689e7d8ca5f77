/**
 * `throttlePercent` makes a run rest on Effect's Clock for its share of the time, and `threads` really
 * rewrites chunks concurrently.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { MemoryDisk, gateDisk } from "@vellum/platform"
import { ExpectedVersion } from "@vellum/storage"
import { makeThrottle } from "../src/Throttle.js"
import { closeNode, evs, json, openNode, scavenge, storageConfig, type Node } from "./scavenger-support.js"

describe("throttle", () => {
  it.effect("at 50% a run that worked 10 s rests 10 s (so it takes about twice as long); at 100% never", () =>
    Effect.gen(function* () {
      const half = yield* makeThrottle(50)
      yield* TestClock.adjust("10 seconds") // ten seconds of work
      const resting = yield* Effect.fork(half.rest)
      yield* TestClock.adjust("9 seconds")
      expect(resting.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(resting)
      expect(half.restedMillis()).toBe(10_000)
      // Having rested its share, it does not rest again until it has worked more.
      yield* half.rest
      expect(half.restedMillis()).toBe(10_000)

      const full = yield* makeThrottle(100)
      yield* TestClock.adjust("10 seconds")
      yield* full.rest
      expect(full.restedMillis()).toBe(0)
    })
  )

  it.effect("a stop interrupts a rest", () =>
    Effect.gen(function* () {
      const slow = yield* makeThrottle(10)
      yield* TestClock.adjust("10 seconds")
      const resting = yield* Effect.fork(slow.rest)
      yield* Fiber.interrupt(resting)
      expect(slow.restedMillis()).toBe(0)
    })
  )
})

/** Streams whose history is mostly removable, over many 4 KiB chunks. */
const writeWorkload = (node: Node) =>
  Effect.gen(function* () {
    for (let round = 0; round < 20; round++) {
      for (const s of ["a", "b", "c"]) yield* node.store.append(s, ExpectedVersion.Any, evs(10))
    }
    for (const s of ["a", "b", "c"]) yield* node.store.setStreamMetadata(s, ExpectedVersion.Any, json({ $maxCount: 5 }))
  })

/** The most chunk rewrites in progress at once (temp files of replacements) during a scavenge. */
const mostConcurrentRewrites = (threads: number) =>
  Effect.gen(function* () {
    const mem = new MemoryDisk()
    const node = yield* openNode(mem, storageConfig())
    yield* writeWorkload(node)
    yield* closeNode(node)
    let most = 0
    // Every disk operation yields, so fibers interleave at each one; count temp files as they go.
    const watched = Object.create(mem) as MemoryDisk
    Object.defineProperty(watched, "service", {
      value: gateDisk(mem.service, (operation) =>
        Effect.zipRight(
          Effect.sync(() => {
            most = Math.max(most, mem.files().filter((f) => f.endsWith(".scavenge.tmp")).length)
          }),
          Effect.zipRight(Effect.yieldNow(), operation)
        )
      )
    })
    const again = yield* openNode(watched, storageConfig())
    expect((yield* scavenge(again, { threshold: -1, threads })).result).toBe("Success")
    yield* closeNode(again)
    return most
  })

describe("threads", () => {
  it.effect("with 4 threads several chunks are rewritten at once; with 1, one at a time", () =>
    Effect.gen(function* () {
      expect(yield* mostConcurrentRewrites(1)).toBe(1)
      expect(yield* mostConcurrentRewrites(4)).toBeGreaterThan(1)
    })
  )
})
