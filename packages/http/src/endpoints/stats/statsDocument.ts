/**
 * The flat stats (`proc-…`, `sys-…`, `es-…` keys) from one process snapshot, the store's figures
 * and the HTTP traffic totals. Rates (CPU, allocation speed, items per second, …) compare with the previous
 * sample; the first sample compares with the process start (everything zero then). Pure: the caller gives
 * the time. docs/stats.md says what every key means here and which .NET figure it stands in for.
 */
import type { EventStoreStats } from "@vellum/storage"
import type { LeaderEndpoint, VNodeState } from "@vellum/cluster"
import { roundTripDate, timeSpanGeneral } from "../dotnet.js"
import type { HttpTraffic } from "../NodeMetrics.js"
import { nodeHealth } from "../health.js"
import type { ProcessSnapshot } from "./ProcessStats.js"
import { statMeta, type FlatStats, type StatValue } from "./StatsTree.js"

/** The cumulative figures a later sample computes its rates against. */
export interface StatsSample {
  readonly atMillis: number
  readonly cpuMicros: number
  readonly sysBusyMicros: number
  readonly sysTotalMicros: number
  readonly gcAllocatedBytes: number
  readonly gcPauseMicros: number
  readonly writerCommands: number
  readonly writerFlushDelayMs: number
  readonly receivedBytes: number
  readonly sentBytes: number
  readonly queueLengthPeak: number
  /** When the writer was last seen working (commands processed or waiting), and since when it has been. */
  readonly writerActiveAtMillis: number
  readonly writerBusySinceMillis: number | undefined
}

export interface StatsInput {
  readonly nowMillis: number
  readonly process: ProcessSnapshot
  readonly storage: EventStoreStats
  readonly traffic: HttpTraffic
  readonly previous: StatsSample | undefined
  /** The node's place in its cluster: its state and the leader it follows (omitted: no `es-cluster-…` keys). */
  readonly cluster?: { readonly state: VNodeState; readonly leader: LeaderEndpoint | undefined }
}

const clusterStats = (cluster: StatsInput["cluster"]): ReadonlyArray<readonly [string, StatValue]> =>
  cluster === undefined
    ? []
    : [
        ["es-cluster-state", cluster.state],
        [
          "es-cluster-leader",
          cluster.leader === undefined ? "" : `${cluster.leader.httpHost}:${cluster.leader.httpPort}`
        ]
      ]

/** The writer's queue, named as the reference names its storage writer queue. */
export const WRITER_QUEUE = "StorageWriterQueue"

const startSample = (process: ProcessSnapshot): StatsSample => ({
  atMillis: process.startTimeMillis,
  cpuMicros: 0,
  sysBusyMicros: 0,
  sysTotalMicros: 0,
  gcAllocatedBytes: 0,
  gcPauseMicros: 0,
  writerCommands: 0,
  writerFlushDelayMs: 0,
  receivedBytes: 0,
  sentBytes: 0,
  queueLengthPeak: 0,
  writerActiveAtMillis: process.startTimeMillis,
  writerBusySinceMillis: undefined
})

/** `part / whole`, 0 when there is no whole (first sample at start, idle machine) or no finite answer. */
const ratio = (part: number, whole: number): number => {
  const r = whole > 0 ? part / whole : 0
  return Number.isFinite(r) ? r : 0
}

const round2 = (n: number): number => Math.round(n * 100) / 100

const percent = (part: number, whole: number): number => round2(Math.min(100, Math.max(0, ratio(part, whole) * 100)))

/** The reference strips `\` and `:` from drive names used in keys (Windows drive letters). */
const driveKey = (name: string): string => name.replace(/[\\:]/g, "")

