// The node endpoints over a cluster status a test sets, through the whole pipeline: `/gossip` (GET lists the
// members, POST merges a view), `/info`, `/health/live` and `/metrics` show the state, and the resign and
// priority admin endpoints act on the cluster status (operators only; a bad priority is a 400).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { XMLValidator } from "fast-xml-parser"
import { MemoryDisk } from "@vellum/platform"
import { ClusterStatus, type VNodeState } from "@vellum/cluster"
import { Authenticator } from "@vellum/security"
import { EventStore, defaultStorageConfig } from "@vellum/storage"
import {
  NODE_PRIORITY_NOT_INTEGER,
  NodeInfo,
  NodeServices,
  defaultHttpSettings,
  livenessOf,
  makeHandler,
  nodeRoleOf,
  nodeRoutes,
  singleNodeIdentity,
  type Reply
} from "../src/index.js"
import { fakeCluster, otherMember, type FakeCluster } from "./fakeClusterStatus.js"
import { AdminAuth, UserAuth, basic, header, json, testAuthenticator, text } from "./streams-harness.js"

const OpsAuth = basic("ops", "changeit")

const identity = singleNodeIdentity({
  version: "0.1.0",
  instanceId: "11111111-2222-4333-8444-555555555555",
  httpEndpoint: { host: "10.0.0.1", port: 2113 }
})

const storeLayer = EventStore.layer({
  ...defaultStorageConfig("/db"),
  chunkSize: 64 * 1024,
  preallocateChunks: false
}).pipe(Layer.provide(MemoryDisk.layer()), Layer.orDie)

interface Send {
  (
    method: string,
    url: string,
    options?: { auth?: string; headers?: Record<string, string>; body?: string }
  ): Effect.Effect<Reply>
}

/** The node routes over `cluster`, wired as the node wires them; runs `test` with a request function. */
const withNode = (cluster: FakeCluster, test: (send: Send) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    const info = yield* NodeInfo
    const status = yield* ClusterStatus
    const handle = makeHandler(nodeRoutes, {
      ...defaultHttpSettings,
      ready: livenessOf(info, status),
      nodeRole: nodeRoleOf(info, status)
    })
    const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof handle>>>()
    const send: Send = (method, url, options = {}) =>
      handle({
        method,
        url,
        headers: {
          host: "10.0.0.1:2113",
          ...(options.auth !== undefined ? { authorization: options.auth } : {}),
          ...options.headers
        },
        body: options.body === undefined ? undefined : Buffer.from(options.body, "utf8")
      }).pipe(Effect.provide(context))
    yield* test(send)
  }).pipe(
    Effect.provide(
      NodeServices.layer(identity, { cluster: cluster.layer }).pipe(
        Layer.provideMerge(storeLayer),
        Layer.merge(Layer.succeed(Authenticator, testAuthenticator()))
      )
    )
  )

describe("GET /gossip", () => {
  it.effect("lists every member the cluster status knows, this node first with its state", () => {
    const cluster = fakeCluster({ state: "Follower", others: [otherMember(2, "Leader"), otherMember(3, "Follower")] })
    return withNode(cluster, (send) =>
      Effect.gen(function* () {
        const r = yield* send("GET", "/gossip")
        expect(r.status).toBe(200)
        const doc = json(r)
        expect(doc.members.map((m: { state: string }) => m.state)).toEqual(["Follower", "Leader", "Follower"])
        expect(doc.members[0].instanceId).toBe(identity.instanceId)
        expect(doc.members[1].httpEndPointIp).toBe("10.0.0.2")
        expect(doc.members[1].timeStamp).toBe("2026-01-02T03:04:05.6Z")
        expect(doc.serverIp).toBe("10.0.0.1")
        expect(doc.serverPort).toBe(2113)
        const xml = text(yield* send("GET", "/gossip?format=xml"))
        expect(XMLValidator.validate(xml)).toBe(true)
        expect(xml.match(/<ClientMemberInfo>/g)).toHaveLength(3)
        const plain = text(yield* send("GET", "/gossip", { headers: { accept: "text/plain" } }))
        expect(plain.match(/InstanceId: /g)).toHaveLength(3)
      })
    )
  })
})

