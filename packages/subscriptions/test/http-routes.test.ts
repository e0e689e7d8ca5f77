import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { subscriptionRoutes } from "../src/http/routes.js"
import { AdminAuth, header, json, withNode } from "./httpHarness.js"

describe("the /subscriptions route table", () => {
  it("passes every route but the parked-message views to the leader", () => {
    for (const route of subscriptionRoutes) {
      expect([route.path, route.forwardsToLeader === true]).toEqual([
        route.path,
        !route.path.startsWith("/subscriptions/viewparkedmessages/")
      ])
    }
  })
})

describe("the parked-message views", () => {
  const parked = "$persistentsubscription-orders::g1-parked"
  const CompetingJson = { Accept: "application/vnd.eventstore.competingatom+json" }

  it("read the group's parked stream backward and forward, as stream feeds", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const appended = yield* node.request("POST", `/streams/${encodeURIComponent(parked)}`, {
          auth: AdminAuth,
          headers: { "Content-Type": "application/vnd.eventstore.events+json" },
          body: JSON.stringify(
            [1, 2, 3].map((n) => ({ eventId: `00000000-0000-4000-8000-00000000000${n}`, eventType: "T", data: { n } }))
          )
        })
        expect(appended.status).toBe(201)
        const backward = yield* node.request("GET", "/subscriptions/viewparkedmessages/orders/g1/head/backward/2", {
          auth: AdminAuth,
          headers: CompetingJson
        })
        expect(backward.status).toBe(200)
        expect(header(backward, "content-type")).toBe("application/vnd.eventstore.competingatom+json; charset=utf-8")
        const feed = json(backward)
        expect(feed.title).toBe(`Event stream '${parked}'`)
        expect(feed.entries.map((e: { title: string }) => e.title)).toEqual([`2@${parked}`, `1@${parked}`])
        const forward = json(
          yield* node.request("GET", "/subscriptions/viewparkedmessages/orders/g1/0/forward/5", {
            auth: AdminAuth,
            headers: CompetingJson
          })
        )
        expect(forward.entries).toHaveLength(3)
        const xml = yield* node.request("GET", "/subscriptions/viewparkedmessages/orders/g1/0/forward/5", {
          auth: AdminAuth
        })
        expect(header(xml, "content-type")).toBe("application/vnd.eventstore.competingatom+xml; charset=utf-8")
        expect(String(xml.body)).toContain("<feed")
      })
    ))

  it("offer the competing types only", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const reply = yield* node.request("GET", "/subscriptions/viewparkedmessages/orders/g1/head/backward/2", {
          auth: AdminAuth,
          headers: { Accept: "application/json" }
        })
        expect(reply.status).toBe(406)
      })
    ))
})
