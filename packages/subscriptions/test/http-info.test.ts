import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { defaultGroupSettings } from "../src/config/GroupSettings.js"
import { renderGroupSettings } from "../src/config/renderGroupSettings.js"
import type { FakeGroup } from "./fakeSubscriptions.js"
import { UserAuth, header, json, text, withNode, type SubsNode } from "./httpHarness.js"

const add = (node: SubsNode, stream: string, group: string, info: FakeGroup["info"] = {}) =>
  node.fake.groups.set(`${stream}::${group}`, {
    spec: { stream, group, settings: defaultGroupSettings },
    pending: [],
    info
  })

const stats = (over: Record<string, unknown>) => ({
  status: ["Live"],
  readBufferCount: 1,
  liveBufferCount: 2,
  retryBufferCount: 3,
  outstandingMessagesCount: 4,
  totalItemsProcessed: 5,
  lastProcessedPosition: 3,
  lastKnownPosition: 3,
  lastCheckpoint: 2,
  finishedThrough: 2,
  parkedSinceStart: 0,
  lastDeliveryAt: Date.UTC(2024, 0, 1, 12),
  lastAckAt: undefined,
  connections: [],
  ...over
})

describe("the info documents", () => {
  it("lists every group as summaries, in the service's order", () =>
    withNode((node) =>
      Effect.gen(function* () {
        add(node, "orders", "g1", { stats: stats({}) as never, status: ["Behind", "OutstandingPageRequest"] })
        add(node, "a b", "g/2")
        const reply = yield* node.request("GET", "/subscriptions", { auth: UserAuth })
        expect(reply.status).toBe(200)
        expect(header(reply, "cache-control")).toBeUndefined()
        const list = json(reply)
        expect(list).toHaveLength(2)
        expect(Object.keys(list[0])).toEqual([
          "links",
          "eventStreamId",
          "groupName",
          "parkedMessageUri",
          "getMessagesUri",
          "status",
          "averageItemsPerSecond",
          "totalItemsProcessed",
          "lastProcessedEventNumber",
          "lastCheckpointedEventPosition",
          "lastKnownEventNumber",
          "lastKnownEventPosition",
          "connectionCount",
          "totalInFlightMessages"
        ])
        expect(list[0]).toMatchObject({
          links: [{ href: "http://localhost:2113/subscriptions/orders/g1/info", rel: "detail" }],
          parkedMessageUri: "http://localhost:2113/streams/%24persistentsubscription-orders::g1-parked",
          getMessagesUri: "http://localhost:2113/subscriptions/orders/g1/1",
          status: "Behind, OutstandingPageRequest",
          lastProcessedEventNumber: 2,
          lastCheckpointedEventPosition: "2",
          lastKnownEventNumber: 3,
          lastKnownEventPosition: "3",
          totalInFlightMessages: 4
        })
        expect(list[1].getMessagesUri).toBe("http://localhost:2113/subscriptions/a%20b/g%2F2/1")
        expect(list[1]).toMatchObject({ lastCheckpointedEventPosition: null, lastProcessedEventNumber: 0 })
      })
    ))

  it("pages with ?offset=&count=, and refuses bad ones", () =>
    withNode((node) =>
      Effect.gen(function* () {
        for (const g of ["a", "b", "c"]) add(node, "s", g)
        const page = json(yield* node.request("GET", "/subscriptions?offset=1&count=1", { auth: UserAuth }))
        const base = "http://localhost:2113/subscriptions"
        expect(page.links).toEqual([
          { href: `${base}?offset=1&count=1`, rel: "self" },
          { href: `${base}?offset=0&count=1`, rel: "first" },
          { href: `${base}?offset=0&count=1`, rel: "previous" },
          { href: `${base}?offset=2&count=1`, rel: "next" }
        ])
        expect(page).toMatchObject({ offset: 1, count: 1, total: 3 })
        expect(page.subscriptions.map((s: { groupName: string }) => s.groupName)).toEqual(["b"])
        const badOffset = yield* node.request("GET", "/subscriptions?offset=-1&count=1", { auth: UserAuth })
        expect(badOffset.status).toBe(400)
        expect(text(badOffset)).toBe(`Offset "-1" must be a non-negative integer`)
        const badCount = yield* node.request("GET", "/subscriptions?offset=0&count=0", { auth: UserAuth })
        expect(text(badCount)).toBe(`Count "0" must be a positive integer`)
        const noCount = yield* node.request("GET", "/subscriptions?offset=0", { auth: UserAuth })
        expect(text(noCount)).toBe(`Count "" must be a positive integer`)
      })
    ))

  it("lists a stream's groups, 404 when it has none", () =>
    withNode((node) =>
      Effect.gen(function* () {
        add(node, "orders", "g1")
        add(node, "other", "g2")
        const list = json(yield* node.request("GET", "/subscriptions/orders", { auth: UserAuth }))
        expect(list.map((s: { groupName: string }) => s.groupName)).toEqual(["g1"])
        expect((yield* node.request("GET", "/subscriptions/none", { auth: UserAuth })).status).toBe(404)
      })
    ))

  it("shows one group's /info with every field in order, then Vellum's health figures", () =>
    withNode((node) =>
      Effect.gen(function* () {
        add(node, "orders", "g1", {
          stats: stats({
            connections: [{ id: "c1", inFlight: 2, availableSlots: 8, totalItemsProcessed: 9 }]
          }) as never,
          parkedMessageCount: 6,
          lag: { events: 7, millis: 1500 }
        })
        const reply = yield* node.request("GET", "/subscriptions/orders/g1/info", { auth: UserAuth })
        expect(reply.status).toBe(200)
        const info = json(reply)
        expect(Object.keys(info)).toEqual([
          "links",
          "config",
          "eventStreamId",
          "groupName",
          "status",
          "averageItemsPerSecond",
          "parkedMessageUri",
          "getMessagesUri",
          "totalItemsProcessed",
          "countSinceLastMeasurement",
          "lastProcessedEventNumber",
          "lastCheckpointedEventPosition",
          "lastKnownEventNumber",
          "lastKnownEventPosition",
          "readBufferCount",
          "liveBufferCount",
          "retryBufferCount",
          "totalInFlightMessages",
          "outstandingMessagesCount",
          "connections",
          "parkedMessageCount",
          "lastDeliveryTime",
          "lastAckTime",
          "lagEvents",
          "lagMilliseconds"
        ])
        expect(info.links).toEqual([
          { href: "http://localhost:2113/subscriptions/orders/g1/info", rel: "detail" },
          { href: "http://localhost:2113/subscriptions/orders/g1/replayParked", rel: "replayParked" }
        ])
        // Every setting, in the order (and the spelling) the settings renderer gives them.
        const rendered = renderGroupSettings(defaultGroupSettings)
        expect(info.config).toEqual(rendered)
        expect(Object.keys(info.config)).toEqual(Object.keys(rendered))
        expect(info.connections).toEqual([
          {
            from: "c1",
            username: "",
            averageItemsPerSecond: 0,
            totalItemsProcessed: 9,
            countSinceLastMeasurement: 0,
            extraStatistics: [],
            availableSlots: 8,
            inFlightMessages: 2,
            connectionName: "c1"
          }
        ])
        expect(info).toMatchObject({
          readBufferCount: 1,
          liveBufferCount: 2,
          retryBufferCount: 3,
          parkedMessageCount: 6,
          lastDeliveryTime: "2024-01-01T12:00:00Z",
          lastAckTime: null,
          lagEvents: 7,
          lagMilliseconds: 1500
        })
        expect((yield* node.request("GET", "/subscriptions/orders/none/info", { auth: UserAuth })).status).toBe(404)
      })
    ))

  it("shows a group on $all with its C:/P: positions", () =>
    withNode((node) =>
      Effect.gen(function* () {
        node.fake.groups.set("$all::g", {
          spec: { stream: "$all", group: "g", settings: { ...defaultGroupSettings, startPosition: "C:5/P:5" } },
          pending: [],
          info: { stats: stats({}) as never }
        })
        const info = json(yield* node.request("GET", "/subscriptions/%24all/g/info", { auth: UserAuth }))
        expect(info).toMatchObject({
          eventStreamId: "$all",
          lastCheckpointedEventPosition: "C:2/P:2",
          lastProcessedEventNumber: 0,
          lastKnownEventPosition: "C:3/P:3"
        })
        expect(info.config.startPosition).toBe("C:5/P:5")
      })
    ))

  it("writes XML in the serializer's shape when asked", () =>
    withNode((node) =>
      Effect.gen(function* () {
        add(node, "orders", "g1")
        const xml = text(
          yield* node.request("GET", "/subscriptions", { auth: UserAuth, headers: { Accept: "text/xml" } })
        )
        expect(xml).toMatch(
          /^<\?xml version="1.0" encoding="utf-8"\?><ArrayOfSubscriptionSummary [^>]*><SubscriptionSummary><Links><RelLink><Href>http:\/\/localhost:2113\/subscriptions\/orders\/g1\/info<\/Href><Rel>detail<\/Rel><\/RelLink><\/Links><EventStreamId>orders<\/EventStreamId>/
        )
      })
    ))

  it("answers 503 while the groups are not running here", () =>
    withNode((node) =>
      Effect.gen(function* () {
        node.fake.ready = false
        for (const url of ["/subscriptions", "/subscriptions/orders", "/subscriptions/orders/g1/info"])
          expect((yield* node.request("GET", url, { auth: UserAuth })).status).toBe(503)
      })
    ))
})
