// A node that refuses writes after a disk error is degraded, not dead: `/health/live` stays 204 (a restart
// frees no space, and reads still work), while `/stats` (`es.health`), `/info` (`health`) and `/metrics`
// (`vellum_writes_refused`) say so, with the reason and no file name.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { StorageFailed } from "@vellum/storage"
import { storageStats } from "./nodeFixtures.js"
import {
  buildStats,
  groupStats,
  healthLive,
  idleSnapshot,
  infoDocument,
  makeNodeMetrics,
  nodeHealth,
  singleNodeIdentity,
  statsJson
} from "../src/endpoints/index.js"

const T0 = Date.UTC(2026, 10, 27, 8, 0, 0, 0)
const full = new StorageFailed({
  message: "the disk is full: writes are refused until space is freed",
  reason: "DiskFull",
  detail: "write /db/chunk-000001.000000: ENOSPC"
})
const degraded = { ...storageStats(), writesRefused: { error: full, sinceMillis: T0 } }
const identity = singleNodeIdentity({
  version: "25.0.0",
  instanceId: "00000000-0000-4000-8000-000000000001",
  httpEndpoint: { host: "127.0.0.1", port: 2113 }
})
const traffic = { requests: 0, receivedBytes: 0, sentBytes: 0, openConnections: 0 }
const statsOf = (storage: typeof degraded | ReturnType<typeof storageStats>) =>
  JSON.parse(
    statsJson(
      groupStats(
        buildStats({ nowMillis: T0 + 42_000, process: idleSnapshot(T0), storage, traffic, previous: undefined }).stats
      ),
      false
    )
  )

describe("a degraded node", () => {
  it("stays live for /health/live", () => {
    expect(healthLive("GET", new URLSearchParams(), true).status).toBe(204)
  })

  it("/stats: es.health says degraded, why, and for how long; healthy otherwise", () => {
    expect(statsOf(degraded).es.health).toEqual({
      status: "degraded",
      reason: "the disk is full: writes are refused until space is freed",
      degradedSeconds: 42
    })
    expect(statsOf(storageStats()).es.health).toEqual({ status: "healthy", reason: "", degradedSeconds: 0 })
  })

  it("/info: a health member while degraded, none while healthy", () => {
    expect(infoDocument(identity, "Leader", nodeHealth(degraded)).health).toEqual({
      status: "degraded",
      reason: full.message
    })
    expect(Object.keys(infoDocument(identity, "Leader", nodeHealth(storageStats())))).not.toContain("health")
  })

  it("/metrics: vellum_writes_refused is 1 while degraded, 0 otherwise", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const metrics = makeNodeMetrics()
        expect(yield* metrics.render(degraded)).toMatch(/^vellum_writes_refused 1$/m)
        expect(yield* metrics.render(storageStats())).toMatch(/^vellum_writes_refused 0$/m)
      })
    ))

  it("no file name reaches any of them", () => {
    expect(JSON.stringify(statsOf(degraded))).not.toContain("/db")
    expect(JSON.stringify(infoDocument(identity, "Leader", nodeHealth(degraded)))).not.toContain("/db")
  })
})
