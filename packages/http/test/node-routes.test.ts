// The node routes end to end: through the generic pipeline (routing, negotiation, first-level
// authorization), on a real EventStore over the in-memory disk, with the deterministic node services.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { XMLValidator } from "fast-xml-parser"
import { MemoryDisk } from "@vellum/platform"
import { ClusterStatus } from "@vellum/cluster"
import { AuthenticationFailed, Authenticator, anonymousPrincipal, type Principal } from "@vellum/security"
import { EventStore, defaultStorageConfig } from "@vellum/storage"
import { defaultHttpSettings } from "../src/HttpConfig.js"
import type { HttpRequest } from "../src/HttpRequest.js"
import { makeHandler } from "../src/pipeline.js"
import { BasicChallenge } from "../src/challenge.js"
import type { Reply } from "../src/Reply.js"
import {
  NodeInfo,
  NodeMetrics,
  Shutdown,
  livenessOf,
  nodeRoutes,
  singleNodeIdentity,
  NodeServices
} from "../src/endpoints/index.js"

const identity = singleNodeIdentity({
  version: "0.1.0",
  instanceId: "11111111-2222-4333-8444-555555555555",
  httpEndpoint: { host: "127.0.0.1", port: 2113 }
})

const admin: Principal = { name: "admin", groups: ["$admins"], anonymous: false }
const user: Principal = { name: "reader", groups: [], anonymous: false }
const ADMIN = `Basic ${Buffer.from("admin:changeit").toString("base64")}`
const USER = `Basic ${Buffer.from("reader:pw").toString("base64")}`

const authenticatorLayer = Layer.succeed(Authenticator, {
  authenticate: (headers) => {
    const auth = headers["authorization"]
    if (auth === undefined) return Effect.succeed(anonymousPrincipal)
    if (auth === ADMIN) return Effect.succeed(admin)
    if (auth === USER) return Effect.succeed(user)
    return Effect.fail(new AuthenticationFailed({ message: "bad credentials" }))
  }
})

const storeLayer = EventStore.layer({
  ...defaultStorageConfig("/db"),
  chunkSize: 64 * 1024,
  preallocateChunks: false
}).pipe(Layer.provide(MemoryDisk.layer()), Layer.orDie)

const testLayer = NodeServices.layer(identity).pipe(Layer.provideMerge(storeLayer), Layer.merge(authenticatorLayer))

/** The pipeline over the node routes, wired as the node wires it (readiness and the metrics hook). */
const handler = Effect.gen(function* () {
  const info = yield* NodeInfo
  const cluster = yield* ClusterStatus
  const metrics = yield* NodeMetrics
  const handle = makeHandler(nodeRoutes, {
    ...defaultHttpSettings,
    ready: livenessOf(info, cluster),
    observeRequest: metrics.observeRequest
  })
  return (
    method: string,
    url: string,
    headers: Record<string, string> = {}
  ): Effect.Effect<Reply, never, Effect.Effect.Context<ReturnType<typeof handle>>> => {
    const request: HttpRequest = { method, url, headers: { host: "127.0.0.1:2113", ...headers }, body: undefined }
    return handle(request)
  }
})

const text = (r: Reply) => (typeof r.body === "string" ? r.body : Buffer.from(r.body ?? []).toString("utf8"))
const json = (r: Reply) => JSON.parse(text(r))

describe("node routes table", () => {
  it("declares each endpoint once with the reference's access level and codecs", () => {
    const table = nodeRoutes.map((r) => `${r.method} ${r.path} ${r.access} ${r.responseCodecs[0]}`)
    expect(table).toEqual([
      "GET /ping anonymous application/json",
      "GET /info anonymous application/json",
      "GET /gossip anonymous application/json",
      "POST /gossip ops application/json",
      "GET /stats authenticated application/json",
      "GET /stats/{*statPath} authenticated application/json",
      "GET /stats/replication authenticated application/json",
      "GET /stats/tcp authenticated application/json",
      "GET /metrics authenticated text/plain",
      "POST /admin/shutdown ops text/plain",
      "POST /admin/node/resign ops text/plain",
      "POST /admin/node/priority/{nodePriority} ops text/plain"
    ])
  })
})

