import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { anEvent, fresh, outcomesOf, run, statesOf, withProjection } from "./executionSupport.js"

const counting = "fromAll().when({$init: function () { return {c: 0} }, $any: function (s, e) { s.c++ }})"

describe("the fold", () => {
  it("$init gives a new partition's state; a handler returning nothing keeps the mutated state", async () => {
    expect(await statesOf(counting, [anEvent("a", 0, "T"), anEvent("a", 1, "T")])).toEqual(['{"c":1}', '{"c":2}'])
  })

  it("without $init a partition starts as {}", async () => {
    expect(await statesOf("fromAll().when({$any: function (s) { s.seen = true }})", [anEvent("a", 0, "T")])).toEqual([
      '{"seen":true}'
    ])
  })

  it("a returned value replaces the state: object, array, number, boolean", async () => {
    const query = "fromAll().when({$any: function (s, e) { return e.body.v }})"
    const items = [{ v: { x: 1 } }, { v: [1, 2] }, { v: 3 }, { v: false }].map((d, i) => anEvent("a", i, "T", d))
    expect(await statesOf(query, items)).toEqual(['{"x":1}', "[1,2]", "3", "false"])
  })

  it("a string state is stored as it is, and the next item of the partition gets the string", async () => {
    const query = "fromAll().when({$any: function (s, e) { return typeof s === 'string' ? s + '!' : 'abc' }})"
    expect(await statesOf(query, [anEvent("a", 0, "T"), anEvent("a", 1, "T")])).toEqual(["abc", "abc!"])
  })

  it("a null state is stored as empty and the live partition goes on with null", async () => {
    const query = "fromAll().when({$any: function (s, e) { return e.sequenceNumber === 0 ? null : {was: s} }})"
    const outcomes = await run(query, [anEvent("a", 0, "T"), anEvent("a", 1, "T")])
    expect(outcomes.map((o) => [o.state, o.stateChanged])).toEqual([
      ["", false],
      ['{"was":null}', true]
    ])
  })

  it("an empty stored state initialises the partition again ($init, then $created)", async () => {
    const query = `fromAll().when({
      $init: function () { return {n: 0} },
      $created: function (s, e) { s.created = (s.created || 0) + 1 },
      $any: function (s) { s.n++ } })`
    const states = await withProjection(query, ({ handler }) =>
      outcomesOf(handler, [
        { source: anEvent("a", 0, "T"), partition: "", state: "" },
        { source: anEvent("a", 1, "T"), partition: "", state: "" }
      ])
    )
    expect(states.map((o) => [o.state, o.created])).toEqual([
      ['{"n":1,"created":1}', true],
      ['{"n":1,"created":1}', true]
    ])
  })

  it("a stored state is parsed when given, and the live one is used when not", async () => {
    const outcomes = await withProjection(counting, ({ handler }) =>
      outcomesOf(handler, [
        { source: anEvent("a", 0, "T"), partition: "", state: '{"c":41}' },
        { source: anEvent("a", 1, "T"), partition: "" },
        { source: anEvent("b", 0, "T"), partition: "b", state: '{"c":7}' },
        { source: anEvent("a", 2, "T"), partition: "", state: '{"c":100}' }
      ])
    )
    expect(outcomes.map((o) => [o.state, o.created])).toEqual([
      ['{"c":42}', false],
      ['{"c":43}', false],
      ['{"c":8}', false],
      ['{"c":101}', false]
    ])
  })

  it("the live state lasts across batches until the handler is told to forget it", async () => {
    const outcomes = await withProjection(counting, ({ handler }) =>
      Effect.gen(function* () {
        const first = yield* outcomesOf(handler, fresh([anEvent("a", 0, "T")]))
        const second = yield* outcomesOf(handler, [{ source: anEvent("a", 1, "T"), partition: "" }])
        handler.forgetLiveState()
        const third = yield* outcomesOf(handler, [{ source: anEvent("a", 2, "T"), partition: "", state: '{"c":5}' }])
        return [...first, ...second, ...third]
      })
    )
    expect(outcomes.map((o) => o.state)).toEqual(['{"c":1}', '{"c":2}', '{"c":6}'])
  })

  it("an item without a state after the live state was forgotten is the engine's defect", async () => {
    await expect(
      withProjection(counting, ({ handler }) => {
        handler.forgetLiveState()
        return outcomesOf(handler, [{ source: anEvent("a", 0, "T"), partition: "" }])
      })
    ).rejects.toThrow(/continues the partition/)
  })

  it("stateChanged compares the texts; the result is given only when the state changed", async () => {
    const query = "fromAll().when({$any: function (s, e) { return {v: e.body.v} }})"
    const outcomes = await run(query, [anEvent("a", 0, "T", { v: 1 }), anEvent("a", 1, "T", { v: 1 })])
    expect(outcomes.map((o) => [o.stateChanged, o.result])).toEqual([
      [true, '{"v":1}'],
      [false, undefined]
    ])
    expect("result" in outcomes[1]).toBe(false)
  })

  it("with no handler for an event (all events, no $any) the state is the event's data text", async () => {
    expect(await statesOf("fromAll()", [anEvent("a", 0, "T", '{"a" : 1}'), anEvent("a", 1, "U", "[2]")])).toEqual([
      '{"a" : 1}',
      "[2]"
    ])
    expect(
      await statesOf("fromAll().when({$init: function () { return {x: 1} }})", [
        anEvent("a", 0, "T", "plain text", { isJson: false })
      ])
    ).toEqual(["plain text"])
  })

  it("a JSON event whose data is only whitespace does not reach the handler, but $init and $created run", async () => {
    const query = `fromAll().when({$init: function () { return {n: 0} }, $created: function (s) { s.made = 1 },
      $any: function (s) { s.n++ }})`
    expect(await statesOf(query, [anEvent("a", 0, "T", "  \n"), anEvent("a", 1, "T", {})])).toEqual([
      '{"n":0,"made":1}',
      '{"n":1,"made":1}'
    ])
  })

  it("empty data: a JSON event reaches no handler, a non-JSON one does", async () => {
    const query =
      "fromAll().when({$any: function (s, e) { emit('out', 'Seen', {raw: e.bodyRaw}); return {seen: true} }})"
    const outcomes = await run(query, [anEvent("a", 0, "T", ""), anEvent("a", 1, "T", "", { isJson: false })])
    expect(outcomes.map((o) => [o.state, o.emitted.length])).toEqual([
      ["{}", 0],
      ['{"seen":true}', 1]
    ])
  })

  it("an event type's own handler wins over $any; the type is matched exactly", async () => {
    // Listing $any first keeps the definition valid (only "Typed" is read); the handler still falls back to $any.
    const query =
      "fromAll().when({$any: function () { return {by: 'any'} }, Typed: function () { return {by: 'typed'} }})"
    expect(await statesOf(query, [anEvent("a", 0, "Typed"), anEvent("a", 1, "typed")])).toEqual([
      '{"by":"typed"}',
      '{"by":"any"}'
    ])
  })

  it("handlers are called without a receiver", async () => {
    const query = "fromAll().when({$any: function (s) { 'use strict'; return {self: typeof this} }})"
    expect(await statesOf(query, [anEvent("a", 0, "T")])).toEqual(['{"self":"undefined"}'])
  })

  it("global variables of the script persist between items", async () => {
    const query = "var seen = 0; fromAll().when({$any: function (s) { seen++; return {seen: seen} }})"
    expect(await statesOf(query, [anEvent("a", 0, "T"), anEvent("a", 1, "T")])).toEqual(['{"seen":1}', '{"seen":2}'])
  })

  it("the definition functions are gone in the execution phase", async () => {
    const query = "fromAll().when({$any: function (s) { return {t: typeof fromAll + typeof when + typeof options} }})"
    expect(await statesOf(query, [anEvent("a", 0, "T")])).toEqual(['{"t":"undefinedundefinedundefined"}'])
  })
})

