/**
 * The figures Vellum shares with KurrentDB's `/metrics`, under KurrentDB's `kurrentdb_*` names and labels, so
 * that dashboards built for KurrentDB (its published Grafana dashboards) read a Vellum node. Only figures
 * Vellum truly has are exposed: a KurrentDB series with no Vellum counterpart is absent, never a made-up zero.
 * docs/stats.md maps each series to its source.
 *
 * Storage figures come from `EventStore.stats()`; process and machine figures from the same snapshot `/stats`
 * uses. Rates (CPU %) are measured between consecutive scrapes (the first against the process start).
 * `kurrentdb_statuses` is KurrentDB's "seconds since the epoch when NAME last had STATUS": each scrape stamps
 * the current status of every registered source (the node's role, the scavenge phase).
 */
import { Counter, Gauge, type Registry } from "prom-client"
import type { EventStoreStats } from "@vellum/storage"
import type { ProcessSnapshot } from "./stats/ProcessStats.js"

/** What a scrape knows beyond the store: the process, the clock, the HTTP connections. */
export interface ScrapeContext {
  readonly nowMillis: number
  readonly process: ProcessSnapshot
  readonly openConnections: number
  /** The node's role (`Leader` for a lone node). */
  readonly nodeState: string
}

/** A status source: KurrentDB's `name` label and the status it is in now. */
export interface StatusSource {
  readonly name: string
  readonly current: () => string
}

/** A counter that mirrors a cumulative value kept elsewhere (prom-client counters only go up by `inc`). */
export const mirror = (counter: Counter, value: number, labels?: Record<string, string>): void => {
  if (labels === undefined) {
    counter.reset()
    counter.inc(Math.max(0, value))
    return
  }
  counter.remove(labels)
  counter.inc(labels, Math.max(0, value))
}

/** Counter and gauge constructors on `registry`. */
const seriesOn = (registry: Registry) => ({
  counter: (name: string, help: string, labelNames: ReadonlyArray<string> = []) =>
    new Counter({ name, help, labelNames, registers: [registry] }),
  gauge: (name: string, help: string, labelNames: ReadonlyArray<string> = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] })
})

const percent = (part: number, whole: number): number => (whole > 0 ? Math.round((part / whole) * 10000) / 100 : 0)

export interface KurrentMetrics {
  readonly updateStorage: (storage: EventStoreStats) => void
  readonly updateProcess: (scrape: ScrapeContext) => void
  readonly addStatus: (source: StatusSource) => void
}

export const makeKurrentMetrics = (registry: Registry): KurrentMetrics => {
  const { counter, gauge } = seriesOn(registry)

  const ioEvents = counter("kurrentdb_io_events_total", "Events read/written", ["activity"])
  const ioBytes = counter("kurrentdb_io_bytes_total", "Event bytes read (data and metadata)", ["activity"])
  const checkpoints = gauge("kurrentdb_checkpoints", "Value of each checkpoint (log positions)", ["name", "read"])
  const cacheHitsMisses = counter("kurrentdb_cache_hits_misses_total", "Hits/misses of each cache", ["cache", "kind"])
  const cacheBytes = gauge("kurrentdb_cache_resources_bytes", "Bytes used by each cache", ["cache", "kind"])
  const queueBusy = counter("kurrentdb_queue_busy_seconds_total", "Time each queue spent processing, seconds", [
    "queue"
  ])

  const sources: Array<StatusSource> = []
  // Registered at the first scrape that has a process snapshot, so a render without one shows none of
  // these series rather than zeros.
  let process: ((scrape: ScrapeContext) => void) | undefined

  return {
    addStatus: (source) => void sources.push(source),

    updateStorage: (s) => {
      mirror(ioEvents, s.writer.eventsWritten, { activity: "written" })
      mirror(ioEvents, s.reads.events, { activity: "read" })
      mirror(ioBytes, s.reads.bytes, { activity: "read" })
      // One node: what the writer has written, and what is durable (the replication checkpoint of a lone
      // leader) and indexed, which are the same position here.
      checkpoints.set({ name: "writer", read: "non-flushed" }, s.writerPosition)
      checkpoints.set({ name: "replication", read: "non-flushed" }, s.committedPosition)
      checkpoints.set({ name: "index", read: "non-flushed" }, s.committedPosition)
      mirror(cacheHitsMisses, s.readCache.hits, { cache: "chunk", kind: "hits" })
      mirror(cacheHitsMisses, s.readCache.misses, { cache: "chunk", kind: "misses" })
      cacheBytes.set({ cache: "chunk", kind: "size" }, s.readCache.residentBytes)
      mirror(queueBusy, s.writer.totalFlushDelayMs / 1000, { queue: "Writer" })
    },

    updateProcess: (scrape) => {
      process ??= makeProcessSeries(registry, () => sources)
      process(scrape)
    }
  }
}

