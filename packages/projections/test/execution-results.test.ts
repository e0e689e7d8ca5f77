import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { anEvent, faultOf, fresh, outcomesOf, run, withProjection } from "./executionSupport.js"

describe("results", () => {
  it("without a transform the result is the state text; an empty state is no result", async () => {
    const outcomes = await run(
      "fromAll().when({$any: function (s, e) { return e.sequenceNumber === 1 ? null : {n: e.sequenceNumber} }}).outputState()",
      [anEvent("a", 0, "T"), anEvent("a", 1, "T")]
    )
    expect(outcomes.map((o) => [o.state, o.result])).toEqual([
      ['{"n":0}', '{"n":0}'],
      ["", null]
    ])
  })

  it("transformBy gives the result; a transform that returns nothing gives no result", async () => {
    const query = (transform: string) =>
      `fromAll().when({$init: function () { return {n: 0} }, $any: function (s) { s.n++ }}).transformBy(${transform})`
    expect((await run(query("function (s) { return {double: s.n * 2} }"), [anEvent("a", 0, "T")]))[0].result).toBe(
      '{"double":2}'
    )
    expect((await run(query("function (s) { s.seen = true }"), [anEvent("a", 0, "T")]))[0].result).toBeNull()
  })

  it("a string result is serialized as JSON", async () => {
    const query = "fromAll().when({$any: function () { return {n: 1} }}).transformBy(function () { return 'text' })"
    expect((await run(query, [anEvent("a", 0, "T")]))[0].result).toBe('"text"')
  })

  it("filterBy passes only on a strict true", async () => {
    const query = (filter: string) =>
      `fromAll().when({$any: function (s, e) { return {n: e.sequenceNumber} }}).filterBy(function (s) { return ${filter} })`
    expect((await run(query("true"), [anEvent("a", 0, "T")]))[0].result).toBe('{"n":0}')
    for (const filter of ["1", "'yes'", "{}", "false", "undefined"])
      expect((await run(query(filter), [anEvent("a", 0, "T")]))[0].result).toBeNull()
  })

  it("the chain runs in order and stops at null", async () => {
    const query = `fromAll().when({$any: function (s, e) { return {n: e.sequenceNumber} }})
      .transformBy(function (s) { return s.n === 0 ? null : {m: s.n} })
      .filterBy(function (r) { return r.m > 1 })
      .transformBy(function (r) { return [r.m] })`
    const outcomes = await run(query, [anEvent("a", 0, "T"), anEvent("a", 1, "T"), anEvent("a", 2, "T")])
    expect(outcomes.map((o) => o.result)).toEqual([null, null, "[2]"])
  })

  it("$defines_state_transform alone gives the state as the result", async () => {
    const query = "fromAll().when({$any: function () { return 'raw' }}).$defines_state_transform()"
    expect((await run(query, [anEvent("a", 0, "T")]))[0]).toMatchObject({ state: "raw", result: '"raw"' })
  })

  it("a transform's mutation leaks into the live state, not into the state already taken", async () => {
    const query = `fromAll().when({$init: function () { return {n: 0} }, $any: function (s) { s.n++ }})
      .transformBy(function (s) { s.touched = (s.touched || 0) + 1; return s })`
    const outcomes = await run(query, [anEvent("a", 0, "T"), anEvent("a", 1, "T")])
    expect(outcomes.map((o) => [o.state, o.result])).toEqual([
      ['{"n":1}', '{"n":1,"touched":1}'],
      ['{"n":2,"touched":1}', '{"n":2,"touched":2}']
    ])
  })

  it("the chain does not run when the state text did not change", async () => {
    const query = `var runs = 0; fromAll().when({$any: function (s, e) { return {v: e.body.v} }})
      .transformBy(function (s) { runs++; return {runs: runs} })`
    const items = [anEvent("a", 0, "T", { v: 1 }), anEvent("a", 1, "T", { v: 1 }), anEvent("a", 2, "T", { v: 2 })]
    const outcomes = await run(query, items)
    expect(outcomes.map((o) => [o.stateChanged, o.result])).toEqual([
      [true, '{"runs":1}'],
      [false, undefined],
      [true, '{"runs":2}']
    ])
  })
})

describe("bi-state", () => {
  const query = `fromAll().partitionBy(function (e) { return e.body.p }).when({
    $init: function () { return {count: 0} },
    $initShared: function () { return {total: 0} },
    $any: function (s, e) { s[0].count++; s[1].total++; if (e.body.other) return {replaced: true} }
  }).transformBy(function (s) { return {pair: Array.isArray(s)} })`

  it("handlers get [partition, shared]; each is stored apart; the transform sees the pair", async () => {
    const outcomes = await withProjection(query, ({ handler }) =>
      outcomesOf(handler, [
        { source: anEvent("a", 0, "T", { p: "x" }), partition: "x", state: "", shared: "" },
        { source: anEvent("a", 1, "T", { p: "x" }), partition: "x" },
        { source: anEvent("a", 2, "T", { p: "y" }), partition: "y", state: "", shared: '{"total":10}' }
      ])
    )
    expect(outcomes.map((o) => [o.state, o.shared, o.result, o.created])).toEqual([
      ['{"count":1}', '{"total":1}', '{"pair":true}', true],
      ['{"count":2}', '{"total":2}', '{"pair":true}', false],
      ['{"count":1}', '{"total":11}', '{"pair":true}', true]
    ])
  })

  it("a returned value that is not an array is the partition's state; the shared state stays", async () => {
    const outcomes = await withProjection(query, ({ handler }) =>
      outcomesOf(handler, [
        { source: anEvent("a", 0, "T", { p: "x" }), partition: "x", state: "", shared: '{"total":5}' },
        { source: anEvent("a", 1, "T", { p: "x", other: true }), partition: "x" }
      ])
    )
    expect(outcomes.map((o) => [o.state, o.shared])).toEqual([
      ['{"count":1}', '{"total":6}'],
      ['{"replaced":true}', '{"total":6}']
    ])
  })

  it("a stored shared state is loaded when given", async () => {
    const [outcome] = await withProjection(query, ({ handler }) =>
      outcomesOf(handler, [
        { source: anEvent("a", 0, "T", { p: "x" }), partition: "x", state: '{"count":3}', shared: '{"total":7}' }
      ])
    )
    expect([outcome.state, outcome.shared, outcome.created]).toEqual(['{"count":4}', '{"total":8}', false])
  })
})