describe("node routes through the pipeline", () => {
  it.effect("/ping and /info answer anyone, in the negotiated type", () =>
    Effect.gen(function* () {
      const send = yield* handler
      const ping = yield* send("GET", "/ping")
      expect(ping.status).toBe(200)
      expect(json(ping).text).toBe("Ping request successfully handled")
      const xml = yield* send("GET", "/ping?format=xml")
      expect(xml.headers["Content-Type"]).toBe("text/xml; charset=utf-8")
      expect(XMLValidator.validate(text(xml))).toBe(true)
      const plain = yield* send("GET", "/ping", { accept: "text/plain" })
      expect(text(plain)).toBe("Text: Ping request successfully handled")
      const info = yield* send("GET", "/info")
      expect(json(info)).toMatchObject({ dbVersion: "0.1.0", state: "leader", features: { atomPub: true } })
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("/gossip: this node, its store positions and the epoch it wrote on start", () =>
    Effect.gen(function* () {
      const send = yield* handler
      const store = yield* EventStore
      yield* store.append("orders-1", -2, [
        {
          eventId: "00000000-0000-4000-8000-000000000001",
          eventType: "T",
          isJson: true,
          data: Buffer.from("{}"),
          metadata: Buffer.alloc(0)
        }
      ])
      const r = yield* send("GET", "/gossip")
      expect(r.status).toBe(200)
      expect(r.headers["Cache-Control"]).toBe("max-age=0, no-cache, must-revalidate")
      const m = json(r).members[0]
      const stats = store.stats()
      expect(m.instanceId).toBe(identity.instanceId)
      expect(m.state).toBe("Leader")
      expect(m.lastCommitPosition).toBe(stats.committedPosition)
      expect(m.writerCheckpoint).toBe(stats.writerPosition)
      expect(m.lastCommitPosition).toBeGreaterThan(0)
      expect(m.epochNumber).toBe(0)
      expect(m.epochPosition).toBe(0)
      expect(m.epochId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(XMLValidator.validate(text(yield* send("GET", "/gossip", { accept: "application/xml" })))).toBe(true)
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("/stats needs an authenticated user (bare 401 otherwise) and reflects the store", () =>
    Effect.gen(function* () {
      const send = yield* handler
      const store = yield* EventStore
      for (let i = 1; i <= 3; i++) {
        yield* store.append("orders-1", -2, [
          {
            eventId: `00000000-0000-4000-8000-00000000000${i}`,
            eventType: "T",
            isJson: true,
            data: Buffer.from("{}"),
            metadata: Buffer.alloc(0)
          }
        ])
      }
      const denied = yield* send("GET", "/stats")
      expect(denied.status).toBe(401)
      expect(denied.headers["WWW-Authenticate"]).toBe(BasicChallenge)
      const r = yield* send("GET", "/stats", { authorization: USER })
      expect(r.status).toBe(200)
      expect(r.headers["Cache-Control"]).toBe("max-age=1, public")
      const doc = json(r)
      expect(Object.keys(doc)).toEqual(["proc", "sys", "es"])
      expect(doc.es.queue.StorageWriterQueue.totalItemsProcessed).toBe(store.stats().writer.commands)
      expect(doc.es.checksum).toBe(store.stats().committedPosition)
      expect(json(yield* send("GET", "/stats/proc/gc", { authorization: USER }))).toEqual(doc.proc.gc)
      expect((yield* send("GET", "/stats/proc/mem", { authorization: USER })).status).toBe(404)
      expect((yield* send("GET", "/stats/nothing/here", { authorization: USER })).status).toBe(404)
      expect((yield* send("GET", "/stats/proc?group=false", { authorization: USER })).status).toBe(400)
      expect((yield* send("GET", "/stats", { authorization: USER, accept: "text/plain" })).status).toBe(406)
      const xml = yield* send("GET", "/stats/es", { authorization: USER, accept: "application/xml" })
      expect(xml.headers["Content-Type"]).toBe("application/xml; charset=utf-8")
      expect(XMLValidator.validate(text(xml))).toBe(true)
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("/stats/replication and /stats/tcp are empty lists on a single node", () =>
    Effect.gen(function* () {
      const send = yield* handler
      expect(json(yield* send("GET", "/stats/replication", { authorization: USER }))).toEqual([])
      expect(json(yield* send("GET", "/stats/tcp", { authorization: USER }))).toEqual([])
      const xml = yield* send("GET", "/stats/tcp?format=xml", { authorization: USER })
      expect(XMLValidator.validate(text(xml))).toBe(true)
      expect(text(xml)).toContain("<ArrayOfTcpConnectionStats")
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("/metrics: Prometheus text with storage figures and the requests seen so far", () =>
    Effect.gen(function* () {
      const send = yield* handler
      yield* send("GET", "/ping")
      yield* send("GET", "/ping")
      expect((yield* send("GET", "/metrics")).status).toBe(401)
      const r = yield* send("GET", "/metrics", {
        authorization: USER,
        accept: "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
      })
      expect(r.status).toBe(200)
      expect(r.headers["Content-Type"]).toBe("text/plain; version=0.0.4; charset=utf-8")
      const body = text(r)
      expect(body).toMatch(/^vellum_writer_commands_total \d+$/m)
      expect(body).toContain(`vellum_http_request_duration_seconds_count{family="ping",method="GET",status="200"} 2`)
      expect(body).toContain(`vellum_http_request_duration_seconds_count{family="metrics",method="GET",status="401"} 1`)
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("/admin/shutdown: ops only; then the node stops being live", () =>
    Effect.gen(function* () {
      const send = yield* handler
      const shutdown = yield* Shutdown
      expect((yield* send("GET", "/health/live")).status).toBe(204)
      expect((yield* send("POST", "/admin/shutdown")).status).toBe(401)
      expect((yield* send("POST", "/admin/shutdown", { authorization: USER })).status).toBe(401)
      expect(yield* shutdown.isRequested).toBe(false)
      const r = yield* send("POST", "/admin/shutdown", { authorization: ADMIN })
      expect(r.status).toBe(200)
      expect(r.headers["Content-Type"]).toBeUndefined()
      expect(r.body ?? "").toBe("")
      expect(yield* shutdown.isRequested).toBe(true)
      expect((yield* send("GET", "/health/live")).status).toBe(503)
      expect(json(yield* send("GET", "/info")).state).toBe("shuttingdown")
    }).pipe(Effect.provide(testLayer))
  )
})
