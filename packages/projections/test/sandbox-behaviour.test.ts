import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { SandboxScriptError } from "../src/runtime/sandboxErrors.js"
import { batchOf, failureOf, probe, withSandbox } from "./sandboxSupport.js"

describe("Date and Math.random are deterministic", () => {
  const dates = `function dates() {
    return [Date.now(), new Date().getTime(), new Date().toISOString(), new Date(2020, 0, 2, 3).toISOString(),
      new Date(0).getHours(), new Date(0).getTimezoneOffset(), typeof Date(), new Date(5) instanceof Date]
  }`

  it("Date reads the clock the host gives each entry, never the host's", async () => {
    const seen = await withSandbox("clock", (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(dates)
        return yield* sb.runBatch("dates", {
          items: "[null, null]",
          now: [1_600_000_000_000, 1_700_000_000_000],
          seed: [0, 0]
        })
      })
    )
    const [first, second] = JSON.parse(seen) as Array<Array<unknown>>
    expect(first).toEqual([
      1_600_000_000_000,
      1_600_000_000_000,
      "2020-09-13T12:26:40.000Z",
      "2020-01-02T03:00:00.000Z",
      0,
      0,
      "string",
      true
    ])
    expect(second?.[0]).toBe(1_700_000_000_000)
  })

  it("the top-level script reads a clock at 0", async () => {
    const seen = await withSandbox("clock", (sb) => probe(sb, `const t = Date.now(); function probe() { return t }`))
    expect(seen).toBe(0)
  })

  const randoms = `function randoms() { return [Math.random(), Math.random(), Math.random()] }`
  const draw = (name: string, seed: number) =>
    withSandbox(name, (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(randoms)
        return JSON.parse(yield* sb.runBatch("randoms", batchOf([null, null], 0, seed))) as Array<Array<number>>
      })
    )

  it("Math.random gives the same numbers for the same projection and seed, in [0, 1)", async () => {
    const a = await draw("proj", 7)
    const b = await draw("proj", 7)
    expect(a).toEqual(b)
    // Every entry restarts from its seed, so the two items of a batch draw the same numbers.
    expect(a[0]).toEqual(a[1])
    for (const x of a.flat()) expect(x >= 0 && x < 1).toBe(true)
    expect(new Set(a[0]).size).toBe(3)
  })

  it("Math.random differs between projections and between seeds", async () => {
    const base = await draw("proj", 7)
    expect(await draw("other", 7)).not.toEqual(base)
    expect(await draw("proj", 8)).not.toEqual(base)
  })
})

describe("errors out of user code", () => {
  it("carry the JavaScript error's name, message and stack with the script's name and line", async () => {
    const failure = await withSandbox("shop", (sb) =>
      failureOf(
        probe(
          sb,
          `function inner() { throw new TypeError("bad total") }
function probe() { return inner() }`
        )
      ).pipe(Effect.orDie)
    )
    expect(failure).toBeInstanceOf(SandboxScriptError)
    const error = failure as SandboxScriptError
    expect(error.errorName).toBe("TypeError")
    expect(error.message).toBe("bad total")
    expect(error.stack).toContain("at inner (shop.js:1")
    expect(error.stack).toContain("at probe (shop.js:2")
  })

  it("a thrown string or number becomes the message, as the reference shows it", async () => {
    const thrown = (value: string) =>
      withSandbox("t", (sb) => failureOf(sb.compile(`throw ${value}`)).pipe(Effect.orDie))
    expect(await thrown(`"failed"`)).toMatchObject({ _tag: "SandboxScriptError", message: "failed" })
    expect(await thrown(`123`)).toMatchObject({ _tag: "SandboxScriptError", message: "123" })
  })

  it("name the batch item that failed", async () => {
    const failure = await withSandbox("t", (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(`function handle(e) { if (e.bad) throw new Error("no " + e.n); return e.n }`)
        return yield* failureOf(sb.runBatch("handle", batchOf([{ n: 1 }, { n: 2 }, { n: 3, bad: true }, { n: 4 }])))
      }).pipe(Effect.orDie)
    )
    expect(failure).toMatchObject({ _tag: "SandboxScriptError", message: "no 3", item: 2 })
  })

  it("calling a function that is not there is a script error", async () => {
    const failure = await withSandbox("t", (sb) => failureOf(sb.runBatch("missing", batchOf([1]))).pipe(Effect.orDie))
    expect(failure).toMatchObject({ _tag: "SandboxScriptError", errorName: "TypeError" })
  })
})

describe("batches", () => {
  const counting = `
    var state = { count: 0 }
    function handle(e) { state.count++; state.last = e.type; return state.count }
    function probe() { return state }`

  it("run the handler over every item in order, in one crossing, and keep state between batches", async () => {
    const seen = await withSandbox("count", (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(counting)
        const first = yield* sb.runBatch("handle", batchOf([{ type: "a" }, { type: "b" }, { type: "c" }]))
        const second = yield* sb.runBatch("handle", batchOf([{ type: "d" }]))
        const state = yield* sb.runBatch("probe", batchOf([null]))
        return { first, second, state }
      })
    )
    expect(seen).toEqual({ first: "[1,2,3]", second: "[4]", state: `[{"count":4,"last":"d"}]` })
  })

  it("give the same results whether the events come in one batch or one at a time", async () => {
    const events = Array.from({ length: 25 }, (_, i) => ({ type: `t${i % 3}` }))
    const whole = await withSandbox("count", (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(counting)
        yield* sb.runBatch("handle", batchOf(events))
        return yield* sb.runBatch("probe", batchOf([null]))
      })
    )
    const single = await withSandbox("count", (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(counting)
        for (const event of events) yield* sb.runBatch("handle", batchOf([event]))
        return yield* sb.runBatch("probe", batchOf([null]))
      })
    )
    expect(single).toBe(whole)
  })

  it("an empty batch calls nothing", async () => {
    const seen = await withSandbox("count", (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(counting)
        yield* sb.runBatch("handle", batchOf([]))
        return yield* sb.runBatch("probe", batchOf([null]))
      })
    )
    expect(seen).toBe(`[{"count":0}]`)
  })

  it("user code cannot replace the runner's JSON with its own", async () => {
    const seen = await withSandbox("count", (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(
          `JSON.parse = () => ({ items: [] }); JSON.stringify = () => "hijacked"; function id(x) { return x }`
        )
        return yield* sb.runBatch("id", batchOf([1, 2]))
      })
    )
    expect(seen).toBe("[1,2]")
  })
})

describe("a batch's shape", () => {
  it("needs one clock and one seed per item", async () => {
    const failure = await withSandbox("t", (sb) =>
      Effect.gen(function* () {
        yield* sb.compile(`function id(x) { return x }`)
        return yield* failureOf(sb.runBatch("id", { items: "[1, 2]", now: [0], seed: [0, 0] }))
      }).pipe(Effect.orDie)
    )
    expect(failure).toMatchObject({
      _tag: "SandboxScriptError",
      message: "a batch needs one clock and one seed per item"
    })
  })
})
