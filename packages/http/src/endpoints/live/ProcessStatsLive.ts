/**
 * The real process behind `/stats`: V8 heap spaces and a GC profiler (collection counts, GC time, freed
 * bytes), perf_hooks event-loop delay and utilisation, process CPU and memory, /proc for threads and disk
 * I/O, `os` for the machine, statfs for the database's file system. Every read falls back to a neutral value
 * rather than failing: stats are informational. docs/stats.md documents each mapping.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from "node:perf_hooks"
import * as v8 from "node:v8"
import { Effect, Layer, Schedule } from "effect"
import { ProcessStats, type ProcessSnapshot } from "../stats/ProcessStats.js"

export interface ProcessStatsLiveOptions {
  /** The database directory, for `sys.drive`; none (in-memory database) leaves the drive out. */
  readonly dbPath?: string
  /** How often GC profiler data is folded into counters (bounds the profiler's buffer). */
  readonly gcFoldIntervalMillis?: number
}

const safe = <A>(read: () => A, fallback: A): A => {
  try {
    return read()
  } catch {
    return fallback
  }
}

const readProcFile = (path: string): string | undefined => safe(() => fs.readFileSync(path, "utf8"), undefined)

/** A `Name: value` or `name: value` field of a /proc file, as a number. */
const procField = (text: string | undefined, name: string): number | undefined => {
  const match = text === undefined ? null : new RegExp(`^${name}:\\s*(\\d+)`, "m").exec(text)
  return match === null ? undefined : Number(match[1])
}

const spaceUsed = (spaces: ReadonlyArray<v8.HeapSpaceInfo>, names: ReadonlyArray<string>): number =>
  spaces.reduce((sum, s) => (names.includes(s.space_name) ? sum + s.space_used_size : sum), 0)

const YOUNG = ["new_space", "new_large_object_space"]
const OLD = ["old_space", "code_space", "map_space", "shared_space"]
const LARGE = ["large_object_space", "code_large_object_space", "shared_large_object_space"]

/** The mount point holding `path` (the reference names the drive by its mount point), else the path. */
const mountPointOf = (path: string): string => {
  const real = safe(() => fs.realpathSync(path), path)
  const mounts = readProcFile("/proc/self/mounts")
  if (mounts === undefined) return real
  let best = ""
  for (const line of mounts.split("\n")) {
    // Mount points are the second field, with spaces escaped as \040.
    const mountPoint = (line.split(" ")[1] ?? "").replace(/\\040/g, " ")
    const covers = mountPoint === "/" || real === mountPoint || real.startsWith(`${mountPoint}/`)
    if (mountPoint !== "" && covers && mountPoint.length > best.length) best = mountPoint
  }
  return best === "" ? real : best
}

/** GC profiler entries carry camelCase heap statistics although @types/node declares the snake_case shape. */
interface ProfiledHeap {
  readonly usedHeapSize?: number
}

interface GcTotals {
  minor: number
  incremental: number
  major: number
  pauseMicros: number
  freedBytes: number
}

const makeGcCounter = () => {
  const totals: GcTotals = { minor: 0, incremental: 0, major: 0, pauseMicros: 0, freedBytes: 0 }
  const baselineUsed = v8.getHeapStatistics().used_heap_size
  const profiler = new v8.GCProfiler()
  profiler.start()
  const fold = (): void => {
    const result = safe(() => profiler.stop(), undefined)
    profiler.start()
    for (const entry of result?.statistics ?? []) {
      if (entry.gcType === "Scavenge" || entry.gcType.startsWith("Minor")) totals.minor++
      else if (entry.gcType === "MarkSweepCompact") totals.major++
      else if (entry.gcType === "IncrementalMarking") totals.incremental++
      totals.pauseMicros += entry.cost
      // Reason for the cast: see ProfiledHeap (the runtime shape differs from the declared one).
      const before = (entry.beforeGC.heapStatistics as unknown as ProfiledHeap).usedHeapSize ?? 0
      const after = (entry.afterGC.heapStatistics as unknown as ProfiledHeap).usedHeapSize ?? 0
      totals.freedBytes += Math.max(0, before - after)
    }
  }
  /** Bytes allocated since the layer started: heap growth plus everything collections freed. */
  const allocated = (usedNow: number): number => Math.max(0, usedNow - baselineUsed + totals.freedBytes)
  return { totals, fold, allocated, stop: () => safe(() => void profiler.stop(), undefined) }
}

