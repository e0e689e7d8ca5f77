import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { AdminAuth, OpsAuth, UserAuth, header, json, text, withNode } from "./httpHarness.js"

const Json = { "Content-Type": "application/json" }

describe("create, update and delete over HTTP", () => {
  it("create answers 201 with the completion and Location, then 409 for the same group", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const created = yield* node.request("PUT", "/subscriptions/orders/g1?extra=1", {
          auth: AdminAuth,
          headers: Json,
          body: "{}"
        })
        expect(created.status).toBe(201)
        expect(header(created, "location")).toBe("http://localhost:2113/subscriptions/orders/g1")
        const body = json(created)
        expect(Object.keys(body)).toEqual(["correlationId", "reason", "result", "label"])
        expect(body).toMatchObject({
          reason: "",
          result: "Success",
          label: "CoreMessage-Client-CreatePersistentSubscriptionToStreamCompleted"
        })
        expect(body.correlationId).toMatch(/^[0-9a-f-]{36}$/)
        const again = yield* node.request("PUT", "/subscriptions/orders/g1", { auth: AdminAuth, headers: Json })
        expect(again.status).toBe(409)
        expect(header(again, "location")).toBe("http://localhost:2113/subscriptions/orders/g1")
        expect(json(again)).toMatchObject({ result: "AlreadyExists", reason: "Group 'g1' already exists." })
        expect(node.fake.calls[0]).toMatchObject({ op: "create", stream: "orders", group: "g1", by: "admin" })
      })
    ))

  it("update answers 200, or 404 for a missing group, both with Location", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const missing = yield* node.request("POST", "/subscriptions/orders/g1", { auth: OpsAuth, headers: Json })
        expect(missing.status).toBe(404)
        expect(header(missing, "location")).toBe("http://localhost:2113/subscriptions/orders/g1")
        expect(json(missing)).toMatchObject({
          result: "DoesNotExist",
          reason: "Group 'g1' does not exist.",
          label: "CoreMessage-Client-UpdatePersistentSubscriptionToStreamCompleted"
        })
        yield* node.request("PUT", "/subscriptions/orders/g1", { auth: OpsAuth, headers: Json })
        const updated = yield* node.request("POST", "/subscriptions/orders/g1", {
          auth: OpsAuth,
          headers: Json,
          body: `{"MAXRETRYCOUNT": 3, "namedConsumerStrategy": "Pinned"}`
        })
        expect(updated.status).toBe(200)
        expect(node.fake.groups.get("orders::g1")!.spec.settings).toMatchObject({
          maxRetryCount: 3,
          namedConsumerStrategy: "Pinned"
        })
      })
    ))

  it("delete answers 200, then 404", () =>
    withNode((node) =>
      Effect.gen(function* () {
        yield* node.request("PUT", "/subscriptions/orders/g1", { auth: AdminAuth, headers: Json })
        const deleted = yield* node.request("DELETE", "/subscriptions/orders/g1", { auth: AdminAuth })
        expect(deleted.status).toBe(200)
        expect(json(deleted)).toMatchObject({
          result: "Success",
          label: "CoreMessage-Client-DeletePersistentSubscriptionToStreamCompleted"
        })
        const again = yield* node.request("DELETE", "/subscriptions/orders/g1", { auth: AdminAuth })
        expect(again.status).toBe(404)
        expect(json(again)).toMatchObject({ result: "DoesNotExist", reason: "Group 'g1' does not exist." })
      })
    ))

  it("management is for $ops and $admins only", () =>
    withNode((node) =>
      Effect.gen(function* () {
        expect((yield* node.request("PUT", "/subscriptions/s/g", { auth: UserAuth, headers: Json })).status).toBe(401)
        expect((yield* node.request("PUT", "/subscriptions/s/g", { headers: Json })).status).toBe(401)
        expect((yield* node.request("DELETE", "/subscriptions/s/g", { auth: UserAuth })).status).toBe(401)
        expect((yield* node.request("POST", "/subscriptions/restart", { auth: UserAuth })).status).toBe(401)
        expect(node.fake.calls).toEqual([])
      })
    ))

  it("a body needs a Content-Type, even an empty one (415)", () =>
    withNode((node) =>
      Effect.gen(function* () {
        expect((yield* node.request("PUT", "/subscriptions/s/g", { auth: AdminAuth })).status).toBe(415)
        expect((yield* node.request("POST", "/subscriptions/s/g", { auth: AdminAuth, body: "{}" })).status).toBe(415)
      })
    ))

  it("refuses bad buffers with the reference's text, and an unknown strategy with a Fail completion", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const buffers = yield* node.request("PUT", "/subscriptions/s/g", {
          auth: AdminAuth,
          headers: Json,
          body: `{"bufferSize": 10, "readBatchSize": 20}`
        })
        expect(buffers.status).toBe(400)
        expect(text(buffers)).toBe("BufferSize (10) must be larger than ReadBatchSize (20)")
        const strategy = yield* node.request("PUT", "/subscriptions/s/g", {
          auth: AdminAuth,
          headers: Json,
          body: `{"namedConsumerStrategy": "Nope"}`
        })
        expect(strategy.status).toBe(400)
        expect(header(strategy, "location")).toBe("http://localhost:2113/subscriptions/s/g")
        expect(json(strategy)).toMatchObject({ result: "Fail", reason: "Consumer strategy Nope does not exist." })
        expect(node.fake.calls).toEqual([])
      })
    ))

  it("takes XML bodies and answers in XML when asked", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const created = yield* node.request("PUT", "/subscriptions/s/g", {
          auth: AdminAuth,
          headers: { "Content-Type": "text/xml", Accept: "text/xml" },
          body: `<SubscriptionConfigData><MaxRetryCount>7</MaxRetryCount></SubscriptionConfigData>`
        })
        expect(created.status).toBe(201)
        expect(header(created, "content-type")).toBe("text/xml; charset=utf-8")
        expect(text(created)).toMatch(
          /^<\?xml version="1.0" encoding="utf-8"\?><CreatePersistentSubscriptionToStreamCompleted [^>]*><CorrelationId>[0-9a-f-]{36}<\/CorrelationId><Reason \/><Result>Success<\/Result><Label>CoreMessage-Client-CreatePersistentSubscriptionToStreamCompleted<\/Label><\/CreatePersistentSubscriptionToStreamCompleted>$/
        )
        expect(node.fake.groups.get("s::g")!.spec.settings.maxRetryCount).toBe(7)
      })
    ))
})

