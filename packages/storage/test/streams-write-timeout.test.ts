/**
 * The write timeout: an append whose batch is not durable within `writeTimeoutMillis` (the disk stalls) is
 * answered WriteTimeout — its outcome unknown — instead of waiting forever; the batch still completes when
 * the disk comes back, and later writes work.
 */
import { describe, it, assert } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, Scope, TestClock } from "effect"
import { Disk, MemoryDisk } from "@vellum/platform"
import { make } from "../src/index.js"
import { baseConfig, ev } from "./streams-harness.js"

describe("streams: write timeout", () => {
  it.scoped("a stalled write is answered WriteTimeout after the timeout, and still lands when the disk recovers", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk({ faults: { latencyMs: { min: 30_000, max: 30_000 } } })
      mem.faulty = false
      const scope = yield* Effect.scope
      const store = yield* make(baseConfig({ writeTimeoutMillis: 10_000 })).pipe(
        Effect.provideService(Disk, mem.service),
        Scope.extend(scope)
      )
      yield* store.append("s", -2, [ev(1)])
      mem.faulty = true // every disk operation now takes 30 s
      const stalled = yield* Effect.fork(Effect.either(store.append("s", -2, [ev(2)])))
      yield* TestClock.adjust(Duration.seconds(9))
      assert.strictEqual((yield* Fiber.poll(stalled))._tag, "None", "no answer before the timeout")
      yield* TestClock.adjust(Duration.seconds(2))
      const answer = yield* Fiber.join(stalled)
      assert.isTrue(Either.isLeft(answer) && answer.left._tag === "WriteTimeout", JSON.stringify(answer))
      // The disk comes back: the batch completes (its late answer is dropped), and the store goes on.
      yield* TestClock.adjust(Duration.minutes(2))
      mem.faulty = false
      const next = yield* store.append("s", -2, [ev(3)])
      assert.strictEqual(next.firstEventNumber, 2)
      const read = yield* store.readStreamForward("s", 0, 10)
      assert.strictEqual(read._tag, "Success")
      if (read._tag === "Success")
        assert.deepStrictEqual(
          read.events.map((e) => e.event?.eventId),
          [ev(1).eventId, ev(2).eventId, ev(3).eventId]
        )
    })
  )
})
