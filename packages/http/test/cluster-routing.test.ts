// Client routing in a cluster, through the whole pipeline on a real store: a node that is not the leader
// sends writes and requires-leader requests to the leader it knows (307 to the same path and query), refuses
// them at once when it knows none or is between roles (503 with the reason), and serves plain reads itself.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import type { VNodeState } from "@vellum/cluster"
import { nodeRoleOf, singleNodeIdentity, usersRoutes, type NodeInfoService } from "../src/index.js"
import { fakeCluster, type FakeCluster } from "./fakeClusterStatus.js"
import { appendEvents, header, makeTestNode, text, uuid, EventsJson, type TestNode } from "./streams-harness.js"

const leader = { instanceId: uuid(9), httpHost: "10.0.0.2", httpPort: 2114 }

const lifecycle = (state: VNodeState = "Leader"): NodeInfoService => ({
  identity: singleNodeIdentity({
    version: "0.1.0",
    instanceId: uuid(1),
    httpEndpoint: { host: "10.0.0.1", port: 2113 }
  }),
  state: Ref.unsafeMake(state)
})

/** A node over the fake cluster: its HTTP settings read their role from it, as the node's do. */
const clusterNode = (cluster: FakeCluster, info: NodeInfoService = lifecycle()) =>
  makeTestNode({ settings: { nodeRole: nodeRoleOf(info, cluster) } })

const expectRedirect = (r: { status: number; headers: Record<string, unknown> }, location: string) => {
  expect(r.status).toBe(307)
  expect(header(r as never, "Location")).toBe(location)
}

const readBack = (node: TestNode, stream: string) =>
  node.request("GET", `/streams/${stream}/0`, { headers: { Accept: "application/json" } })

describe("a follower that knows its leader", () => {
  it.scoped("redirects an append to the same path and query on the leader, and writes nothing", () =>
    Effect.gen(function* () {
      const cluster = fakeCluster({ state: "Follower", leader })
      const node = yield* clusterNode(cluster)
      const r = yield* node.request("POST", "/streams/orders?x=1&y=%2F", {
        headers: { "Content-Type": EventsJson },
        body: JSON.stringify([{ eventId: uuid(5), eventType: "T", data: {} }])
      })
      expectRedirect(r, "http://10.0.0.2:2114/streams/orders?x=1&y=%2F")
      expect(r.reason).toBe("Temporary Redirect")
      expect((yield* readBack(node, "orders")).status).toBe(404)
    })
  )

  it.scoped("redirects deletes, metadata writes and idempotent appends", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "Follower", leader }))
      expectRedirect(yield* node.request("DELETE", "/streams/a%20b"), "http://10.0.0.2:2114/streams/a%20b")
      const metadata = yield* node.request("POST", "/streams/s/metadata", {
        headers: { "Content-Type": "application/json", "Kurrent-EventId": uuid(3) },
        body: "{}"
      })
      expectRedirect(metadata, "http://10.0.0.2:2114/streams/s/metadata")
      const incoming = yield* node.request("POST", `/streams/s/incoming/${uuid(4)}`, {
        headers: { "Content-Type": "application/json", "Kurrent-EventType": "T" },
        body: "{}"
      })
      expectRedirect(incoming, `http://10.0.0.2:2114/streams/s/incoming/${uuid(4)}`)
    })
  )

  it.scoped("redirects a read that requires the leader, under each spelling of the header", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "Follower", leader }))
      for (const [name, value] of [
        ["Kurrent-RequireLeader", "True"],
        ["ES-RequireLeader", "true"],
        ["ES-RequireMaster", "TRUE"]
      ] as const) {
        const r = yield* node.request("GET", "/streams/s/0?embed=body", { headers: { [name]: value } })
        expectRedirect(r, "http://10.0.0.2:2114/streams/s/0?embed=body")
      }
    })
  )

  it.scoped("serves plain reads itself, and reads that say requires-leader False", () =>
    Effect.gen(function* () {
      const cluster = fakeCluster({ state: "Leader" })
      const node = yield* clusterNode(cluster)
      expect((yield* appendEvents(node, "s", [1])).status).toBe(201)
      cluster.set("Follower", leader)
      expect((yield* readBack(node, "s")).status).toBe(200)
      const r = yield* node.request("GET", "/streams/s/0", {
        headers: { Accept: "application/json", "Kurrent-RequireLeader": "False" }
      })
      expect(r.status).toBe(200)
    })
  )

  it.scoped("brackets an IPv6 leader address in the Location", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "Clone", leader: { ...leader, httpHost: "fd00::2" } }))
      expectRedirect(yield* node.request("DELETE", "/streams/s"), "http://[fd00::2]:2114/streams/s")
    })
  )

  it.scoped("a read-only replica sends writes to the leader too (docs/decisions.md)", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "ReadOnlyReplica", leader }))
      expectRedirect(yield* appendEvents(node, "s", [1]), "http://10.0.0.2:2114/streams/s")
    })
  )
})

