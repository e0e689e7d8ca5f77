import { describe, expect, it } from "vitest"
import { aRecord, anEvent, anItem, outcomesOf, runFault, statesOf, withProjection } from "./executionSupport.js"

/** The state a handler returning `expression` (over `e`) stores for one item. */
const seen = async (expression: string, item = anEvent("s-1", 3, "T", { a: 1 })): Promise<unknown> => {
  const [state] = await statesOf(`fromAll().when({$any: function (s, e) { return {v: ${expression}} }})`, [item])
  return (JSON.parse(state) as { v: unknown }).v
}

describe("the event envelope", () => {
  it("carries the event's fields, in the reference's order, then the lazy members", async () => {
    const item = anEvent(
      "s-1",
      3,
      "Thing",
      { a: 1 },
      { metadata: '{"m":2}', eventId: "AB5F0000-0000-4000-8000-00000000000A" }
    )
    expect(await seen("Object.keys(e)", item)).toEqual([
      "partition",
      "bodyRaw",
      "metadataRaw",
      "streamId",
      "eventId",
      "eventType",
      "linkMetadataRaw",
      "isJson",
      "category",
      "sequenceNumber",
      "body",
      "data",
      "metadata",
      "linkMetadata"
    ])
    expect(
      await seen(
        "[e.partition, e.bodyRaw, e.metadataRaw, e.streamId, e.eventId, e.eventType, e.linkMetadataRaw, e.isJson, e.category, e.sequenceNumber]",
        item
      )
    ).toEqual(["", '{"a":1}', '{"m":2}', "s-1", "ab5f0000-0000-4000-8000-00000000000a", "Thing", null, true, null, 3])
  })

  it("its members are own, enumerable and not writable", async () => {
    const described = (await seen(
      "['eventType', 'sequenceNumber', 'body'].map(function (k) { e[k]; var d = Object.getOwnPropertyDescriptor(e, k); return [d.enumerable, d.writable] })"
    )) as Array<Array<boolean>>
    expect(described).toEqual([
      [true, false],
      [true, false],
      [true, false]
    ])
    expect(
      await seen(
        "(function () { 'use strict'; try { e.eventType = 'x'; return 'assigned' } catch (x) { return x.name } })()"
      )
    ).toBe("TypeError")
    expect(await seen("(function () { e.eventType = 'x'; return e.eventType })()")).toBe("T")
  })

  it("body and data are the same object, parsed once; the parsed object can be changed", async () => {
    expect(await seen("e.body === e.data && e.body === e.body")).toBe(true)
    expect(await seen("(function () { e.body.a = 5; return e.data.a })()")).toBe(5)
  })

  it("a non-JSON event has no body or data", async () => {
    const item = anEvent("s", 0, "T", "plain", { isJson: false })
    expect(await seen("[typeof e.body, typeof e.data, 'body' in e, e.bodyRaw, e.isJson]", item)).toEqual([
      "undefined",
      "undefined",
      false,
      "plain",
      false
    ])
  })

  it("reading the body of JSON that is not an object or array faults, even when caught", async () => {
    const fault = await runFault("fromAll().when({$any: function (s, e) { try { e.body } catch (x) {} }})", [
      anEvent("s", 0, "T", "123")
    ])
    expect(fault.message).toBe("The event's data is JSON but not an object or an array")
    expect(fault.index).toBe(0)
  })

  it("an array body is read", async () => {
    expect(await seen("e.body.length", anEvent("s", 0, "T", [1, 2, 3]))).toBe(3)
  })

  it("metadata is parsed when read, even for a non-JSON event; null when there is none", async () => {
    expect(await seen("e.metadata", anEvent("s", 0, "T", "x", { isJson: false, metadata: '{"k":[1]}' }))).toEqual({
      k: [1]
    })
    expect(await seen("[e.metadata, e.metadataRaw, e.linkMetadata, e.linkMetadataRaw]")).toEqual([
      null,
      null,
      null,
      null
    ])
  })

  it("metadata that is not JSON faults only when read", async () => {
    const item = anEvent("s", 0, "T", {}, { metadata: "not json" })
    expect(await seen("e.metadataRaw", item)).toBe("not json")
    const fault = await runFault("fromAll().when({$any: function (s, e) { return {m: e.metadata} }})", [item])
    expect(fault.message).toMatch(/unexpected|JSON/i)
  })

  it("empty data is a null bodyRaw", async () => {
    expect(await seen("e.bodyRaw", anEvent("s", 0, "T", "", { isJson: false }))).toBeNull()
  })

  it("a resolved link's metadata is linkMetadata; the event is the target's", async () => {
    const link = aRecord("$ce-s", 7, "$>", "0@s-1", { isJson: false, metadata: '{"$o":"s-1"}' })
    const item = anItem(aRecord("s-1", 0, "T", { a: 1 }), { link, category: "s" })
    expect(await seen("[e.streamId, e.sequenceNumber, e.linkMetadataRaw, e.linkMetadata, e.category]", item)).toEqual([
      "s-1",
      0,
      '{"$o":"s-1"}',
      { $o: "s-1" },
      "s"
    ])
  })

  it("an unresolved link (fromAll with $includeLinks) is an event of type $> with its text", async () => {
    const item = anEvent("$ce-s", 7, "$>", "0@s-1", { isJson: false })
    expect(await seen("[e.eventType, e.bodyRaw, e.isJson, typeof e.body]", item)).toEqual([
      "$>",
      "0@s-1",
      false,
      "undefined"
    ])
  })

  it("a new envelope per call: what a handler adds to one is not on the next", async () => {
    const query =
      "fromAll().when({$any: function (s, e) { var had = e.mark; e.mark = 1; return {had: had === undefined} }})"
    expect(await statesOf(query, [anEvent("a", 0, "T"), anEvent("a", 1, "T")])).toEqual([
      '{"had":true}',
      '{"had":true}'
    ])
  })

  it("the partition is the item's", async () => {
    const outcomes = await withProjection(
      "fromAll().foreachStream().when({$any: function (s, e) { return {p: e.partition} }})",
      ({ handler }) => outcomesOf(handler, [{ source: anEvent("a", 0, "T"), partition: "a", state: "" }])
    )
    expect(outcomes[0].state).toBe('{"p":"a"}')
  })
})