describe("$created", () => {
  it("$created runs before the handler, with the new state and the event (its category empty)", async () => {
    const query = `fromCategory('c').when({
      $init: function () { return {log: []} },
      $created: function (s, e) { s.log.push('created:' + e.streamId + ':' + JSON.stringify(e.category)) },
      $any: function (s, e) { s.log.push('handler:' + e.category) } })`
    const states = await statesOf(query, [
      anEvent("c-1", 0, "T", {}, { category: "c" }),
      anEvent("c-1", 1, "T", {}, { category: "c" })
    ])
    expect(states).toEqual([
      '{"log":["created:c-1:\\"\\"","handler:c"]}',
      '{"log":["created:c-1:\\"\\"","handler:c","handler:c"]}'
    ])
  })

  it("every $created handler runs, in the order registered", async () => {
    const query = `fromAll().when({$created: function (s) { s.a = 1 }, $any: function (s) { s.n = 1 }});
      on_event('$created', function (s) { s.b = s.a })`
    expect(await statesOf(query, [anEvent("a", 0, "T")])).toEqual(['{"a":1,"b":1,"n":1}'])
  })

  it("$created's return value is ignored", async () => {
    expect(
      await statesOf("fromAll().when({$created: function (s) { s.a = 1; return 'no' }, $any: function () {}})", [
        anEvent("a", 0, "T")
      ])
    ).toEqual(['{"a":1}'])
  })
})