describe("a node that cannot take writes", () => {
  const refused: ReadonlyArray<[VNodeState, boolean]> = [
    ["Unknown", false],
    ["Unknown", true], // a leader it followed before the election does not count
    ["DiscoverLeader", false],
    ["PreLeader", true],
    ["ResigningLeader", true],
    ["Initializing", false],
    ["ShuttingDown", true],
    ["Follower", false], // a follower that has lost its leader
    ["ReadOnlyLeaderless", false]
  ]
  for (const [state, knowsLeader] of refused) {
    it.scoped(`${state}${knowsLeader ? " (leader known)" : ""} answers a write 503 at once, with the reason`, () =>
      Effect.gen(function* () {
        const node = yield* clusterNode(fakeCluster({ state, ...(knowsLeader ? { leader } : {}) }))
        const r = yield* appendEvents(node, "s", [1])
        expect(r.status).toBe(503)
        expect(r.reason).toBe("Server Is Not Ready")
        expect(header(r, "Retry-After")).toBe("1")
        expect(text(r)).toMatch(/leader|starting|shutting down|resign|writes/i)
        expect((yield* readBack(node, "s")).status).toBe(404)
      })
    )
  }

  it.scoped("says why: no leader known, names the state", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "Unknown" }))
      expect(text(yield* node.request("DELETE", "/streams/s"))).toBe(
        "No leader is known (node state: Unknown); try again once the cluster has elected one."
      )
    })
  )

  it.scoped("answers a requires-leader read 503 when it knows no leader, and serves a plain read", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "Unknown" }))
      const required = yield* node.request("GET", "/streams/s/0", { headers: { "ES-RequireMaster": "True" } })
      expect(required.status).toBe(503)
      expect((yield* readBack(node, "s")).status).toBe(404)
    })
  )

  it.scoped("a leader shutting down (its own lifecycle) refuses writes although the cluster says Leader", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "Leader" }), lifecycle("ShuttingDown"))
      expect((yield* appendEvents(node, "s", [1])).status).toBe(503)
    })
  )
})

describe("the leader", () => {
  it.scoped("serves writes and requires-leader reads itself", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "Leader", leader }))
      expect((yield* appendEvents(node, "s", [1], { "Kurrent-RequireLeader": "True" })).status).toBe(201)
      const r = yield* node.request("GET", "/streams/s/0", {
        headers: { Accept: "application/json", "Kurrent-RequireLeader": "True" }
      })
      expect(r.status).toBe(200)
      expect((yield* node.request("DELETE", "/streams/s")).status).toBe(204)
    })
  )

  it.scoped("still redirects an event POST without an event id to its idempotent URI", () =>
    Effect.gen(function* () {
      const node = yield* clusterNode(fakeCluster({ state: "Leader" }))
      const r = yield* node.request("POST", "/streams/s", {
        headers: { "Content-Type": "application/json", "Kurrent-EventType": "T" },
        body: "{}"
      })
      expect(r.status).toBe(307)
      expect(header(r, "Location")).toMatch(/^http:\/\/localhost:2113\/streams\/s\/incoming\/[0-9a-f-]{36}$/)
    })
  )
})

describe("which routes write", () => {
  it("every users route but the reads writes through the leader", () => {
    const table = usersRoutes.map((r) => `${r.method} ${r.path} ${r.writes === true ? "write" : "read"}`)
    for (const row of table) expect(row.endsWith(row.startsWith("GET") ? "read" : "write")).toBe(true)
  })
})
