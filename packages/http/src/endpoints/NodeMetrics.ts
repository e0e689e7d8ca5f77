/**
 * `/metrics` (Prometheus text format) and the HTTP request hook. Each node instance has its own prom-client
 * Registry (never the global default one) so tests and simulated nodes in one process do not clash. Storage
 * figures are copied from `EventStore.stats()` at scrape time; HTTP requests are counted as they finish by
 * `observeRequest`, which the pipeline calls once per request (a plain function: no Effect per request).
 * Process metrics (prom-client's defaults) are added only by the live layer (`live/NodeMetricsLive.ts`).
 */
import { Context, Effect, Layer } from "effect"
import { Counter, Gauge, Histogram, Registry } from "prom-client"
import type { EventStoreStats } from "@vellum/storage"
import { makeKurrentMetrics, mirror, type ScrapeContext, type StatusSource } from "./KurrentMetrics.js"

export interface RequestSample {
  readonly method: string
  /** The route family (`routeFamily`), so label values stay few. */
  readonly family: string
  readonly status: number
  readonly durationMillis: number
  readonly requestBytes?: number
  readonly responseBytes?: number
}

/** HTTP traffic totals, also shown as `proc.tcp` in `/stats`. */
export interface HttpTraffic {
  readonly requests: number
  readonly receivedBytes: number
  readonly sentBytes: number
  readonly openConnections: number
}

export interface NodeMetricsService {
  readonly registry: Registry
  readonly observeRequest: (sample: RequestSample) => void
  /** The live server adapter reports its open sockets here. */
  readonly setOpenConnections: (count: number) => void
  readonly traffic: () => HttpTraffic
  /**
   * The exposition text, with storage figures taken from `storage`, and the process, machine and status
   * figures when the scrape has them (the `/metrics` route always passes them).
   */
  readonly render: (storage: EventStoreStats, scrape?: ScrapeContext) => Effect.Effect<string>
  /** Adds a `kurrentdb_statuses` source (the node's role, the scavenge phase), stamped at each scrape. */
  readonly addStatus: (source: StatusSource) => void
  readonly contentType: string
}

const FAMILIES = new Set([
  "streams",
  "subscriptions",
  "users",
  "admin",
  "stats",
  "info",
  "ping",
  "gossip",
  "metrics",
  "health",
  "projections",
  "web",
  "ui",
  "sys",
  "histogram",
  "elections",
  "incoming"
])

/**
 * The first path segment when it names a known route family, else `other` (`/` is `root`). Takes a path,
 * a route template or a request target (absolute-form targets lose their scheme and authority first).
 */
export const routeFamily = (path: string): string => {
  // Origin-form targets (every request but a proxy's) are scanned in place: this runs once per request.
  const origin = path.charCodeAt(0) === SLASH ? path : path.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?]*/i, "")
  let start = 0
  while (start < origin.length) {
    const c = origin.charCodeAt(start)
    if (c === QUESTION) break
    if (c !== SLASH) {
      let end = start + 1
      while (end < origin.length && origin.charCodeAt(end) !== SLASH && origin.charCodeAt(end) !== QUESTION) end++
      const segment = origin.slice(start, end)
      return FAMILIES.has(segment) ? segment : "other"
    }
    start++
  }
  return "root"
}

const SLASH = 47
const QUESTION = 63