describe("POST /gossip", () => {
  it.effect("merges the view GET /gossip produces and answers the merged view", () => {
    const peer = fakeCluster({ others: [otherMember(2, "Leader"), otherMember(3, "Follower")] })
    const cluster = fakeCluster({ state: "Follower" })
    return Effect.gen(function* () {
      // The body is what a peer's GET /gossip answers.
      let body = ""
      yield* withNode(peer, (send) => Effect.map(send("GET", "/gossip"), (r) => void (body = text(r))))
      yield* withNode(cluster, (send) =>
        Effect.gen(function* () {
          const r = yield* send("POST", "/gossip", {
            auth: OpsAuth,
            headers: { "content-type": "application/json" },
            body
          })
          expect(r.status).toBe(200)
          const received = cluster.received()
          expect(received).toHaveLength(1)
          expect(received[0]!.slice(1)).toEqual([otherMember(2, "Leader"), otherMember(3, "Follower")])
          expect(received[0]![0]!.state).toBe("Leader")
          expect(json(r).members).toHaveLength(4)
          expect(json(r).members[0].state).toBe("Follower")
        })
      )
    })
  })

  it.effect("is for operators: anonymous callers and plain users get 401", () =>
    withNode(fakeCluster(), (send) =>
      Effect.gen(function* () {
        const options = { headers: { "content-type": "application/json" }, body: '{"members":[]}' }
        expect((yield* send("POST", "/gossip", options)).status).toBe(401)
        expect((yield* send("POST", "/gossip", { ...options, auth: UserAuth })).status).toBe(401)
        expect((yield* send("POST", "/gossip", { ...options, auth: AdminAuth })).status).toBe(400)
      })
    )
  )

  it.effect("answers a bad body 400 with the reason, and merges nothing", () => {
    const cluster = fakeCluster()
    const member = { ...otherMember(2, "Leader"), timeStamp: "2026-01-02T03:04:05Z" }
    const cases: ReadonlyArray<[string, RegExp]> = [
      ["", /empty/],
      ["{not json", /not JSON/],
      ["[]", /Invalid gossip body/],
      [JSON.stringify({ serverIp: "x", serverPort: 1 }), /members/],
      [
        JSON.stringify({ members: [{ ...member, state: "Boss" }], serverIp: "x", serverPort: 1 }),
        /members\[0\]\.state/
      ],
      [
        JSON.stringify({ members: [{ ...member, httpEndPointPort: 70000 }], serverIp: "x", serverPort: 1 }),
        /members\[0\]\.httpEndPointPort/
      ],
      [
        JSON.stringify({ members: [{ ...member, timeStamp: "yesterday" }], serverIp: "x", serverPort: 1 }),
        /members\[0\]\.timeStamp: "yesterday" is not an ISO 8601 time stamp/
      ],
      [JSON.stringify({ members: [{ ...member, instanceId: 7 }], serverIp: "x", serverPort: 1 }), /instanceId/]
    ]
    return withNode(cluster, (send) =>
      Effect.gen(function* () {
        for (const [body, reason] of cases) {
          const r = yield* send("POST", "/gossip", {
            auth: OpsAuth,
            headers: { "content-type": "application/json" },
            body
          })
          expect(r.status, body).toBe(400)
          expect(text(r), body).toMatch(reason)
        }
        const xml = yield* send("POST", "/gossip", {
          auth: OpsAuth,
          headers: { "content-type": "text/xml" },
          body: "<a/>"
        })
        expect(xml.status).toBe(415)
        expect(cluster.received()).toHaveLength(0)
      })
    )
  })
})

describe("the node's state", () => {
  const states: ReadonlyArray<VNodeState> = ["Follower", "Unknown", "PreLeader", "ReadOnlyReplica", "ResigningLeader"]
  for (const state of states) {
    it.effect(`/info, /health/live and /metrics show ${state}`, () =>
      withNode(fakeCluster({ state }), (send) =>
        Effect.gen(function* () {
          expect(json(yield* send("GET", "/info")).state).toBe(state.toLowerCase())
          expect((yield* send("GET", "/health/live")).status).toBe(204)
          const stats = json(yield* send("GET", "/stats", { auth: AdminAuth }))
          expect(stats.es.cluster).toEqual({ state, leader: "" })
          const metrics = text(yield* send("GET", "/metrics", { auth: AdminAuth }))
          expect(metrics).toContain(`kurrentdb_statuses{name="Node",status="${state}"}`)
        })
      )
    )
  }

  it.effect("/health/live is 503 while the cluster status says the node is starting", () =>
    withNode(fakeCluster({ state: "Initializing" }), (send) =>
      Effect.map(send("GET", "/health/live"), (r) => expect(r.status).toBe(503))
    )
  )
})

