// `/health/live` and `/admin/shutdown`: liveness follows the node state,
// and a shutdown request makes the node not live, signals Shutdown and answers a bare 200.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref } from "effect"
import { VNodeStates } from "@vellum/cluster"
import type { RouteInput } from "../src/Route.js"
import { defaultHttpSettings } from "../src/HttpConfig.js"
import {
  NodeInfo,
  NodeServices,
  Shutdown,
  handleHealthLive,
  healthLive,
  isLive,
  nodeIsLive,
  shutdownRoute,
  singleNodeIdentity
} from "../src/endpoints/index.js"

const q = (text = "") => new URLSearchParams(text)

describe("healthLive", () => {
  it.each(["GET", "HEAD"])("%s → 204, empty, bare, when live", (method) => {
    const r = healthLive(method, q(), true)
    expect(r.status).toBe(204)
    expect(r.body).toBeUndefined()
    expect(r.headers).toEqual({})
    expect(r.bare).toBe(true)
  })

  it("?liveCode=NNN answers that status", () => {
    expect(healthLive("GET", q("liveCode=200"), true).status).toBe(200)
    expect(healthLive("HEAD", q("liveCode=418"), true).status).toBe(418)
  })

  it("ignores a liveCode that is not an HTTP status", () => {
    for (const code of ["abc", "99", "600", "2000", "", "-200"])
      expect(healthLive("GET", q(`liveCode=${code}`), true).status).toBe(204)
  })

  it("503 when not live, whatever liveCode says", () => {
    expect(healthLive("GET", q(), false).status).toBe(503)
    expect(healthLive("GET", q("liveCode=200"), false).status).toBe(503)
  })

  it.each(["POST", "PUT", "DELETE", "OPTIONS", "PATCH"])("%s → 405", (method) => {
    expect(healthLive(method, q(), true).status).toBe(405)
    expect(healthLive(method, q(), false).status).toBe(405)
  })

  it("is live in every state between start and stop", () => {
    const notLive = VNodeStates.filter((s) => !isLive(s))
    expect(notLive).toEqual(["Initializing", "ShuttingDown", "Shutdown"])
  })
})

const identity = singleNodeIdentity({
  version: "0.1.0",
  instanceId: "11111111-2222-4333-8444-555555555555",
  httpEndpoint: { host: "127.0.0.1", port: 2113 }
})

const input: RouteInput = {
  principal: { name: "admin", groups: ["$admins"], anonymous: false },
  params: {},
  query: q(),
  headers: {},
  body: undefined,
  baseUrl: "http://127.0.0.1:2113",
  requestUrl: "http://127.0.0.1:2113/admin/shutdown",
  responseType: "text/plain",
  requestType: undefined,
  settings: defaultHttpSettings
}

const layer = Layer.mergeAll(NodeInfo.layer(identity), Shutdown.layer, NodeServices.singleNodeStatus(identity))

describe("handleHealthLive reads the node state", () => {
  it.effect("204 while leading, 503 while initializing", () =>
    Effect.gen(function* () {
      expect((yield* handleHealthLive("GET", q())).status).toBe(204)
      const info = yield* NodeInfo
      yield* Ref.set(info.state, "Initializing")
      expect((yield* handleHealthLive("GET", q())).status).toBe(503)
      expect(yield* nodeIsLive).toBe(false)
    }).pipe(Effect.provide(Layer.merge(NodeInfo.layer(identity), NodeServices.singleNodeStatus(identity))))
  )
})

describe("POST /admin/shutdown", () => {
  it("is an ops route answering text by default", () => {
    expect(shutdownRoute.method).toBe("POST")
    expect(shutdownRoute.access).toBe("ops")
    expect(shutdownRoute.responseCodecs[0]).toBe("text/plain")
    expect(shutdownRoute.requestCodecs).toBeUndefined()
  })

  it.effect("answers 200 OK with no body and no Content-Type, then signals Shutdown", () =>
    Effect.gen(function* () {
      const shutdown = yield* Shutdown
      const waiter = yield* Effect.fork(shutdown.requested)
      expect(yield* shutdown.isRequested).toBe(false)
      const r = yield* shutdownRoute.handle(input)
      expect(r.status).toBe(200)
      expect(r.reason).toBe("OK")
      expect(r.body).toBeUndefined()
      expect(r.headers["Content-Type"]).toBeUndefined()
      expect(yield* Fiber.join(waiter)).toMatch(/admin\/shutdown/)
      expect(yield* shutdown.isRequested).toBe(true)
    }).pipe(Effect.provide(layer))
  )

  it.effect("turns the node ShuttingDown, so /health/live answers 503 and /info says so", () =>
    Effect.gen(function* () {
      yield* shutdownRoute.handle(input)
      const info = yield* NodeInfo
      expect(yield* Ref.get(info.state)).toBe("ShuttingDown")
      expect((yield* handleHealthLive("GET", q())).status).toBe(503)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a second request changes nothing (the first reason stays)", () =>
    Effect.gen(function* () {
      const shutdown = yield* Shutdown
      yield* shutdown.request("first")
      const r = yield* shutdownRoute.handle(input)
      expect(r.status).toBe(200)
      expect(yield* shutdown.requested).toBe("first")
    }).pipe(Effect.provide(layer))
  )
})