/** The process, machine, connection and status series, and their update from one scrape. */
const makeProcessSeries = (registry: Registry, statusSources: () => ReadonlyArray<StatusSource>) => {
  const { counter, gauge } = seriesOn(registry)
  const connections = gauge("kurrentdb_kestrel_connections", "Open HTTP connections")
  const statuses = gauge("kurrentdb_statuses", "Seconds since the epoch when NAME most recently had STATUS", [
    "name",
    "status"
  ])
  const upTime = counter("kurrentdb_proc_up_time_seconds_total", "Seconds this process has been running", ["pid"])
  const procCpu = gauge("kurrentdb_proc_cpu", "Process CPU usage since the previous scrape, % of one core")
  const procMem = gauge("kurrentdb_proc_mem_bytes", "Process memory: working set (resident set size)", ["kind"])
  const threads = gauge("kurrentdb_proc_thread_count", "Threads of the process")
  const gcGenerations = gauge("kurrentdb_gc_generation_size_bytes", "Used bytes of each heap generation", [
    "generation"
  ])
  const gcCollections = counter("kurrentdb_gc_collection_count_total", "Garbage collections of each generation", [
    "generation"
  ])
  const heapSize = gauge("kurrentdb_gc_heap_size_bytes", "Used heap bytes")
  const heapFragmentation = gauge("kurrentdb_gc_heap_fragmentation", "Percentage of the heap committed but not used")
  const allocated = counter(
    "kurrentdb_gc_allocated_bytes_total",
    "Bytes allocated since the metrics started (estimated)"
  )
  const diskBytes = counter("kurrentdb_disk_io_bytes_total", "Bytes read from/written to the disk by the process", [
    "activity"
  ])
  const diskOps = counter("kurrentdb_disk_io_operations_total", "Read/write operations issued by the process", [
    "activity"
  ])
  const sysCpu = gauge("kurrentdb_sys_cpu", "Machine CPU usage since the previous scrape, %")
  const loadAvg = gauge("kurrentdb_sys_load_avg", "Average system load", ["period"])
  const sysMem = gauge("kurrentdb_sys_mem_bytes", "Free/total memory of the machine", ["kind"])
  const sysDisk = gauge("kurrentdb_sys_disk_bytes", "Used/total bytes of the disk holding the database", [
    "disk",
    "kind"
  ])

  const lastSeen = new Map<string, { readonly name: string; readonly status: string; seconds: number }>()
  /** The previous scrape's snapshot and time, the baseline of the CPU percentages. */
  let previous: { readonly snapshot: ProcessSnapshot; readonly atMillis: number } | undefined

  return ({ nowMillis, process: p, openConnections, nodeState }: ScrapeContext): void => {
    const before = previous?.snapshot
    const sinceMillis = previous?.atMillis ?? p.startTimeMillis
    previous = { snapshot: p, atMillis: nowMillis }
    connections.set(openConnections)
    const seconds = Math.floor(nowMillis / 1000)
    const current = [
      { name: "Node", status: nodeState },
      ...statusSources().map((source) => ({ name: source.name, status: source.current() }))
    ]
    for (const { name, status } of current) {
      const key = name + "\u0000" + status
      const seen = lastSeen.get(key)
      if (seen === undefined) lastSeen.set(key, { name, status, seconds })
      else seen.seconds = seconds
    }
    for (const seen of lastSeen.values()) statuses.set({ name: seen.name, status: seen.status }, seen.seconds)

    const elapsedMicros = (nowMillis - sinceMillis) * 1000
    mirror(upTime, Math.max(0, nowMillis - p.startTimeMillis) / 1000, { pid: String(p.pid) })
    procCpu.set(percent(p.cpuMicros - (before?.cpuMicros ?? 0), elapsedMicros))
    sysCpu.set(
      percent(
        p.system.cpuBusyMicros - (before?.system.cpuBusyMicros ?? 0),
        p.system.cpuTotalMicros - (before?.system.cpuTotalMicros ?? 0)
      )
    )
    procMem.set({ kind: "working-set" }, p.residentBytes)
    threads.set(p.threads)
    gcGenerations.set({ generation: "gen0" }, p.heap.youngBytes)
    gcGenerations.set({ generation: "gen2" }, p.heap.oldBytes)
    gcGenerations.set({ generation: "loh" }, p.heap.largeObjectBytes)
    mirror(gcCollections, p.gc.minorCount, { generation: "gen0" })
    mirror(gcCollections, p.gc.majorCount, { generation: "gen2" })
    heapSize.set(p.heap.usedBytes)
    heapFragmentation.set(percent(p.heap.totalBytes - p.heap.usedBytes, p.heap.totalBytes))
    mirror(allocated, p.gc.allocatedBytes)
    mirror(diskBytes, p.diskIo.readBytes, { activity: "read" })
    mirror(diskBytes, p.diskIo.writtenBytes, { activity: "written" })
    mirror(diskOps, p.diskIo.readOps, { activity: "read" })
    mirror(diskOps, p.diskIo.writeOps, { activity: "written" })
    loadAvg.set({ period: "1m" }, p.system.loadAverage[0])
    loadAvg.set({ period: "5m" }, p.system.loadAverage[1])
    loadAvg.set({ period: "15m" }, p.system.loadAverage[2])
    sysMem.set({ kind: "free" }, p.system.freeMemBytes)
    sysMem.set({ kind: "total" }, p.system.totalMemBytes)
    if (p.drive !== undefined) {
      sysDisk.set({ disk: p.drive.name, kind: "total" }, p.drive.totalBytes)
      sysDisk.set({ disk: p.drive.name, kind: "used" }, Math.max(0, p.drive.totalBytes - p.drive.availableBytes))
    }
  }
}
