// Persistent subscriptions over HTTP on a whole node (the real service, store and security), end to end:
// create, read through the group, ack, nack to the parked stream, view and replay it, info, delete.
import { describe, expect, it } from "vitest"
import type { Reply } from "@vellum/http"
import { admin, text, withNode, type Call } from "./nodeAppSupport.js"

const Json = { "Content-Type": "application/json" }
const Competing = { Accept: "application/vnd.eventstore.competingatom+json" }
const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

/** The groups load once the node leads: until then the routes answer 503. */
const untilReady = async (call: Call, request: () => Promise<Reply>): Promise<Reply> => {
  for (;;) {
    const reply = await request()
    if (reply.status !== 503) return reply
    await new Promise((resolve) => setImmediate(resolve))
  }
}

const body = (reply: Reply) => JSON.parse(text(reply))

const append = (call: Call, stream: string, ns: ReadonlyArray<number>) =>
  call(
    "POST",
    `/streams/${stream}`,
    admin,
    { "Content-Type": "application/vnd.eventstore.events+json" },
    JSON.stringify(ns.map((n) => ({ eventId: id(n), eventType: "T", data: { n } })))
  )

describe("persistent subscriptions over HTTP on a node", () => {
  it("delivers, acks, parks, shows and replays", () =>
    withNode(async (call) => {
      expect((await append(call, "orders", [1, 2, 3])).status).toBe(201)
      const created = await untilReady(call, () => call("PUT", "/subscriptions/orders/g1", admin, Json, "{}"))
      expect(created.status).toBe(201)
      expect((await call("PUT", "/subscriptions/orders/g1", admin, Json, "{}")).status).toBe(409)

      const first = body(await untilReady(call, () => call("GET", "/subscriptions/orders/g1/2", admin, Competing)))
      expect(first.entries.map((e: { title: string }) => e.title)).toEqual(["1@orders", "0@orders"])
      const acked = await call("POST", `/subscriptions/orders/g1/ack/${id(1)}`, admin)
      expect(acked.status).toBe(202)
      const nacked = await call("POST", `/subscriptions/orders/g1/nack/${id(2)}?action=park`, admin)
      expect(nacked.status).toBe(202)

      const rest = body(await call("GET", "/subscriptions/orders/g1/10", admin, Competing))
      expect(rest.entries.map((e: { title: string; retryCount: number }) => [e.title, e.retryCount])).toEqual([
        ["2@orders", 0]
      ])

      // The park is written in the background: wait until the parked stream shows it.
      let parked: Reply
      do {
        parked = await call("GET", "/subscriptions/viewparkedmessages/orders/g1/head/backward/10", admin, Competing)
      } while (parked.status === 404)
      expect(parked.status).toBe(200)
      expect(body(parked).entries).toHaveLength(1)

      const info = body(await call("GET", "/subscriptions/orders/g1/info", admin))
      expect(info).toMatchObject({ eventStreamId: "orders", groupName: "g1", parkedMessageCount: 1 })
      expect(info.config.startFrom).toBe(0)

      expect((await call("POST", "/subscriptions/orders/g1/replayParked", admin)).status).toBe(200)
      const replayed = body(await call("GET", "/subscriptions/orders/g1/10", admin, Competing))
      expect(replayed.entries.map((e: { title: string }) => e.title)).toContain("1@orders")

      const list = body(await call("GET", "/subscriptions", admin))
      expect(list.map((s: { groupName: string }) => s.groupName)).toEqual(["g1"])
      expect((await call("DELETE", "/subscriptions/orders/g1", admin)).status).toBe(200)
      expect((await call("GET", "/subscriptions/orders/g1/info", admin)).status).toBe(404)
    }))

  it("serves a group on $all with an event-type filter", () =>
    withNode(async (call) => {
      await call(
        "POST",
        "/streams/mixed",
        admin,
        { "Content-Type": "application/vnd.eventstore.events+json" },
        JSON.stringify([
          { eventId: id(1), eventType: "order-placed", data: { n: 1 } },
          { eventId: id(2), eventType: "noise", data: { n: 2 } },
          { eventId: id(3), eventType: "order-shipped", data: { n: 3 } }
        ])
      )
      const created = await untilReady(call, () =>
        call(
          "PUT",
          "/subscriptions/%24all/orders",
          admin,
          Json,
          JSON.stringify({ filter: { context: "eventtype", type: "prefix", data: "order-" } })
        )
      )
      expect(created.status).toBe(201)
      const feed = body(await call("GET", "/subscriptions/%24all/orders/10", admin, Competing))
      expect(feed.title).toBe("Messages for '$all/orders'")
      expect(feed.entries.map((e: { summary: string }) => e.summary)).toEqual(["order-shipped", "order-placed"])
      const info = body(await call("GET", "/subscriptions/%24all/orders/info", admin))
      expect(info.config.startPosition).toBe("C:0/P:0")
      expect(info.lastKnownEventPosition).toMatch(/^C:\d+\/P:\d+$/)
    }))

  it("long-polls a group read until a message comes", () =>
    withNode(async (call) => {
      expect((await untilReady(call, () => call("PUT", "/subscriptions/later/g", admin, Json, "{}"))).status).toBe(201)
      let answered = false
      const read = call("GET", "/subscriptions/later/g/5", admin, { ...Competing, "ES-LongPoll": "30" }).then(
        (reply) => {
          answered = true
          return reply
        }
      )
      // Without long-poll the empty answer would be back by now.
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
      expect(answered).toBe(false)
      expect((await append(call, "later", [7])).status).toBe(201)
      const feed = body(await read)
      expect(feed.entries.map((e: { title: string }) => e.title)).toEqual(["0@later"])
    }))
})
