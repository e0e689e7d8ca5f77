import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { MAX_EVENT_NESTING, budgetForMillis, timeSpanText } from "../src/execution/index.js"
import {
  anEvent,
  faultOf,
  fresh,
  loadFaultOf,
  outcomesOf,
  run,
  runFault,
  statesOf,
  withProjection
} from "./executionSupport.js"

const nested = (depth: number): string => "[".repeat(depth) + "]".repeat(depth)

describe("faults", () => {
  it("a thrown value's text or an error's message is the reason; the items before it are done", async () => {
    const query = (thrown: string) =>
      `fromAll().when({$init: function () { return {n: 0} }, $any: function (s, e) { s.n++; if (e.sequenceNumber === 1) throw ${thrown} }})`
    const items = [anEvent("a", 0, "T"), anEvent("a", 1, "T"), anEvent("a", 2, "T")]
    const fault = await runFault(query("new Error('x')"), items)
    expect([fault._tag, fault.index, fault.message]).toEqual(["HandlerFault", 1, "x"])
    expect(fault.done.map((o) => o.state)).toEqual(['{"n":1}'])
    expect(fault.stack).toContain("p.js")
    expect((await runFault(query("'failed'"), items)).message).toBe("failed")
    expect((await runFault(query("123"), items)).message).toBe("123")
    expect((await runFault(query("{a: 1}"), items)).stack).toBe("")
  })

  it("a fault's stack keeps the 20 innermost frames", async () => {
    const fault = await runFault(
      "function f(n) { if (n === 0) throw new Error('deep'); return f(n - 1) } fromAll().when({$any: function () { f(100) }})",
      [anEvent("a", 0, "T")]
    )
    const lines = fault.stack.split("\n")
    expect(lines.length).toBe(21)
    expect(lines[0]).toContain("p.js")
    expect(lines[20]).toMatch(/^ {4}\.\.\. \d+ more frames$/)
  })

  it("nothing after the failing item runs", async () => {
    const outcomes = await withProjection(
      "var calls = 0; fromAll().when({$any: function (s, e) { calls++; if (e.sequenceNumber === 0) throw 'stop'; return {calls: calls} }})",
      ({ handler }) =>
        Effect.gen(function* () {
          yield* faultOf(handler, fresh([anEvent("a", 0, "T"), anEvent("a", 1, "T")]))
          return yield* outcomesOf(handler, fresh([anEvent("a", 2, "T")]))
        })
    )
    expect(outcomes[0].state).toBe('{"calls":2}')
  })

  it("after a fault the live state is gone: the next item must bring its state", async () => {
    await expect(
      withProjection("fromAll().when({$any: function (s, e) { if (e.body.bad) throw 'x' }})", ({ handler }) =>
        Effect.gen(function* () {
          yield* faultOf(handler, fresh([anEvent("a", 0, "T"), anEvent("a", 1, "T", { bad: true })]))
          return yield* outcomesOf(handler, [{ source: anEvent("a", 2, "T"), partition: "" }])
        })
      )
    ).rejects.toThrow(/continues the partition/)
  })

  it("a handler that runs past its budget stops with the reference's timeout text, the items before it done", async () => {
    const options = { compilationTimeoutMillis: 500, executionTimeoutMillis: 10 }
    const fault = await runFault(
      "fromAll().when({$any: function (s, e) { if (e.sequenceNumber === 2) while (true) {} return {n: e.sequenceNumber} }})",
      [anEvent("a", 0, "T"), anEvent("a", 1, "T"), anEvent("a", 2, "T"), anEvent("a", 3, "T")],
      options
    )
    expect(fault.message).toBe(
      "Projection script took too long to execute (took: 00:00:00.0100000, allowed: 00:00:00.0100000"
    )
    expect(fault.index).toBe(2)
    expect(fault.done.map((o) => o.state)).toEqual(['{"n":0}', '{"n":1}'])
  })

  it("a script that runs past the compile budget faults with the reference's compile timeout text", async () => {
    const fault = await loadFaultOf("while (true) {}", { compilationTimeoutMillis: 20, executionTimeoutMillis: 250 })
    expect(fault.message).toBe(
      "Projection script took too long to compile (took: 00:00:00.0200000, allowed: 00:00:00.0200000"
    )
  })

  it("running out of memory is a fault of the item, the items before it done", async () => {
    const fault = await runFault(
      "fromAll().when({$any: function (s, e) { if (e.sequenceNumber === 1) return {big: 'x'.repeat(64 * 1024 * 1024)}; return {n: 1} }})",
      [anEvent("a", 0, "T"), anEvent("a", 1, "T")],
      { compilationTimeoutMillis: 500, executionTimeoutMillis: 250, memoryBytes: 8 * 1024 * 1024 }
    )
    expect(fault.message).toMatch(/memory limit/)
    expect([fault.index, fault.done.length]).toEqual([1, 1])
  })

  it("a recursion without end is a fault, not a crash", async () => {
    const fault = await runFault("fromAll().when({$any: function f(s, e) { return f(s, e) }})", [anEvent("a", 0, "T")])
    expect(fault.message).toMatch(/stack overflow/)
  })

  it("a nesting that breaks the interpreter faults the batch, and every later call, without a crash", async () => {
    const [first, later, memory] = await withProjection(
      `fromAll().when({$any: function (s, e) { if (e.sequenceNumber === 1) JSON.parse('['.repeat(200000) + ']'.repeat(200000)); return {n: 1} }})`,
      ({ handler }) =>
        Effect.gen(function* () {
          const first = yield* faultOf(handler, fresh([anEvent("a", 0, "T"), anEvent("a", 1, "T")]))
          const later = yield* Effect.flip(handler.partitionsOf([anEvent("a", 2, "T")]))
          return [first, later, handler.memoryBytes()] as const
        })
    )
    expect([first.index, first.done, first.message]).toEqual([0, [], expect.stringMatching(/stopped abnormally/)])
    expect(later.message).toMatch(/must be loaded again/)
    expect(memory).toBe(0)
  })

  it("a definition that cannot run is refused at load", async () => {
    const fault = await loadFaultOf("fromAll().when({A: function () {}, $any: function () {}})")
    expect([fault._tag, fault.message]).toEqual([
      "SourceDefinitionInvalid",
      "Both AllEvents and specific event filters cannot be set"
    ])
  })

  it("the emitting functions are not defined at the script's top level", async () => {
    for (const name of ["emit", "linkTo", "linkStreamTo", "copyTo"])
      expect((await loadFaultOf(`${name}('s', {}, {}); fromAll()`)).message).toBe(`'${name}' is not defined`)
  })
})

