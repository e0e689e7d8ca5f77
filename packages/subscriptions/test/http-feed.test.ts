import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { defaultGroupSettings } from "../src/config/GroupSettings.js"
import { message } from "./fakeSubscriptions.js"
import { AdminAuth, UserAuth, header, json, text, withNode, type SubsNode } from "./httpHarness.js"

const CompetingJson = { Accept: "application/vnd.eventstore.competingatom+json" }
const A = "00000000-0000-4000-8000-00000000000a"
const B = "00000000-0000-4000-8000-00000000000b"

const withGroup = (node: SubsNode, ...messages: ReadonlyArray<ReturnType<typeof message>>) => {
  node.fake.groups.set("orders::g1", {
    spec: { stream: "orders", group: "g1", settings: defaultGroupSettings },
    pending: [...messages],
    info: {}
  })
}

describe("the competing feed", () => {
  it("lists the messages newest first, with ack/nack links and retry counts", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node, message("orders", 0, A), message("orders", 1, B, 2))
        const reply = yield* node.request("GET", "/subscriptions/orders/g1/5", {
          auth: UserAuth,
          headers: CompetingJson
        })
        expect(reply.status).toBe(200)
        expect(header(reply, "content-type")).toBe("application/vnd.eventstore.competingatom+json; charset=utf-8")
        const feed = json(reply)
        const self = "http://localhost:2113/subscriptions/orders/g1"
        expect(feed).toMatchObject({
          title: "Messages for 'orders/g1'",
          id: self,
          updated: "2024-01-01T00:00:01Z",
          streamId: null,
          headOfStream: false,
          selfUrl: null,
          eTag: null
        })
        expect(feed.links.map((l: { relation: string; uri: string }) => [l.relation, l.uri])).toEqual([
          ["ackAll", `${self}/ack?ids=${A},${B}`],
          ["nackAll", `${self}/nack?ids=${A},${B}`],
          ["previous", `${self}/5`],
          ["self", self]
        ])
        expect(feed.entries.map((e: { title: string; retryCount: number }) => [e.title, e.retryCount])).toEqual([
          ["1@orders", 2],
          ["0@orders", 0]
        ])
        expect(feed.entries[0].links.map((l: { relation: string; uri: string }) => [l.relation, l.uri])).toEqual([
          ["edit", "http://localhost:2113/streams/orders/1"],
          ["alternate", "http://localhost:2113/streams/orders/1"],
          ["ack", `${self}/ack/${B}`],
          ["nack", `${self}/nack/${B}`]
        ])
        expect(node.fake.calls.at(-1)).toMatchObject({ op: "read", options: { count: 5, waitMillis: 0 } })
      })
    ))

  it("is an empty feed with previous and self only when nothing is available; one message by default", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node)
        const feed = json(
          yield* node.request("GET", "/subscriptions/orders/g1", { auth: UserAuth, headers: CompetingJson })
        )
        expect(feed.updated).toBe("0001-01-01T00:00:00Z")
        expect(feed.entries).toEqual([])
        expect(feed.links.map((l: { relation: string }) => l.relation)).toEqual(["previous", "self"])
        expect(feed.links[0].uri).toBe("http://localhost:2113/subscriptions/orders/g1/1")
        expect(node.fake.calls.at(-1)).toMatchObject({ options: { count: 1 } })
      })
    ))

  it("embeds at the requested level", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node, message("orders", 0, A))
        const feed = json(
          yield* node.request("GET", "/subscriptions/orders/g1/1?embed=body", {
            auth: UserAuth,
            headers: CompetingJson
          })
        )
        expect(feed.entries[0]).toMatchObject({ eventId: A, eventNumber: 0, data: `{"n":0}`, retryCount: 0 })
      })
    ))

  it("is Atom XML by default, with retryCount and the extra links", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node, message("orders", 0, A, 1))
        const reply = yield* node.request("GET", "/subscriptions/orders/g1", { auth: UserAuth })
        expect(header(reply, "content-type")).toBe("application/vnd.eventstore.competingatom+xml; charset=utf-8")
        const xml = text(reply)
        expect(xml).toContain("<title>Messages for 'orders/g1'</title>")
        expect(xml).toContain(`<link href="http://localhost:2113/subscriptions/orders/g1/ack?ids=${A}" rel="ackAll" />`)
        expect(xml).toContain(
          `<summary>T</summary><retryCount>1</retryCount><link href="http://localhost:2113/streams/orders/0" rel="edit" />` +
            `<link href="http://localhost:2113/streams/orders/0" rel="alternate" />` +
            `<link href="http://localhost:2113/subscriptions/orders/g1/ack/${A}" rel="ack" />` +
            `<link href="http://localhost:2113/subscriptions/orders/g1/nack/${A}" rel="nack" />`
        )
      })
    ))

  it("offers the competing types only", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node)
        for (const accept of ["application/json", "text/xml", "application/vnd.eventstore.atom+json"]) {
          const reply = yield* node.request("GET", "/subscriptions/orders/g1", {
            auth: UserAuth,
            headers: { Accept: accept }
          })
          expect(reply.status).toBe(406)
        }
        const kurrent = yield* node.request("GET", "/subscriptions/orders/g1", {
          auth: UserAuth,
          headers: { Accept: "application/vnd.kurrent.competingatom+json" }
        })
        expect(kurrent.status).toBe(200)
      })
    ))

  it("refuses counts outside 1..100 with the reference's message", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node)
        for (const [count, shown] of [
          ["0", "0"],
          ["101", "101"],
          ["-3", "-3"],
          ["abc", "0"]
        ]) {
          const reply = yield* node.request("GET", `/subscriptions/orders/g1/${count}`, { auth: UserAuth })
          expect(reply.status).toBe(400)
          expect(text(reply)).toBe(`Message count must be an integer between 1 and 100 'count' ='${shown}'`)
        }
        expect(node.fake.calls).toEqual([])
      })
    ))

  it('answers 404 "Not found." for a missing group and 503 when the groups are not running here', () =>
    withNode((node) =>
      Effect.gen(function* () {
        const missing = yield* node.request("GET", "/subscriptions/orders/nope", {
          auth: UserAuth,
          headers: CompetingJson
        })
        expect(missing.status).toBe(404)
        expect(text(missing)).toBe(`"Not found."`)
        const missingXml = yield* node.request("GET", "/subscriptions/orders/nope", { auth: UserAuth })
        expect(text(missingXml)).toBe(`<?xml version="1.0" encoding="utf-8"?><string>Not found.</string>`)
        node.fake.ready = false
        const notReady = yield* node.request("GET", "/subscriptions/orders/nope", { auth: UserAuth })
        expect(notReady.status).toBe(503)
      })
    ))

  it("needs read access to the stream", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node)
        node.deny.add("user|orders|$r")
        expect((yield* node.request("GET", "/subscriptions/orders/g1", { auth: UserAuth })).status).toBe(401)
        expect((yield* node.request("GET", "/subscriptions/orders/g1")).status).toBe(401)
        expect((yield* node.request("GET", "/subscriptions/orders/g1", { auth: AdminAuth })).status).toBe(200)
        expect(node.fake.calls).toHaveLength(1)
      })
    ))
})

describe("long-poll on group reads", () => {
  it("waits as long as ES-LongPoll or Kurrent-LongPoll says", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node)
        yield* node.request("GET", "/subscriptions/orders/g1/10", { auth: UserAuth, headers: { "ES-LongPoll": "5" } })
        expect(node.fake.calls.at(-1)).toMatchObject({ options: { count: 10, waitMillis: 5000 } })
        yield* node.request("GET", "/subscriptions/orders/g1", { auth: UserAuth, headers: { "Kurrent-LongPoll": "2" } })
        expect(node.fake.calls.at(-1)).toMatchObject({ options: { count: 1, waitMillis: 2000 } })
      })
    ))

  it("refuses a malformed long-poll header as stream reads do", () =>
    withNode((node) =>
      Effect.gen(function* () {
        withGroup(node)
        for (const value of ["0", "-1", "soon"]) {
          const reply = yield* node.request("GET", "/subscriptions/orders/g1", {
            auth: UserAuth,
            headers: { "ES-LongPoll": value }
          })
          expect(reply.status).toBe(400)
          expect(text(reply)).toBe("Kurrent-LongPoll header in wrong format.")
        }
        expect(node.fake.calls).toEqual([])
      })
    ))
})