describe("$deleted", () => {
  const query = `fromAll().foreachStream().when({
    $init: function () { return {n: 0} },
    $any: function (s) { s.n++ },
    $deleted: function (s, e, partition, soft) { s.deleted = [e, partition, soft]; return 'ignored' }
  })`

  it("is called with the state, null, the partition and false; its mutations are stored", async () => {
    const outcomes = await withProjection(query, ({ handler }) =>
      outcomesOf(handler, [
        { source: anEvent("s-1", 0, "T"), partition: "s-1", state: "" },
        { source: anEvent("s-1", 1, "$streamDeleted", {}, { kind: "deleted" }), partition: "s-1" }
      ])
    )
    expect(outcomes[1]).toMatchObject({
      state: '{"n":1,"deleted":[null,"s-1",false]}',
      stateChanged: true,
      created: false
    })
    expect(outcomes[1].result).toBe('{"n":1,"deleted":[null,"s-1",false]}')
  })

  it("a partition never seen is initialised first ($created does not run)", async () => {
    const [outcome] = await withProjection(
      query.replace("$any", "$created: function (s) { s.c = 1 }, $any"),
      ({ handler }) =>
        outcomesOf(handler, [{ source: anEvent("s-2", 0, "T", {}, { kind: "deleted" }), partition: "s-2", state: "" }])
    )
    expect(outcome.state).toBe('{"n":0,"deleted":[null,"s-2",false]}')
  })
})

describe("partitionBy", () => {
  const partitions = (fn: string, items = [anEvent("a", 0, "T", { k: "x" })]) =>
    withProjection(`fromAll().partitionBy(${fn}).when({$any: function () {}})`, ({ handler }) =>
      handler.partitionsOf(items)
    )

  it("a string is the partition, a number its text, anything else skips the item", async () => {
    expect(await partitions("function (e) { return e.body.k }")).toEqual(["x"])
    expect(await partitions("function (e) { return '' }")).toEqual([""])
    const values = ["42", "1.5", "1e21", "-0", "null", "undefined", "true", "{}", "['a']"]
    const items = values.map((v, i) => anEvent("a", i, "T", {}))
    expect(await partitions(`function (e) { return [${values.join(",")}][e.sequenceNumber] }`, items)).toEqual([
      "42",
      "1.5",
      "1E+21",
      "-0",
      undefined,
      undefined,
      undefined,
      undefined,
      undefined
    ])
  })

  it("sees the envelope with an empty partition and the item's category", async () => {
    expect(
      await partitions("function (e) { return JSON.stringify([e.partition, e.category, e.streamId]) }", [
        anEvent("c-1", 0, "T", {}, { category: "c" })
      ])
    ).toEqual(['["","c","c-1"]'])
  })

  it("a throw faults with nothing done", async () => {
    const fault = await withProjection(
      "fromAll().partitionBy(function (e) { if (e.sequenceNumber === 1) throw new Error('no key') }).when({$any: function () {}})",
      ({ handler }) =>
        Effect.flip(handler.partitionsOf([anEvent("a", 0, "T"), anEvent("a", 1, "T"), anEvent("a", 2, "T")]))
    )
    expect([fault.index, fault.message, fault.done]).toEqual([1, "no key", []])
  })

  it("what partitionBy emits is written with the next item processed", async () => {
    const outcomes = await withProjection(
      "fromAll().partitionBy(function (e) { emit('side', 'P', {}); return 'p' }).when({$any: function () { emit('main', 'H', {}) }})",
      ({ handler }) =>
        Effect.flatMap(handler.partitionsOf([anEvent("a", 0, "T")]), () =>
          outcomesOf(handler, fresh([anEvent("a", 0, "T")], "p"))
        )
    )
    expect(outcomes[0].emitted.map((w) => w.stream)).toEqual(["side", "main"])
  })

  it("a fault in the partition function drops the live state", async () => {
    await expect(
      withProjection(
        "fromAll().partitionBy(function (e) { if (e.body.bad) throw 'x'; return 'p' }).when({$any: function () {}})",
        ({ handler }) =>
          Effect.gen(function* () {
            yield* outcomesOf(handler, fresh([anEvent("a", 0, "T")], "p"))
            yield* Effect.either(handler.partitionsOf([anEvent("a", 1, "T", { bad: true })]))
            return yield* faultOf(handler, [{ source: anEvent("a", 2, "T"), partition: "p" }])
          })
      )
    ).rejects.toThrow(/continues the partition/)
  })
})
