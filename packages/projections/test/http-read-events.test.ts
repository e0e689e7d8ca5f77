/**
 * `POST /projections/read-events`: the JSON body read into a request (members ignoring case, `maxEvents` 10
 * by default), and the answer as the reference writes it: default values left out, JSON payloads embedded
 * when they are objects, positions as compact JSON.
 */
import { describe, expect, it } from "vitest"
import type { ReadEventsItem, ReadEventsRequest } from "../src/service/Projections.js"
import { UserAuth, header, json, makeProjectionsNode, text } from "./httpSupport.js"

const Json = { "Content-Type": "application/json" }

const item = (overrides: Partial<ReadEventsItem> = {}): ReadEventsItem => ({
  eventStreamId: "account-1",
  eventNumber: 3,
  eventType: "Deposited",
  data: '{"amount":10}',
  metadata: '{"user":"x"}',
  linkMetadata: "",
  isJson: true,
  readerPosition: { kind: "position", phase: 0, commit: 500, prepare: 400 },
  ...overrides
})

const read = async (body: string, events: ReadonlyArray<ReadEventsItem> = []) => {
  const node = makeProjectionsNode()
  node.fake.answers.readEvents = {
    _tag: "Ok",
    value: { readerPosition: { kind: "position", phase: 0, commit: 500, prepare: 400 }, events }
  }
  const reply = await node.request("POST", "/projections/read-events", { auth: UserAuth, body, headers: Json })
  return { node, reply }
}

describe("POST /projections/read-events", () => {
  it("passes the query, the position and maxEvents, with who asks", async () => {
    const { node, reply } = await read(
      '{"query": {"allStreams": true, "allEvents": true}, "position": {"$c": 0, "$p": -1}, "maxEvents": 5}'
    )
    expect(reply.status).toBe(200)
    expect(node.fake.onlyCall()).toEqual({
      op: "readEvents",
      args: [
        {
          query: { allStreams: true, allEvents: true },
          position: { $c: 0, $p: -1 },
          maxEvents: 5
        } satisfies ReadEventsRequest,
        { runAs: { name: "user", roles: [] }, operator: false }
      ]
    })
  })

  it("reads members ignoring case; maxEvents is 10 when absent", async () => {
    const { node } = await read('{"Query": {"streams": ["a"]}, "POSITION": {"$s": {"a": -1}}}')
    expect(node.fake.onlyCall().args[0]).toEqual({
      query: { streams: ["a"] },
      position: { $s: { a: -1 } },
      maxEvents: 10
    })
  })

  it("answers the correlation id, the reader's position and no events", async () => {
    const { reply } = await read("{}")
    expect(header(reply, "Content-Type")).toBe("application/json; charset=utf-8")
    const body = text(reply)
    expect(body).toMatch(
      /^\{\n {2}"correlationId": "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",\n {2}"readerPosition": \{"\$c":500,"\$p":400\},\n {2}"events": \[\]\n\}$/
    )
  })

  it("embeds a JSON event's object payloads; members in the reference's order", async () => {
    const { reply } = await read("{}", [item({ linkMetadata: '{"$o":"account-1"}' })])
    const event = json(reply).events[0]
    expect(Object.keys(event)).toEqual([
      "eventStreamId",
      "eventNumber",
      "eventType",
      "data",
      "metadata",
      "linkMetadata",
      "isJson",
      "readerPosition"
    ])
    expect(event).toEqual({
      eventStreamId: "account-1",
      eventNumber: 3,
      eventType: "Deposited",
      data: { amount: 10 },
      metadata: { user: "x" },
      linkMetadata: { $o: "account-1" },
      isJson: true,
      readerPosition: { $c: 500, $p: 400 }
    })
    expect(text(reply)).toContain('"readerPosition": {"$c":500,"$p":400}\n')
  })

  it("leaves out event number 0, isJson false, and JSON payloads that read as nothing", async () => {
    const { reply } = await read("{}", [item({ eventNumber: 0, data: "", metadata: "null", linkMetadata: "  " })])
    expect(Object.keys(json(reply).events[0])).toEqual(["eventStreamId", "eventType", "isJson", "readerPosition"])
    const plain = await read("{}", [item({ isJson: false, data: '{"a":1}', metadata: "" })])
    expect(json(plain.reply).events[0]).toMatchObject({ data: '{"a":1}', metadata: "", linkMetadata: "" })
    expect(json(plain.reply).events[0].isJson).toBeUndefined()
  })

  it("a JSON event's payload that is not an object stays a string", async () => {
    const { reply } = await read("{}", [item({ data: "[1,2]", metadata: "not json", linkMetadata: "42" })])
    expect(json(reply).events[0]).toMatchObject({ data: "[1,2]", metadata: "not json", linkMetadata: "42" })
  })

  it.each([
    ["not json", "The read-events request is not a JSON object"],
    ["[]", "The read-events request is not a JSON object"],
    ['{"maxEvents": "ten"}', "maxEvents should be a whole number"],
    ['{"maxEvents": 2.5}', "maxEvents should be a whole number"]
  ])("a body %j is a 400 saying why", async (body, reason) => {
    const { node, reply } = await read(body)
    expect(reply.status).toBe(400)
    expect(text(reply)).toBe(reason)
    expect(node.fake.calls).toEqual([])
  })

  it("needs a JSON body (415) and an authenticated caller; the service's refusal is 401", async () => {
    const node = makeProjectionsNode()
    expect(
      (
        await node.request("POST", "/projections/read-events", {
          auth: UserAuth,
          body: "{}",
          headers: { "Content-Type": "text/plain" }
        })
      ).status
    ).toBe(415)
    expect((await node.request("POST", "/projections/read-events", { body: "{}", headers: Json })).status).toBe(401)
    node.fake.answers.readEvents = { _tag: "NotAuthorized" }
    const refused = await node.request("POST", "/projections/read-events", {
      auth: UserAuth,
      body: "{}",
      headers: Json
    })
    expect(refused.status).toBe(401)
    expect(text(refused)).toBe("Not authorized")
  })
})