describe("nesting", () => {
  it(`data nested ${MAX_EVENT_NESTING} levels deep is read and can be kept in the state`, async () => {
    const outcomes = await run("fromAll().when({$any: function (s, e) { return e.body }})", [
      anEvent("a", 0, "T", nested(MAX_EVENT_NESTING)),
      anEvent("a", 1, "T", {})
    ])
    expect(outcomes[0].state).toBe(nested(MAX_EVENT_NESTING))
    const reloaded = await withProjection("fromAll().when({$any: function (s, e) { return [s] }})", ({ handler }) =>
      outcomesOf(handler, [{ source: anEvent("a", 0, "T"), partition: "", state: nested(MAX_EVENT_NESTING) }])
    )
    expect(reloaded[0].state).toBe(nested(MAX_EVENT_NESTING + 1))
  })

  it("deeper data or metadata is refused before it reaches the sandbox; the items before it are done", async () => {
    const items = [
      anEvent("a", 0, "T"),
      anEvent("a", 1, "T", `{"x":${nested(MAX_EVENT_NESTING)}, "s": "[[[[["}`),
      anEvent("a", 2, "T")
    ]
    const fault = await runFault("fromAll().when({$any: function (s, e) { return {n: e.sequenceNumber} }})", items)
    expect([fault.index, fault.message, fault.done.map((o) => o.state)]).toEqual([
      1,
      `The data of event 1@a nests arrays and objects more than ${MAX_EVENT_NESTING} levels deep, more than projections accept`,
      ['{"n":0}']
    ])
    const metadata = await runFault("fromAll().when({$any: function () {}})", [
      anEvent("a", 0, "T", "text", { isJson: false, metadata: nested(MAX_EVENT_NESTING + 1) })
    ])
    expect(metadata.message).toMatch(/^The metadata of event 0@a nests/)
  })

  it("brackets inside strings and deep text of a non-JSON event do not count", async () => {
    const text = `{"s":"${"[".repeat(MAX_EVENT_NESTING * 2)}\\"${"{".repeat(10)}"}`
    expect(
      await statesOf("fromAll().when({$any: function (s, e) { return {n: e.body.s.length} }})", [
        anEvent("a", 0, "T", text)
      ])
    ).toEqual([`{"n":${MAX_EVENT_NESTING * 2 + 11}}`])
    expect(
      await statesOf("fromAll().when({$any: function (s, e) { return {n: e.bodyRaw.length} }})", [
        anEvent("a", 0, "T", nested(MAX_EVENT_NESTING + 5), { isJson: false })
      ])
    ).toEqual([`{"n":${(MAX_EVENT_NESTING + 5) * 2}}`])
  })

  it("partitionBy refuses deep data the same way", async () => {
    const fault = await withProjection(
      "fromAll().partitionBy(function () { return 'p' }).when({$any: function () {}})",
      ({ handler }) =>
        Effect.flip(handler.partitionsOf([anEvent("a", 0, "T"), anEvent("a", 1, "T", nested(MAX_EVENT_NESTING + 1))]))
    )
    expect([fault.index, fault.done]).toEqual([1, []])
  })
})

