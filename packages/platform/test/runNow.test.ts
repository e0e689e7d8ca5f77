/**
 * runNow: steps whose Effects are all settled finish in plain code (an Exit); the first step that must run
 * hands the rest of the same generator to an Effect, which resumes it there without running earlier steps again.
 */
import { describe, it, assert } from "@effect/vitest"
import { Context, Effect, Either, Exit } from "effect"
import { eitherNow, mapErrorNow, mapNow, runNow, type Steps } from "../src/runNow.js"

class Counter extends Context.Tag("test/Counter")<Counter, { readonly step: number }>() {}

describe("runNow", () => {
  it("finishes settled steps at once, with services taken from the context", () => {
    const ran: Array<string> = []
    function* steps(): Steps<number, string, Counter> {
      ran.push("a")
      const a = yield* Effect.succeed(1)
      const counter = yield* Counter
      ran.push("b")
      return a + counter.step
    }
    const result = runNow(steps(), Context.make(Counter, { step: 41 }))
    assert.isTrue(Exit.isExit(result))
    assert.deepStrictEqual(result, Exit.succeed(42))
    assert.deepStrictEqual(ran, ["a", "b"])
  })

  it.effect("goes on as an Effect from the first step that must run, running nothing twice", () =>
    Effect.gen(function* () {
      const ran: Array<string> = []
      function* steps(): Steps<number, never> {
        ran.push("before")
        const a = yield* Effect.succeed(1)
        const b = yield* Effect.sync(() => 2)
        ran.push("after")
        const c = yield* Effect.succeed(3)
        return a + b + c
      }
      const result = runNow(steps())
      assert.isFalse(Exit.isExit(result))
      assert.deepStrictEqual(ran, ["before"])
      assert.strictEqual(yield* result, 6)
      assert.deepStrictEqual(ran, ["before", "after"])
    })
  )

  it("ends at a settled failure, as Effect.gen does", () => {
    let reached = false
    function* steps(): Steps<number, string> {
      yield* Effect.fail("no")
      reached = true
      return 1
    }
    assert.deepStrictEqual(runNow(steps()), Exit.fail("no"))
    assert.isFalse(reached)
  })

  it("keeps settled values settled through mapNow, mapErrorNow and eitherNow", () => {
    assert.deepStrictEqual(
      mapNow(Effect.succeed(2), (n) => n * 2),
      Exit.succeed(4)
    )
    assert.deepStrictEqual(
      mapErrorNow(Effect.fail("e"), (e) => `${e}!`),
      Exit.fail("e!")
    )
    assert.deepStrictEqual(eitherNow(Effect.fail("e")), Exit.succeed(Either.left("e")))
    assert.isFalse(
      Exit.isExit(
        mapNow(
          Effect.sync(() => 1),
          (n) => n
        )
      )
    )
  })
})
