// `/metrics` under KurrentDB's names: the `kurrentdb_*` series Vellum has a true figure for, with KurrentDB's
// types and labels, fed from the store's stats and the process snapshot of each scrape.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeNodeMetrics, type ProcessSnapshot } from "../src/endpoints/index.js"
import { parseExposition, processSnapshot, storageStats, value } from "./nodeFixtures.js"

const START = 1_700_000_000_000
const snapshot = (over: Partial<ProcessSnapshot> = {}): ProcessSnapshot => processSnapshot(START, over)

describe("kurrentdb_* metrics", () => {
  it.effect("the storage series, with KurrentDB's types and labels", () =>
    Effect.gen(function* () {
      const metrics = makeNodeMetrics()
      const { types, samples } = parseExposition(
        yield* metrics.render(storageStats({ eventsWritten: 800, totalFlushDelayMs: 2500 }))
      )
      expect(types.get("kurrentdb_io_events_total")).toBe("counter")
      expect(value(samples, "kurrentdb_io_events_total", { activity: "written" })).toBe(800)
      expect(value(samples, "kurrentdb_io_events_total", { activity: "read" })).toBe(70)
      expect(types.get("kurrentdb_io_bytes_total")).toBe("counter")
      expect(value(samples, "kurrentdb_io_bytes_total", { activity: "read" })).toBe(7000)
      expect(types.get("kurrentdb_checkpoints")).toBe("gauge")
      expect(value(samples, "kurrentdb_checkpoints", { name: "writer", read: "non-flushed" })).toBe(5000)
      expect(value(samples, "kurrentdb_checkpoints", { name: "replication", read: "non-flushed" })).toBe(4096)
      expect(value(samples, "kurrentdb_checkpoints", { name: "index", read: "non-flushed" })).toBe(4096)
      expect(types.get("kurrentdb_cache_hits_misses_total")).toBe("counter")
      expect(value(samples, "kurrentdb_cache_hits_misses_total", { cache: "chunk", kind: "hits" })).toBe(40)
      expect(value(samples, "kurrentdb_cache_hits_misses_total", { cache: "chunk", kind: "misses" })).toBe(2)
      expect(value(samples, "kurrentdb_cache_resources_bytes", { cache: "chunk", kind: "size" })).toBe(65536)
      expect(types.get("kurrentdb_queue_busy_seconds_total")).toBe("counter")
      expect(value(samples, "kurrentdb_queue_busy_seconds_total", { queue: "Writer" })).toBe(2.5)
      // Without a scrape context there are no process series (never zeros in their place).
      expect(samples.some((s) => s.name.startsWith("kurrentdb_proc_"))).toBe(false)
    })
  )

  it.effect(
    "the process, machine and status series; counters follow the store and CPU is measured between scrapes",
    () =>
      Effect.gen(function* () {
        const metrics = makeNodeMetrics()
        metrics.setOpenConnections(3)
        let phase = "Idle"
        metrics.addStatus({ name: "Scavenge", current: () => phase })
        const first = parseExposition(
          yield* metrics.render(storageStats(), {
            nowMillis: START + 10_000,
            process: snapshot(),
            openConnections: 3,
            nodeState: "Leader"
          })
        )
        const v = (name: string, labels: Record<string, string> = {}) => value(first.samples, name, labels)
        expect(first.types.get("kurrentdb_proc_up_time_seconds_total")).toBe("counter")
        expect(v("kurrentdb_proc_up_time_seconds_total", { pid: "4242" })).toBe(10)
        expect(v("kurrentdb_proc_cpu")).toBe(50)
        expect(v("kurrentdb_proc_mem_bytes", { kind: "working-set" })).toBe(50_000_000)
        expect(v("kurrentdb_proc_thread_count")).toBe(11)
        expect(v("kurrentdb_gc_generation_size_bytes", { generation: "gen0" })).toBe(1000)
        expect(v("kurrentdb_gc_generation_size_bytes", { generation: "gen2" })).toBe(20_000)
        expect(v("kurrentdb_gc_generation_size_bytes", { generation: "loh" })).toBe(3000)
        expect(v("kurrentdb_gc_generation_size_bytes", { generation: "gen1" })).toBeUndefined()
        expect(v("kurrentdb_gc_collection_count_total", { generation: "gen0" })).toBe(7)
        expect(v("kurrentdb_gc_collection_count_total", { generation: "gen2" })).toBe(1)
        expect(v("kurrentdb_gc_heap_size_bytes")).toBe(24_000)
        expect(v("kurrentdb_gc_heap_fragmentation")).toBe(25)
        expect(v("kurrentdb_gc_allocated_bytes_total")).toBe(1_000_000)
        expect(v("kurrentdb_disk_io_bytes_total", { activity: "read" })).toBe(4096)
        expect(v("kurrentdb_disk_io_bytes_total", { activity: "written" })).toBe(8192)
        expect(v("kurrentdb_disk_io_operations_total", { activity: "read" })).toBe(3)
        expect(v("kurrentdb_disk_io_operations_total", { activity: "written" })).toBe(5)
        expect(v("kurrentdb_sys_cpu")).toBe(25)
        expect(v("kurrentdb_sys_load_avg", { period: "1m" })).toBe(0.5)
        expect(v("kurrentdb_sys_load_avg", { period: "15m" })).toBe(0.125)
        expect(v("kurrentdb_sys_mem_bytes", { kind: "free" })).toBe(1_000)
        expect(v("kurrentdb_sys_mem_bytes", { kind: "total" })).toBe(4_000)
        expect(v("kurrentdb_sys_disk_bytes", { disk: "/", kind: "used" })).toBe(75)
        expect(v("kurrentdb_sys_disk_bytes", { disk: "/", kind: "total" })).toBe(100)
        expect(first.types.get("kurrentdb_kestrel_connections")).toBe("gauge")
        expect(v("kurrentdb_kestrel_connections")).toBe(3)
        expect(first.types.get("kurrentdb_statuses")).toBe("gauge")
        expect(v("kurrentdb_statuses", { name: "Node", status: "Leader" })).toBe(START / 1000 + 10)
        expect(v("kurrentdb_statuses", { name: "Scavenge", status: "Idle" })).toBe(START / 1000 + 10)

        // Ten seconds later: 0.3 of a core since the first scrape; the scavenge moved on; counters moved.
        phase = "Accumulation"
        const later = snapshot({ cpuMicros: 8_000_000, gc: { ...snapshot().gc, minorCount: 20 } })
        const second = parseExposition(
          yield* metrics.render(storageStats({ eventsWritten: 900 }), {
            nowMillis: START + 20_000,
            process: later,
            openConnections: 1,
            nodeState: "Leader"
          })
        )
        const w = (name: string, labels: Record<string, string> = {}) => value(second.samples, name, labels)
        expect(w("kurrentdb_proc_cpu")).toBe(30)
        expect(w("kurrentdb_proc_up_time_seconds_total", { pid: "4242" })).toBe(20)
        expect(w("kurrentdb_gc_collection_count_total", { generation: "gen0" })).toBe(20)
        expect(w("kurrentdb_io_events_total", { activity: "written" })).toBe(900)
        expect(w("kurrentdb_kestrel_connections")).toBe(1)
        expect(w("kurrentdb_statuses", { name: "Scavenge", status: "Idle" })).toBe(START / 1000 + 10)
        expect(w("kurrentdb_statuses", { name: "Scavenge", status: "Accumulation" })).toBe(START / 1000 + 20)
        expect(w("kurrentdb_statuses", { name: "Node", status: "Leader" })).toBe(START / 1000 + 20)
      })
  )
})
