import { describe, expect, it } from "vitest"
import type { EmittedWrite } from "../src/engine/ProjectionHandler.js"
import { aRecord, anEvent, anItem, run, runFault } from "./executionSupport.js"

/** What a $any handler running `body` (with `s` and `e`) asks to write for one event. */
const writesOf = async (body: string, item = anEvent("src", 4, "T", { a: 1 })): Promise<ReadonlyArray<EmittedWrite>> =>
  (await run(`fromAll().when({$any: function (s, e) { ${body} }})`, [item]))[0].emitted

const faultMessage = async (body: string, item = anEvent("src", 4, "T", { a: 1 })): Promise<string> =>
  (await runFault(`fromAll().when({$any: function (s, e) { ${body} }})`, [item])).message

describe("emit", () => {
  it("writes a JSON event with the body serialized like a state", async () => {
    expect(await writesOf("emit('out', 'Done', {n: 1, big: 5e123, d: new Date(0), x: undefined})")).toEqual([
      { stream: "out", eventType: "Done", isJson: true, data: '{"n":1,"big":5E+123,"d":{}}', extraMetadata: [] }
    ])
  })

  it("metadata members are JSON texts; undefined ones are left out", async () => {
    const [write] = await writesOf(
      "emit('out', 'Done', {}, {s: 'x', q: '\"q\"', n: null, u: undefined, o: {a: [1]}, b: true})"
    )
    expect(write.extraMetadata).toEqual([
      ["s", '"x"'],
      ["q", '"\\"q\\""'],
      ["n", "null"],
      ["o", '{"a":[1]}'],
      ["b", "true"]
    ])
  })

  it("emitting the event itself writes its own members, the lazy ones included", async () => {
    const item = anEvent("src", 4, "T", { a: 1 }, { metadata: '{"m":1}' })
    const [write] = await writesOf("emit('out', 'Copy', e)", item)
    expect(JSON.parse(write.data)).toEqual({
      partition: "",
      bodyRaw: '{"a":1}',
      metadataRaw: '{"m":1}',
      streamId: "src",
      eventId: "00000000-0000-4000-8000-000000000004",
      eventType: "T",
      linkMetadataRaw: null,
      isJson: true,
      category: null,
      sequenceNumber: 4,
      body: { a: 1 },
      data: { a: 1 },
      metadata: { m: 1 },
      linkMetadata: null
    })
  })

  it("writes in call order, $created's first", async () => {
    const outcomes = await run(
      "fromAll().when({$created: function () { emit('c', 'Created', {}) }, $any: function () { emit('h', 'One', {}); emit('h', 'Two', {}) }})",
      [anEvent("a", 0, "T"), anEvent("a", 1, "T")]
    )
    expect(outcomes.map((o) => o.emitted.map((w) => w.eventType))).toEqual([
      ["Created", "One", "Two"],
      ["One", "Two"]
    ])
  })

  it("checks its arguments with the reference's messages", async () => {
    const cases: Array<[string, string]> = [
      ["emit('out', 'T')", "invalid number of parameters"],
      ["emit(null, 'T', {})", "Value cannot be null. (Parameter 'streamId')"],
      ["emit(' ', 'T', {})", "Value cannot be null. (Parameter 'streamId')"],
      ["emit('', 'T', {})", "Value cannot be null. (Parameter 'streamId')"],
      ["emit(1, 'T', {})", "string expected (Parameter 'streamId')"],
      ["emit('out', undefined, {})", "Value cannot be null. (Parameter 'eventName')"],
      ["emit('out', {}, {})", "string expected (Parameter 'eventName')"],
      ["emit('out', 'T', null)", "Value cannot be null. (Parameter 'eventBody')"],
      ["emit('out', 'T', 'text')", "object expected (Parameter 'eventBody')"],
      ["emit('out', 'T', {}, undefined)", "object expected (Parameter 'metadata')"],
      ["emit('out', 'T', {}, 1)", "object expected (Parameter 'metadata')"]
    ]
    for (const [call, message] of cases) expect(await faultMessage(call)).toBe(message)
  })

  it("an argument error faults the item even when the handler catches it", async () => {
    expect(await faultMessage("try { emit('out') } catch (x) {} return {fine: true}")).toBe(
      "invalid number of parameters"
    )
  })

  it("arrays are bodies; a fifth argument is not read", async () => {
    expect((await writesOf("emit('out', 'T', [1, 2], {m: 1}, 'extra')"))[0]).toMatchObject({
      data: "[1,2]",
      extraMetadata: []
    })
  })

  it("is a global that is writable, configurable and not enumerable", async () => {
    const [outcome] = await run(
      "fromAll().when({$any: function () { var d = Object.getOwnPropertyDescriptor(globalThis, 'emit'); return [d.writable, d.enumerable, d.configurable, emit.length, linkTo.length, linkStreamTo.length, copyTo.length] }})",
      [anEvent("a", 0, "T")]
    )
    expect(outcome.state).toBe("[true,false,true,4,3,3,3]")
  })
})