const makeStorageMetrics = (registry: Registry) => {
  const counter = (name: string, help: string) => new Counter({ name, help, registers: [registry] })
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry] })
  const m = {
    commands: counter(
      "vellum_writer_commands_total",
      "Write commands (appends, deletes, metadata writes) handled by the writer"
    ),
    rounds: counter("vellum_writer_rounds_total", "Writer rounds (each takes every waiting command)"),
    flushes: counter("vellum_writer_flushes_total", "Durable commit batches (one write + one fsync each)"),
    bytes: counter("vellum_writer_bytes_total", "Bytes written to the log by commit batches"),
    flushSeconds: counter(
      "vellum_writer_flush_seconds_total",
      "Time from write to durable, summed over commit batches"
    ),
    queued: gauge("vellum_writer_queue_length", "Write commands waiting for the writer"),
    lastFlushBytes: gauge("vellum_writer_last_flush_bytes", "Bytes of the last commit batch"),
    maxFlushBytes: gauge("vellum_writer_max_flush_bytes", "Largest commit batch, bytes"),
    writerPosition: gauge("vellum_log_writer_position_bytes", "Log position written up to"),
    committedPosition: gauge("vellum_log_committed_position_bytes", "Log position durable, indexed and readable up to"),
    chunks: gauge("vellum_log_chunks", "Chunk files of the log"),
    cacheHits: counter("vellum_read_cache_hits_total", "Block reads served by the read cache"),
    cacheMisses: counter("vellum_read_cache_misses_total", "Block reads that went to the disk"),
    cacheBytes: gauge("vellum_read_cache_resident_bytes", "Bytes held by the read cache"),
    indexTables: gauge("vellum_index_tables", "Sorted tables of the index"),
    indexTableEntries: gauge("vellum_index_table_entries", "Entries in the index's sorted tables"),
    indexMemtableEntries: gauge("vellum_index_memtable_entries", "Entries in the index's memtables"),
    indexMemtables: gauge("vellum_index_memtables", "Memtables (active plus those waiting to be written)"),
    indexBytes: gauge("vellum_index_resident_bytes", "Estimated memory held by the index"),
    writesRefused: gauge(
      "vellum_writes_refused",
      "1 while writes are refused after a disk error (the node is degraded), else 0"
    )
  }
  return (s: EventStoreStats): void => {
    mirror(m.commands, s.writer.commands)
    mirror(m.rounds, s.writer.rounds)
    mirror(m.flushes, s.writer.flushes)
    mirror(m.bytes, s.writer.totalFlushSize)
    mirror(m.flushSeconds, s.writer.totalFlushDelayMs / 1000)
    m.queued.set(s.writer.queued)
    m.lastFlushBytes.set(s.writer.lastFlushSize)
    m.maxFlushBytes.set(s.writer.maxFlushSize)
    m.writerPosition.set(s.writerPosition)
    m.committedPosition.set(s.committedPosition)
    m.chunks.set(s.chunks)
    mirror(m.cacheHits, s.readCache.hits)
    mirror(m.cacheMisses, s.readCache.misses)
    m.cacheBytes.set(s.readCache.residentBytes)
    m.indexTables.set(s.index.tables)
    m.indexTableEntries.set(s.index.tableEntries)
    m.indexMemtableEntries.set(s.index.memtableEntries)
    m.indexMemtables.set(s.index.memtables)
    m.indexBytes.set(s.index.residentBytes)
    m.writesRefused.set(s.writesRefused === undefined ? 0 : 1)
  }
}

/** Builds one node's metrics on a fresh registry (plain; the layers wrap it). */
export const makeNodeMetrics = (): NodeMetricsService => {
  const registry = new Registry()
  const duration = new Histogram({
    name: "vellum_http_request_duration_seconds",
    help: "HTTP requests by route family, method and status: duration (its _count is the request count)",
    labelNames: ["family", "method", "status"] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry]
  })
  const received = new Counter({
    name: "vellum_http_received_bytes_total",
    help: "HTTP request body bytes received",
    registers: [registry]
  })
  const sent = new Counter({
    name: "vellum_http_sent_bytes_total",
    help: "HTTP response body bytes sent",
    registers: [registry]
  })
  const connections = new Gauge({
    name: "vellum_http_open_connections",
    help: "Open HTTP connections",
    registers: [registry]
  })
  const updateStorage = makeStorageMetrics(registry)
  const kurrent = makeKurrentMetrics(registry)
  let requests = 0
  let receivedBytes = 0
  let sentBytes = 0
  let openConnections = 0
  return {
    registry,
    contentType: registry.contentType,
    observeRequest: (sample) => {
      requests++
      duration.observe(
        { family: sample.family, method: sample.method, status: String(sample.status) },
        Math.max(0, sample.durationMillis) / 1000
      )
      const inBytes = Math.max(0, sample.requestBytes ?? 0)
      const outBytes = Math.max(0, sample.responseBytes ?? 0)
      receivedBytes += inBytes
      sentBytes += outBytes
      received.inc(inBytes)
      sent.inc(outBytes)
    },
    setOpenConnections: (count) => {
      openConnections = Math.max(0, count)
      connections.set(openConnections)
    },
    traffic: () => ({ requests, receivedBytes, sentBytes, openConnections }),
    addStatus: kurrent.addStatus,
    render: (storage, scrape) =>
      Effect.suspend(() => {
        updateStorage(storage)
        kurrent.updateStorage(storage)
        if (scrape !== undefined) kurrent.updateProcess(scrape)
        // prom-client renders through Promises (metric `get()` is async) even for these synchronous metrics.
        return Effect.promise(() => registry.metrics())
      })
  }
}

export class NodeMetrics extends Context.Tag("@vellum/http/NodeMetrics")<NodeMetrics, NodeMetricsService>() {
  /** Request, traffic and storage metrics on a registry of this node's own (deterministic). */
  static readonly layer: Layer.Layer<NodeMetrics> = Layer.sync(NodeMetrics, makeNodeMetrics)
}