describe("determinism", () => {
  const query =
    "fromAll().when({$any: function (s, e) { return {now: Date.now(), date: new Date().toISOString(), r: Math.random()} }})"

  it("Date reads the event's creation time", async () => {
    const [state] = await statesOf(query, [anEvent("a", 0, "T", {}, { createdMicros: 1_700_000_000_123_456 })])
    expect(JSON.parse(state)).toMatchObject({ now: 1_700_000_000_123, date: "2023-11-14T22:13:20.123Z" })
  })

  it("Math.random draws the same numbers for the same event, other numbers at another position", async () => {
    const at = (logPosition: number) => anEvent("a", 0, "T", {}, { logPosition })
    const first = await statesOf(query, [at(5000), at(9000)])
    const again = await statesOf(query, [at(5000), at(9000)])
    expect(again).toEqual(first)
    const r = (state: string): number => (JSON.parse(state) as { r: number }).r
    expect(r(first[0])).not.toBe(r(first[1]))
    const high = await statesOf(query, [at(5000 + 2 ** 32)])
    expect(r(high[0])).not.toBe(r(first[0]))
  })

  it("built-ins the script replaces do not change how states are kept", async () => {
    const states = await statesOf(
      `JSON.parse = null; JSON.stringify = null; Reflect.ownKeys = null; Object.defineProperty = null;
       Array.isArray = null; Object.getOwnPropertyDescriptor = null; Number.prototype.toExponential = null;
       fromAll().when({$init: function () { return {n: 0, big: 1e300} }, $any: function (s, e) { s.n += e.body.k }})`,
      [anEvent("a", 0, "T", { k: 2 })]
    )
    expect(states).toEqual(['{"n":2,"big":1E+300}'])
  })
})

describe("timeouts as budgets", () => {
  it("budgetForMillis gives 4 checks per millisecond, the defaults the sandbox's own", () => {
    expect([budgetForMillis(250), budgetForMillis(500), budgetForMillis(0), budgetForMillis(0.1)]).toEqual([
      1000, 2000, 1, 1
    ])
  })

  it("timeSpanText writes .NET's constant TimeSpan text", () => {
    expect([timeSpanText(250), timeSpanText(500), timeSpanText(1000), timeSpanText(90_061_001.5)]).toEqual([
      "00:00:00.2500000",
      "00:00:00.5000000",
      "00:00:01",
      "1.01:01:01.0015000"
    ])
  })
})