describe("replayParked and restart", () => {
  it("replayParked answers 200 or 404 and passes stopAt on", () =>
    withNode((node) =>
      Effect.gen(function* () {
        const missing = yield* node.request("POST", "/subscriptions/s/g/replayParked", { auth: AdminAuth })
        expect(missing.status).toBe(404)
        expect(json(missing)).toMatchObject({
          result: "DoesNotExist",
          label: "CoreMessage-Client-ReplayMessagesReceived"
        })
        yield* node.request("PUT", "/subscriptions/s/g", { auth: AdminAuth, headers: Json })
        const replayed = yield* node.request("POST", "/subscriptions/s/g/replayParked?stopAt=5", { auth: AdminAuth })
        expect(replayed.status).toBe(200)
        expect(header(replayed, "location")).toBeUndefined()
        expect(node.fake.calls.at(-1)).toEqual({ op: "replayParked", stream: "s", group: "g", stopAt: 5 })
        yield* node.request("POST", "/subscriptions/s/g/replayParked", { auth: AdminAuth })
        expect(node.fake.calls.at(-1)).toMatchObject({ op: "replayParked", stopAt: undefined })
      })
    ))

  it("replayParked refuses a stopAt that is not a non-negative long", () =>
    withNode((node) =>
      Effect.gen(function* () {
        for (const stopAt of ["-1", "x", "", "99999999999999999999"]) {
          const reply = yield* node.request("POST", `/subscriptions/s/g/replayParked?stopAt=${stopAt}`, {
            auth: AdminAuth
          })
          expect(reply.status).toBe(400)
          expect(reply.reason).toBe("stopAt should be a properly formed positive long")
          expect(reply.body ?? "").toBe("")
        }
      })
    ))

  it('restart answers 200 "Restarting", or 400 with the reason as text', () =>
    withNode((node) =>
      Effect.gen(function* () {
        const restarted = yield* node.request("POST", "/subscriptions/restart", { auth: OpsAuth })
        expect(restarted.status).toBe(200)
        expect(text(restarted)).toBe(`"Restarting"`)
        node.fake.restartAnswer = { _tag: "Fail", reason: "Persistent subscriptions are not running" }
        const refused = yield* node.request("POST", "/subscriptions/restart", { auth: OpsAuth })
        expect(refused.status).toBe(400)
        expect(text(refused)).toBe("Persistent subscriptions are not running")
      })
    ))
})
