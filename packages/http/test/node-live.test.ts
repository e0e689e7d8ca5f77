// The live layers read the real process: the snapshot behind /stats is plausible and moves with the
// process (GC, allocation, CPU), and the live metrics include prom-client's default process metrics.
import { describe, expect, it } from "@effect/vitest"
import * as os from "node:os"
import { Effect } from "effect"
import type { EventStoreStats } from "@vellum/storage"
import {
  NodeMetrics,
  ProcessStats,
  buildStats,
  groupStats,
  statsJson,
  NodeMetricsLive,
  ProcessStatsLive
} from "../src/endpoints/index.js"

const storage: EventStoreStats = {
  writerPosition: 0,
  committedPosition: 0,
  chunks: 1,
  index: { tables: 0, levels: [], memtableEntries: 0, memtables: 1, tableEntries: 0, residentBytes: 0 },
  readCache: { hits: 0, misses: 0, residentBytes: 0 },
  reads: { events: 0, bytes: 0 },
  writer: {
    rounds: 0,
    commands: 0,
    eventsWritten: 0,
    lastFlushSize: 0,
    lastFlushDelayMs: 0,
    maxFlushSize: 0,
    maxFlushDelayMs: 0,
    totalFlushSize: 0,
    totalFlushDelayMs: 0,
    flushes: 0,
    queued: 0
  }
}

/** Enough short-lived garbage to make V8 scavenge several times. */
const churn = () => {
  let keep: Array<{ readonly i: number; readonly s: string }> = []
  for (let i = 0; i < 2_000_000; i++) {
    keep.push({ i, s: `x${i}` })
    if (keep.length > 1000) keep = []
  }
  return keep.length
}

/** Every leaf of a JSON document is a string, a finite number or null. */
const leavesAreSane = (node: unknown, path: string): void => {
  if (node !== null && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) leavesAreSane(v, `${path}.${k}`)
  } else if (typeof node === "number") {
    expect(Number.isFinite(node), path).toBe(true)
  } else {
    expect(["string", "object"].includes(typeof node), path).toBe(true)
  }
}

describe("ProcessStatsLive.layer", () => {
  it.scoped("snapshots this process and sees it work", () =>
    Effect.gen(function* () {
      const stats = yield* ProcessStats
      const a = yield* stats.snapshot
      expect(a.pid).toBe(process.pid)
      expect(a.startTimeMillis).toBeLessThanOrEqual(Date.now())
      expect(a.startTimeMillis).toBeGreaterThan(Date.now() - 24 * 3600 * 1000)
      expect(a.cpuCount).toBeGreaterThanOrEqual(1)
      expect(a.residentBytes).toBeGreaterThan(0)
      expect(a.threads).toBeGreaterThanOrEqual(1)
      expect(a.heap.usedBytes).toBeGreaterThan(0)
      expect(a.heap.oldBytes).toBeGreaterThan(0)
      expect(a.system.totalMemBytes).toBe(os.totalmem())
      expect(a.drive).toBeDefined()
      expect(a.drive!.totalBytes).toBeGreaterThan(0)
      expect(a.drive!.name.startsWith("/")).toBe(true)

      expect(churn()).toBeGreaterThanOrEqual(0)
      const b = yield* stats.snapshot
      expect(b.gc.minorCount).toBeGreaterThan(a.gc.minorCount)
      expect(b.gc.pauseMicros).toBeGreaterThan(a.gc.pauseMicros)
      expect(b.gc.allocatedBytes).toBeGreaterThan(a.gc.allocatedBytes)
      expect(b.cpuMicros).toBeGreaterThan(a.cpuMicros)
      expect(b.eventLoop.utilization).toBeGreaterThanOrEqual(0)
      expect(b.eventLoop.utilization).toBeLessThanOrEqual(1)

      const first = buildStats({
        nowMillis: Date.now(),
        process: b,
        storage,
        traffic: { requests: 0, receivedBytes: 0, sentBytes: 0, openConnections: 0 },
        previous: undefined
      })
      const doc = JSON.parse(statsJson(groupStats(first.stats), false))
      leavesAreSane(doc, "stats")
      expect(doc.proc.id).toBe(process.pid)
      expect(doc.proc.gc.gen0ItemsCount).toBe(b.gc.minorCount)
    }).pipe(Effect.provide(ProcessStatsLive.layer({ dbPath: os.tmpdir() })))
  )

  it.scoped("leaves the drive out without a database path", () =>
    Effect.gen(function* () {
      const snapshot = yield* Effect.flatMap(ProcessStats, (s) => s.snapshot)
      expect(snapshot.drive).toBeUndefined()
    }).pipe(Effect.provide(ProcessStatsLive.layer()))
  )
})

describe("NodeMetricsLive.layer", () => {
  it.effect("adds prom-client's default process metrics to the node's registry", () =>
    Effect.gen(function* () {
      const metrics = yield* NodeMetrics
      const text = yield* metrics.render(storage)
      expect(text).toMatch(/^process_cpu_user_seconds_total \S+$/m)
      expect(text).toMatch(/^nodejs_heap_size_used_bytes \S+$/m)
      expect(text).toMatch(/^vellum_writer_commands_total 0$/m)
    }).pipe(Effect.provide(NodeMetricsLive.layer))
  )
})