export const buildStats = (input: StatsInput): { readonly stats: FlatStats; readonly sample: StatsSample } => {
  const { process: p, storage: s, traffic: t } = input
  const prev = input.previous ?? startSample(p)
  const elapsedMs = Math.max(0, input.nowMillis - prev.atMillis)
  const elapsedSeconds = elapsedMs / 1000
  const perSecond = (delta: number): number => ratio(delta, elapsedSeconds)
  const w = s.writer

  const cpu = percent(p.cpuMicros - prev.cpuMicros, elapsedMs * 1000 * p.cpuCount) * p.cpuCount
  const commandsDelta = Math.max(0, w.commands - prev.writerCommands)
  const flushDelayDelta = Math.max(0, w.totalFlushDelayMs - prev.writerFlushDelayMs)
  const receivedDelta = Math.max(0, t.receivedBytes - prev.receivedBytes)
  const sentDelta = Math.max(0, t.sentBytes - prev.sentBytes)
  const queuePeak = Math.max(prev.queueLengthPeak, w.queued)
  // The writer keeps no idle/busy clock: both are estimated from what consecutive samples saw.
  const busy = w.queued > 0
  const activeAt = busy || commandsDelta > 0 ? input.nowMillis : prev.writerActiveAtMillis
  const busySince = busy ? (prev.writerBusySinceMillis ?? input.nowMillis) : undefined

  const health = nodeHealth(s)
  const stats: Array<readonly [string, StatValue]> = [
    ["proc-startTime", roundTripDate(p.startTimeMillis)],
    ["proc-id", p.pid],
    ["proc-mem", statMeta(p.residentBytes, "Process", "Process Virtual Memory")],
    ["proc-cpu", statMeta(round2(cpu), "Process", "Process Cpu Usage")],
    ["proc-cpuScaled", round2(ratio(cpu, p.cpuCount))],
    ["proc-threadsCount", p.threads],
    // No lock contention or exception counters exist in Node.js (docs/stats.md).
    ["proc-contentionsRate", 0],
    ["proc-thrownExceptionsRate", 0],
    [
      "sys-cpu",
      statMeta(
        percent(p.system.cpuBusyMicros - prev.sysBusyMicros, p.system.cpuTotalMicros - prev.sysTotalMicros),
        "Machine",
        "Machine CPU Usage"
      )
    ],
    ["sys-loadavg-1m", round2(p.system.loadAverage[0])],
    ["sys-loadavg-5m", round2(p.system.loadAverage[1])],
    ["sys-loadavg-15m", round2(p.system.loadAverage[2])],
    ["sys-freeMem", p.system.freeMemBytes],
    ["sys-totalMem", p.system.totalMemBytes],
    ["proc-gc-allocationSpeed", Math.round(perSecond(Math.max(0, p.gc.allocatedBytes - prev.gcAllocatedBytes)))],
    ["proc-gc-fragmentation", percent(p.heap.totalBytes - p.heap.usedBytes, p.heap.totalBytes)],
    ["proc-gc-gen0ItemsCount", p.gc.minorCount],
    ["proc-gc-gen0Size", p.heap.youngBytes],
    ["proc-gc-gen1ItemsCount", p.gc.incrementalCount],
    // V8 has no middle generation (docs/stats.md).
    ["proc-gc-gen1Size", 0],
    ["proc-gc-gen2ItemsCount", p.gc.majorCount],
    ["proc-gc-gen2Size", p.heap.oldBytes],
    ["proc-gc-largeHeapSize", p.heap.largeObjectBytes],
    ["proc-gc-timeInGc", percent(p.gc.pauseMicros - prev.gcPauseMicros, elapsedMs * 1000)],
    ["proc-gc-totalBytesInHeaps", p.heap.usedBytes],
    ["proc-eventLoop-delayMeanMs", round2(p.eventLoop.delayMeanMs)],
    ["proc-eventLoop-delayMaxMs", round2(p.eventLoop.delayMaxMs)],
    ["proc-eventLoop-delayP99Ms", round2(p.eventLoop.delayP99Ms)],
    ["proc-eventLoop-utilization", round2(p.eventLoop.utilization * 100)],
    ["proc-diskIo-readBytes", p.diskIo.readBytes],
    ["proc-diskIo-writtenBytes", p.diskIo.writtenBytes],
    ["proc-diskIo-readOps", p.diskIo.readOps],
    ["proc-diskIo-writeOps", p.diskIo.writeOps],
    ["proc-tcp-connections", t.openConnections],
    // Types: receivingSpeed is a string, sendingSpeed and measureTime (ms) numbers (docs/stats.md).
    ["proc-tcp-receivingSpeed", String(round2(perSecond(receivedDelta)))],
    ["proc-tcp-sendingSpeed", round2(perSecond(sentDelta))],
    ["proc-tcp-inSend", 0],
    ["proc-tcp-measureTime", round2(elapsedMs)],
    ["proc-tcp-pendingReceived", 0],
    ["proc-tcp-pendingSend", 0],
    ["proc-tcp-receivedBytesSinceLastRun", receivedDelta],
    ["proc-tcp-receivedBytesTotal", t.receivedBytes],
    ["proc-tcp-sentBytesSinceLastRun", sentDelta],
    ["proc-tcp-sentBytesTotal", t.sentBytes],
    ["es-checksum", s.committedPosition],
    ["es-checksumNonFlushed", s.writerPosition]
  ]
  if (p.drive !== undefined) {
    const d = p.drive
    const key = `sys-drive-${driveKey(d.name)}`
    const used = Math.max(0, d.totalBytes - d.availableBytes)
    stats.push(
      [`${key}-availableBytes`, d.availableBytes],
      [`${key}-totalBytes`, d.totalBytes],
      [`${key}-usage`, Math.floor(ratio(used * 100, d.totalBytes))],
      [`${key}-usedBytes`, used]
    )
  }
  const queue = `es-queue-${WRITER_QUEUE}`
  stats.push(
    [`${queue}-queueName`, WRITER_QUEUE],
    [`${queue}-groupName`, ""],
    [`${queue}-avgItemsPerSecond`, Math.round(perSecond(commandsDelta))],
    [`${queue}-avgProcessingTime`, round2(ratio(flushDelayDelta, commandsDelta))],
    [`${queue}-currentIdleTime`, timeSpanGeneral(busy ? 0 : input.nowMillis - activeAt)],
    [`${queue}-currentItemProcessingTime`, timeSpanGeneral(busySince === undefined ? 0 : input.nowMillis - busySince)],
    [`${queue}-idleTimePercent`, round2(100 - percent(flushDelayDelta, elapsedMs))],
    [`${queue}-length`, w.queued],
    [`${queue}-lengthCurrentTryPeak`, w.queued],
    [`${queue}-lengthLifetimePeak`, queuePeak],
    [`${queue}-totalItemsProcessed`, w.commands],
    [`${queue}-inProgressMessage`, w.queued > 0 ? "WriteCommand" : "<none>"],
    [`${queue}-lastProcessedMessage`, w.commands > 0 ? "WriteCommand" : "<none>"],
    ["es-writer-lastFlushSize", w.lastFlushSize],
    ["es-writer-lastFlushDelayMs", round2(w.lastFlushDelayMs)],
    ["es-writer-meanFlushSize", Math.round(ratio(w.totalFlushSize, w.flushes))],
    ["es-writer-meanFlushDelayMs", round2(ratio(w.totalFlushDelayMs, w.flushes))],
    ["es-writer-maxFlushSize", w.maxFlushSize],
    ["es-writer-maxFlushDelayMs", round2(w.maxFlushDelayMs)],
    ["es-writer-queuedFlushMessages", w.queued],
    ["es-readIndex-cachedRecord", s.readCache.hits],
    ["es-readIndex-notCachedRecord", s.readCache.misses],
    // The read index does not count these yet (docs/stats.md).
    ["es-readIndex-cachedStreamInfo", 0],
    ["es-readIndex-notCachedStreamInfo", 0],
    ["es-readIndex-cachedTransInfo", 0],
    ["es-readIndex-notCachedTransInfo", 0],
    ["es-readIndex-hashCollisions", 0],
    ["es-index-tables", s.index.tables],
    ["es-index-tableEntries", s.index.tableEntries],
    ["es-index-memtables", s.index.memtables],
    ["es-index-memtableEntries", s.index.memtableEntries],
    ["es-index-residentBytes", s.index.residentBytes],
    ["es-log-chunks", s.chunks],
    ["es-log-readCacheBytes", s.readCache.residentBytes],
    // Vellum addition: degraded while writes are refused after a disk error (docs/stats.md).
    ["es-health-status", health.status],
    ["es-health-reason", health.reason],
    [
      "es-health-degradedSeconds",
      health.sinceMillis === undefined ? 0 : Math.max(0, Math.round((input.nowMillis - health.sinceMillis) / 1000))
    ],
    // Vellum addition: the node's state and the leader it follows (docs/stats.md).
    ...clusterStats(input.cluster)
  )
  const sample: StatsSample = {
    atMillis: input.nowMillis,
    cpuMicros: p.cpuMicros,
    sysBusyMicros: p.system.cpuBusyMicros,
    sysTotalMicros: p.system.cpuTotalMicros,
    gcAllocatedBytes: p.gc.allocatedBytes,
    gcPauseMicros: p.gc.pauseMicros,
    writerCommands: w.commands,
    writerFlushDelayMs: w.totalFlushDelayMs,
    receivedBytes: t.receivedBytes,
    sentBytes: t.sentBytes,
    queueLengthPeak: queuePeak,
    writerActiveAtMillis: activeAt,
    writerBusySinceMillis: busySince
  }
  return { stats, sample }
}