const systemCpu = (): { busy: number; total: number } => {
  let busy = 0
  let total = 0
  for (const cpu of safe(() => os.cpus(), [])) {
    const t = cpu.times
    busy += t.user + t.nice + t.sys + t.irq
    total += t.user + t.nice + t.sys + t.irq + t.idle
  }
  return { busy: busy * 1000, total: total * 1000 } // ms → µs
}

const diskIo = (): ProcessSnapshot["diskIo"] => {
  const io = readProcFile("/proc/self/io")
  if (io !== undefined) {
    return {
      readBytes: procField(io, "read_bytes") ?? 0,
      writtenBytes: procField(io, "write_bytes") ?? 0,
      readOps: procField(io, "syscr") ?? 0,
      writeOps: procField(io, "syscw") ?? 0
    }
  }
  const usage = safe(() => process.resourceUsage(), undefined)
  return { readBytes: 0, writtenBytes: 0, readOps: usage?.fsRead ?? 0, writeOps: usage?.fsWrite ?? 0 }
}

const drive = (dbPath: string | undefined, mountPoint: string | undefined): ProcessSnapshot["drive"] => {
  if (dbPath === undefined || mountPoint === undefined) return undefined
  const fsStats = safe(() => fs.statfsSync(dbPath), undefined)
  if (fsStats === undefined) return undefined
  return {
    name: mountPoint,
    availableBytes: fsStats.bavail * fsStats.bsize,
    totalBytes: fsStats.blocks * fsStats.bsize
  }
}

/** The live ProcessStats; its profiler and event-loop monitor live as long as the layer. */
export const layer = (options: ProcessStatsLiveOptions = {}): Layer.Layer<ProcessStats> =>
  Layer.scoped(
    ProcessStats,
    Effect.gen(function* () {
      const loopDelay = monitorEventLoopDelay({ resolution: 10 })
      loopDelay.enable()
      const gc = makeGcCounter()
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          loopDelay.disable()
          gc.stop()
        })
      )
      // Fold the profiler's buffer regularly so it stays small when nobody asks for stats.
      yield* Effect.forkScoped(
        Effect.repeat(Effect.sync(gc.fold), Schedule.spaced(options.gcFoldIntervalMillis ?? 10_000))
      )
      const mountPoint = options.dbPath === undefined ? undefined : mountPointOf(options.dbPath)
      const startTimeMillis = Math.round(performance.timeOrigin)
      let lastUtilization: EventLoopUtilization | undefined

      const snapshot = Effect.sync((): ProcessSnapshot => {
        gc.fold()
        const heap = v8.getHeapStatistics()
        const spaces = v8.getHeapSpaceStatistics()
        const cpu = process.cpuUsage()
        const utilization = performance.eventLoopUtilization(lastUtilization)
        lastUtilization = performance.eventLoopUtilization()
        const toMs = (ns: number) => (Number.isFinite(ns) ? ns / 1e6 : 0)
        const eventLoop = {
          delayMeanMs: toMs(loopDelay.mean),
          delayMaxMs: toMs(loopDelay.max),
          delayP99Ms: toMs(loopDelay.percentile(99)),
          utilization: utilization.utilization
        }
        loopDelay.reset()
        const sys = systemCpu()
        return {
          pid: process.pid,
          startTimeMillis,
          cpuCount: Math.max(
            1,
            safe(() => os.availableParallelism(), 1)
          ),
          cpuMicros: cpu.user + cpu.system,
          residentBytes: process.memoryUsage.rss(),
          threads: procField(readProcFile("/proc/self/status"), "Threads") ?? 1,
          heap: {
            youngBytes: spaceUsed(spaces, YOUNG),
            oldBytes: spaceUsed(spaces, OLD),
            largeObjectBytes: spaceUsed(spaces, LARGE),
            usedBytes: heap.used_heap_size,
            totalBytes: heap.total_heap_size
          },
          gc: {
            minorCount: gc.totals.minor,
            incrementalCount: gc.totals.incremental,
            majorCount: gc.totals.major,
            pauseMicros: gc.totals.pauseMicros,
            allocatedBytes: gc.allocated(heap.used_heap_size)
          },
          eventLoop,
          diskIo: diskIo(),
          system: {
            cpuBusyMicros: sys.busy,
            cpuTotalMicros: sys.total,
            freeMemBytes: os.freemem(),
            totalMemBytes: os.totalmem(),
            loadAverage: os.loadavg() as [number, number, number]
          },
          drive: drive(options.dbPath, mountPoint)
        }
      })
      return { snapshot }
    })
  )