describe("/stats", () => {
  it.effect("shows the leader a follower follows", () => {
    const leader = { instanceId: "x", httpHost: "10.0.0.2", httpPort: 2114 }
    return withNode(fakeCluster({ state: "Follower", leader }), (send) =>
      Effect.gen(function* () {
        const cluster = json(yield* send("GET", "/stats/es/cluster", { auth: AdminAuth }))
        expect(cluster).toEqual({ state: "Follower", leader: "10.0.0.2:2114" })
      })
    )
  })
})

describe("POST /admin/node/resign", () => {
  it.effect("asks the cluster status to resign (ops or admins), 200 OK with no body", () => {
    const cluster = fakeCluster({ state: "Leader" })
    return withNode(cluster, (send) =>
      Effect.gen(function* () {
        const r = yield* send("POST", "/admin/node/resign", { auth: OpsAuth })
        expect(r.status).toBe(200)
        expect(r.reason).toBe("OK")
        expect(r.body).toBeUndefined()
        expect((yield* send("POST", "/admin/node/resign", { auth: AdminAuth })).status).toBe(200)
        expect(cluster.resignations()).toBe(2)
      })
    )
  })

  it.effect("requires ops or admins", () => {
    const cluster = fakeCluster({ state: "Leader" })
    return withNode(cluster, (send) =>
      Effect.gen(function* () {
        expect((yield* send("POST", "/admin/node/resign")).status).toBe(401)
        expect((yield* send("POST", "/admin/node/resign", { auth: UserAuth })).status).toBe(401)
        expect(cluster.resignations()).toBe(0)
      })
    )
  })

  it.effect("is node-local: a follower that knows its leader is not redirected", () => {
    const cluster = fakeCluster({
      state: "Follower",
      leader: { instanceId: "x", httpHost: "10.0.0.2", httpPort: 2113 }
    })
    return withNode(cluster, (send) =>
      Effect.gen(function* () {
        expect((yield* send("POST", "/admin/node/resign", { auth: OpsAuth })).status).toBe(200)
        expect((yield* send("POST", "/admin/node/priority/2", { auth: OpsAuth })).status).toBe(200)
        expect(cluster.resignations()).toBe(1)
      })
    )
  })
})

describe("POST /admin/node/priority/{n}", () => {
  it.effect("sets the priority, which gossip then shows", () => {
    const cluster = fakeCluster()
    return withNode(cluster, (send) =>
      Effect.gen(function* () {
        const r = yield* send("POST", "/admin/node/priority/7", { auth: OpsAuth })
        expect(r.status).toBe(200)
        expect(r.body).toBeUndefined()
        expect(cluster.priority()).toBe(7)
        expect((yield* send("POST", "/admin/node/priority/-2147483648", { auth: AdminAuth })).status).toBe(200)
        expect(cluster.priority()).toBe(-2147483648)
        expect(json(yield* send("GET", "/gossip")).members[0].nodePriority).toBe(-2147483648)
      })
    )
  })

  it.effect("answers 400 with the reason when n is not a 32-bit integer", () => {
    const cluster = fakeCluster()
    return withNode(cluster, (send) =>
      Effect.gen(function* () {
        for (const n of ["abc", "1.5", "2147483648", "0x10", "%20"]) {
          const r = yield* send("POST", `/admin/node/priority/${n}`, { auth: OpsAuth })
          expect(r.status, n).toBe(400)
          expect(text(r)).toBe(NODE_PRIORITY_NOT_INTEGER)
          expect(header(r, "Content-Type")).toBe("text/plain")
        }
        expect(cluster.priority()).toBe(0)
      })
    )
  })

  it.effect("requires ops or admins", () => {
    const cluster = fakeCluster()
    return withNode(cluster, (send) =>
      Effect.gen(function* () {
        expect((yield* send("POST", "/admin/node/priority/3")).status).toBe(401)
        expect((yield* send("POST", "/admin/node/priority/3", { auth: UserAuth })).status).toBe(401)
        expect(cluster.priority()).toBe(0)
      })
    )
  })
})
