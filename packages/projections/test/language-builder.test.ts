import { describe, expect, it } from "vitest"
import { definitionOf, definitionWith, faultOf } from "./languageSupport.js"

// After each step the builder has exactly the methods allowed next; any other is absent.
const allowedAfter: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["fromAll()", ["when", "partitionBy", "outputState", "foreachStream"]],
  ["fromCategory('c')", ["when", "partitionBy", "outputState", "foreachStream"]],
  ["fromCategories('a', 'b')", ["when", "partitionBy", "outputState", "foreachStream"]],
  ["fromStream('s')", ["when", "partitionBy", "outputState"]],
  ["fromStreams('a', 'b')", ["when", "partitionBy", "outputState"]],
  ["fromAll().partitionBy(function () {})", ["when"]],
  ["fromAll().foreachStream()", ["when"]],
  ["fromAll().when({})", ["transformBy", "filterBy", "outputState", "outputTo", "$defines_state_transform"]],
  ["fromAll().outputState()", ["transformBy", "filterBy", "outputTo"]],
  ["fromAll().when({}).transformBy(function (s) { return s })", ["transformBy", "filterBy", "outputState", "outputTo"]],
  ["fromAll().when({}).filterBy(function () { return true })", ["transformBy", "filterBy", "outputState", "outputTo"]],
  ["fromAll().when({}).outputTo('r')", []]
]
const allMethods = [
  "when",
  "partitionBy",
  "outputState",
  "foreachStream",
  "transformBy",
  "filterBy",
  "outputTo",
  "$defines_state_transform"
]
const callOf: Record<string, string> = {
  when: "when({})",
  partitionBy: "partitionBy(function () {})",
  outputState: "outputState()",
  foreachStream: "foreachStream()",
  transformBy: "transformBy(function (s) { return s })",
  filterBy: "filterBy(function () { return true })",
  outputTo: "outputTo('r')",
  $defines_state_transform: "$defines_state_transform()"
}

describe("the builder chain", () => {
  for (const [chain, allowed] of allowedAfter) {
    it(`after ${chain} the builder offers exactly ${allowed.join(", ") || "nothing"}`, async () => {
      for (const name of allMethods) {
        const source = `${chain}.${callOf[name]}`
        if (allowed.includes(name)) await definitionOf(source)
        else expect((await faultOf(source)).message).toContain("not a function")
      }
    })
  }

  it("the builder's methods are its own, not enumerable, and it has no prototype", async () => {
    const fault = await faultOf(
      "var b = fromAll(); throw JSON.stringify([Object.keys(b), Object.getOwnPropertyNames(b), Object.getPrototypeOf(b)])"
    )
    expect(JSON.parse(fault.message)).toEqual([[], ["when", "partitionBy", "outputState", "foreachStream"], null])
  })

  it("$defines_state_transform ends the chain and marks a transform without one", async () => {
    expect((await faultOf("fromAll().when({}).$defines_state_transform().outputState()")).message).toMatch(
      /undefined|cannot read/i
    )
    expect(await definitionOf("fromAll().when({}).$defines_state_transform()")).toEqual(
      definitionWith({ allStreams: true }, { definesFold: true, definesStateTransform: true, producesResults: true })
    )
  })
})