describe("linkTo", () => {
  it("writes a link to the event given, metadata rendered raw", async () => {
    const writes = await writesOf(
      "linkTo('out', e, {s: 'a\"b', n: 1.5, big: 1e21, t: true, z: null, u: undefined, o: {k: 1}})"
    )
    expect(writes).toEqual([
      {
        stream: "out",
        eventType: "$>",
        isJson: false,
        data: "4@src",
        extraMetadata: [
          ["s", '"a"b"'],
          ["n", "1.5"],
          ["big", "1E+21"],
          ["t", "true"],
          ["z", "null"],
          ["u", "null"],
          ["o", '{"k":1}']
        ]
      }
    ])
  })

  it("links to what the handler sees: a resolved link's target", async () => {
    const link = aRecord("$ce-s", 9, "$>", "2@s-1", { isJson: false })
    const item = anItem(aRecord("s-1", 2, "T", {}), { link, category: "s" })
    expect((await writesOf("linkTo('mine', e)", item))[0].data).toBe("2@s-1")
  })

  it("links to any object with a number and a stream", async () => {
    expect((await writesOf("linkTo('out', {sequenceNumber: 7.9, streamId: 'x'})"))[0].data).toBe("7@x")
  })

  it("checks its arguments with the reference's messages", async () => {
    const cases: Array<[string, string]> = [
      ["linkTo('out')", "wrong number of parameters"],
      ["linkTo('out', e, {}, 1)", "wrong number of parameters"],
      ["linkTo('', e)", "Value cannot be null. (Parameter 'streamId')"],
      ["linkTo('out', null)", "Value cannot be null. (Parameter 'event')"],
      ["linkTo('out', 5)", "object expected (Parameter 'event')"],
      ["linkTo('out', {})", "Invalid link to event undefined@undefined"],
      ["linkTo('out', {sequenceNumber: '1', streamId: 's'})", "Invalid link to event 1@s"],
      ["linkTo('out', e, null)", "Value cannot be null. (Parameter 'metaData')"],
      ["linkTo('out', e, 'm')", "object expected (Parameter 'metaData')"]
    ]
    for (const [call, message] of cases) expect(await faultMessage(call)).toBe(message)
  })
})

describe("linkStreamTo and copyTo", () => {
  it("linkStreamTo writes a $@ event whose data is the stream", async () => {
    expect(await writesOf("linkStreamTo('out', 'other-1')")).toEqual([
      { stream: "out", eventType: "$@", isJson: false, data: "other-1", extraMetadata: [] }
    ])
  })

  it("linkStreamTo checks both streams, and faults when given metadata (as the reference does)", async () => {
    expect(await faultMessage("linkStreamTo('out', '')")).toBe("Value cannot be null. (Parameter 'linkedStreamId')")
    expect(await faultMessage("linkStreamTo(3, 'x')")).toBe("string expected (Parameter 'streamId')")
    expect(await faultMessage("linkStreamTo('out', 'x', {})")).toBe("The value is not an object")
  })

  it("copyTo does nothing", async () => {
    expect(await writesOf("copyTo('out', e); copyTo()")).toEqual([])
  })

  it("log does nothing", async () => {
    const [outcome] = await run(
      "fromAll().when({$any: function () { log('x', {a: 1}); return {ok: log() === undefined} }})",
      [anEvent("a", 0, "T")]
    )
    expect(outcome.state).toBe('{"ok":true}')
  })
})
