/**
 * The process and machine figures behind `/stats` (`proc`, `sys` groups), as one plain snapshot. Reading
 * them touches the real world (v8, perf_hooks, process, os, /proc), so the live layer lives in `live/`; the
 * layers here are deterministic for tests and the simulator. Counters are cumulative since process start;
 * the stats builder turns two snapshots into rates. docs/stats.md maps each field to its .NET original.
 */
import { Clock, Context, Effect, Layer } from "effect"

export interface ProcessSnapshot {
  readonly pid: number
  readonly startTimeMillis: number
  readonly cpuCount: number
  /** Process CPU time (user + system) since start, µs. */
  readonly cpuMicros: number
  /** Resident set size, bytes. */
  readonly residentBytes: number
  readonly threads: number
  readonly heap: {
    /** Young generation (V8 new space + new large-object space), used bytes. */
    readonly youngBytes: number
    /** Old generation (old, code and shared spaces), used bytes. */
    readonly oldBytes: number
    /** Large-object spaces (old-generation large objects, code and shared), used bytes. */
    readonly largeObjectBytes: number
    readonly usedBytes: number
    /** Heap committed by V8, bytes (`total_heap_size`). */
    readonly totalBytes: number
  }
  readonly gc: {
    /** Scavenges (young-generation collections). */
    readonly minorCount: number
    /** Incremental-marking steps of the old generation. */
    readonly incrementalCount: number
    /** Full mark-sweep-compact collections. */
    readonly majorCount: number
    /** Time spent in GC, µs. */
    readonly pauseMicros: number
    /** Bytes allocated since start (estimated: heap growth plus what collections freed). */
    readonly allocatedBytes: number
  }
  readonly eventLoop: {
    /** Event-loop delay since the previous snapshot, ms. */
    readonly delayMeanMs: number
    readonly delayMaxMs: number
    readonly delayP99Ms: number
    /** Event-loop utilisation since the previous snapshot, 0–1. */
    readonly utilization: number
  }
  readonly diskIo: {
    readonly readBytes: number
    readonly writtenBytes: number
    readonly readOps: number
    readonly writeOps: number
  }
  readonly system: {
    /** Machine CPU time, all cores, since boot: busy and total, µs. */
    readonly cpuBusyMicros: number
    readonly cpuTotalMicros: number
    readonly freeMemBytes: number
    readonly totalMemBytes: number
    readonly loadAverage: readonly [number, number, number]
  }
  /** The file system holding the database, when known. */
  readonly drive: { readonly name: string; readonly availableBytes: number; readonly totalBytes: number } | undefined
}

export interface ProcessStatsService {
  readonly snapshot: Effect.Effect<ProcessSnapshot>
}

/** A quiet process: everything zero except identity, one CPU and a fixed memory size. */
export const idleSnapshot = (startTimeMillis: number): ProcessSnapshot => ({
  pid: 1,
  startTimeMillis,
  cpuCount: 1,
  cpuMicros: 0,
  residentBytes: 0,
  threads: 1,
  heap: { youngBytes: 0, oldBytes: 0, largeObjectBytes: 0, usedBytes: 0, totalBytes: 0 },
  gc: { minorCount: 0, incrementalCount: 0, majorCount: 0, pauseMicros: 0, allocatedBytes: 0 },
  eventLoop: { delayMeanMs: 0, delayMaxMs: 0, delayP99Ms: 0, utilization: 0 },
  diskIo: { readBytes: 0, writtenBytes: 0, readOps: 0, writeOps: 0 },
  system: { cpuBusyMicros: 0, cpuTotalMicros: 0, freeMemBytes: 0, totalMemBytes: 0, loadAverage: [0, 0, 0] },
  drive: undefined
})

export class ProcessStats extends Context.Tag("@vellum/http/ProcessStats")<ProcessStats, ProcessStatsService>() {
  /** Always the given snapshot (tests). */
  static readonly layerStatic = (snapshot: ProcessSnapshot): Layer.Layer<ProcessStats> =>
    Layer.succeed(ProcessStats, { snapshot: Effect.succeed(snapshot) })

  /** The simulator's process: idle, started when the layer was built (by the node's Clock). */
  static readonly layerSim: Layer.Layer<ProcessStats> = Layer.effect(
    ProcessStats,
    Effect.map(Clock.currentTimeMillis, (start) => ({ snapshot: Effect.succeed(idleSnapshot(start)) }))
  )
}