describe("when", () => {
  it("typed handlers limit the definition to their types, in order; definesFold is set", async () => {
    expect(await definitionOf("fromAll().when({B: function () {}, A: function () {}, x: 1})")).toEqual(
      definitionWith({ allStreams: true, allEvents: false, events: ["B", "A"] }, { definesFold: true })
    )
  })

  it("$any after a type turns all events back on, with the type kept", async () => {
    expect(await definitionOf("fromAll().when({A: function () {}, $any: function () {}})")).toEqual(
      definitionWith({ allStreams: true, allEvents: true, events: ["A"] }, { definesFold: true })
    )
    expect(await definitionOf("fromAll().when({$any: function () {}, A: function () {}})")).toEqual(
      definitionWith({ allStreams: true, allEvents: false, events: ["A"] }, { definesFold: true })
    )
  })

  it("$init, $created and $deleted keep all events; $deleted handles deletions; $initShared turns on bi-state", async () => {
    const f = "function () {}"
    expect(await definitionOf(`fromAll().foreachStream().when({$init: ${f}, $created: ${f}, $deleted: ${f}})`)).toEqual(
      definitionWith({ allStreams: true, byStream: true }, { definesFold: true, handlesDeletedNotifications: true })
    )
    expect(await definitionOf(`fromAll().when({$initShared: ${f}})`)).toEqual(
      definitionWith({ allStreams: true }, { definesFold: true, isBiState: true })
    )
  })

  it("$deleted is refused once bi-state is on", async () => {
    const f = "function () {}"
    expect((await faultOf(`fromAll().when({$initShared: ${f}, $deleted: ${f}})`)).message).toBe(
      "Cannot handle deletes in bi-state projections"
    )
    expect((await faultOf(`options({biState: true}); fromAll().when({$deleted: ${f}})`)).message).toBe(
      "Cannot handle deletes in bi-state projections"
    )
  })

  it("a type registered twice is a fault", async () => {
    const fault = await faultOf("fromAll().when({A: function () {}}); on_event('A', function () {})")
    expect(fault.message).toBe("An item with the same key has already been added. Key: A")
  })

  it("getters are not run and non-object arguments register nothing", async () => {
    expect(await definitionOf("fromAll().when({get A() { throw 'ran' }}); fromAll().when(5)")).toEqual(
      definitionWith({ allStreams: true }, { definesFold: true })
    )
  })

  it("on_event and on_any register handlers without marking definesFold", async () => {
    expect(await definitionOf("fromAll(); on_event('A', function () {})")).toEqual(
      definitionWith({ allStreams: true, allEvents: false, events: ["A"] })
    )
    expect(await definitionOf("fromAll(); on_any(function () {})")).toEqual(definitionWith({ allStreams: true }))
  })

  it("on_event and on_any check their arguments", async () => {
    expect((await faultOf("on_event('A')")).message).toBe("invalid number of parameters")
    expect((await faultOf("on_event(1, function () {})")).message).toBe("eventName")
    expect((await faultOf("on_event('A', 1)")).message).toBe("eventHandler")
    expect((await faultOf("on_any()")).message).toBe("invalid number of parameters")
    expect((await faultOf("on_any(1)")).message).toBe("eventHandler")
  })
})

describe("result shaping", () => {
  it("outputState marks results", async () => {
    expect(await definitionOf("fromAll().when({}).outputState()")).toEqual(
      definitionWith({ allStreams: true }, { definesFold: true, producesResults: true })
    )
  })

  it("transformBy and filterBy mark a transform and results, and need a function", async () => {
    expect(await definitionOf("fromAll().outputState().filterBy(function () { return true })")).toEqual(
      definitionWith({ allStreams: true }, { producesResults: true, definesStateTransform: true })
    )
    expect((await faultOf("fromAll().when({}).transformBy(1)")).message).toBe("expected function")
    expect((await faultOf("fromAll().when({}).filterBy('x')")).message).toBe("expected function")
  })

  it("outputTo names the result streams; blank names count as unset; it does not mark results", async () => {
    expect(await definitionOf("fromAll().when({}).outputTo('r', 'r-{0}')")).toEqual(
      definitionWith(
        { allStreams: true },
        { definesFold: true, resultStreamName: "r", partitionResultStreamNamePattern: "r-{0}" }
      )
    )
    expect(await definitionOf("fromAll().when({}).outputTo('  ')")).toEqual(
      definitionWith({ allStreams: true }, { definesFold: true })
    )
  })

  it("outputTo checks its arguments", async () => {
    expect((await faultOf("fromAll().when({}).outputTo()")).message).toBe("invalid number of parameters")
    expect((await faultOf("fromAll().when({}).outputTo('a', 'b', 'c')")).message).toBe("invalid number of parameters")
    expect((await faultOf("fromAll().when({}).outputTo(1)")).message).toBe(
      "expected string value (Parameter 'resultStream')"
    )
    expect((await faultOf("fromAll().when({}).outputTo('a', 1)")).message).toBe(
      "expected string value (Parameter 'partitionResultStreamPattern')"
    )
  })
})
