/**
 * npm run bench:scavenge — a node scavenge on the real disk, with its ceiling measured in the same run.
 *
 * Writes a log (2 GiB by default) where about half the records are removable — `$maxCount` on half the
 * streams (some of it replaced later), a few hard and soft deletes — then runs the scavenger through its
 * service (`makeScavenger` over a state session, as the node does) and prints, as JSON lines:
 * - the disk's sequential write rate (4 MiB writes + one fdatasync, a file as large as a chunk);
 * - accumulation records/s, calculation streams/s, execution MiB/s (chunk bytes read + rewritten / time)
 *   and its ratio to the write ceiling, merge MiB/s, the index phase's time;
 * - peak resident memory growth during the run against the configured state cache (+ 64 MiB allowed);
 * - a second scavenge with nothing to do: its time per 1,000 chunks already accumulated.
 *
 * Phase times come from the run's own checkpoints: the state handed to the scavenger is wrapped, and each
 * commit that starts a new stage marks the end of the previous one (the service itself is not changed).
 *
 * Options: --quick (a small smoke run), --log-mib N (log size; default 2048), --chunk-mib N (default 256),
 * --threads N (chunk execution threads; default 1), --cache-mib N (ScavengeBackendCacheSize; default 64),
 * --dir PATH (default ./.bench-data; the run works in its `scavenge` folder and removes it at the end),
 * --log-cache PATH (tuning runs: the filled log is copied to PATH once and later runs with the same sizes
 * start from a copy of it instead of filling again).
 */
import * as fs from "node:fs"
import * as v8 from "node:v8"
import * as path from "node:path"
import { Effect, Exit, Logger, LogLevel, Scope } from "effect"
import { Disk, NodeDisk, join } from "@vellum/platform"
import {
  EventStore,
  ExpectedVersion,
  defaultStorageConfig,
  make,
  type EventStoreService,
  type StorageConfig
} from "@vellum/storage"
import {
  STATE_FOLDER,
  makeScavenger,
  openStateSession,
  type Checkpoint,
  type ScavengerService,
  type StartScavengeOptions
} from "@vellum/scavenge"
import { freshDir as freshBenchDir, gc, now, print, sequentialWriteMiBPerSec } from "./benchSupport.js"

const MiB = 1024 * 1024
const args = process.argv.slice(2)
const quick = args.includes("--quick")
const argValue = (name: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const numberArg = (name: string, fallback: number) => Number(argValue(name) ?? fallback)
const baseDir = path.resolve(argValue("--dir") ?? ".bench-data", "scavenge")
const logBytes = numberArg("--log-mib", quick ? 96 : 2048) * MiB
const chunkSize = numberArg("--chunk-mib", quick ? 8 : 256) * MiB
const threads = numberArg("--threads", 1)
const cacheBytes = numberArg("--cache-mib", 64) * MiB
const streamCount = quick ? 2_000 : 10_000
const logCache = argValue("--log-cache")
/** Events a capped stream keeps. */
const MAX_COUNT = 10

const round = (n: number, digits = 0) => +n.toFixed(digits)
const freshDir = (name: string) => freshBenchDir(baseDir, name)

/** The ceiling: sequential write rate, as a scavenged chunk is written (4 MiB pieces, one sync at the end). */
const measureSequentialWrite = () =>
  sequentialWriteMiBPerSec(freshDir("seqwrite"), Math.max(64 * MiB, Math.min(chunkSize, 1024 * MiB)))

// --- The workload --------------------------------------------------------------------------------------

type StreamRole = "capped" | "hard" | "soft" | "plain"

/** Half the streams capped; 1% hard-deleted and 1% soft-deleted at the end; the rest kept whole. */
const roleOf = (i: number): StreamRole =>
  i % 100 === 1 ? "hard" : i % 100 === 3 ? "soft" : i % 2 === 0 ? "capped" : "plain"
const streamName = (i: number) => `account-${i}`

const payload = Buffer.from(
  JSON.stringify({
    orderId: "order-000123",
    customer: "customer-4711",
    amount: 42.5,
    currency: "EUR",
    lines: [1, 2, 3, 4],
    note: "x".repeat(160)
  })
)
let nextId = 0
const uuid = () => `00000000-0000-4000-8000-${(nextId++).toString(16).padStart(12, "0")}`
const events = (n: number) =>
  Array.from({ length: n }, () => ({
    eventId: uuid(),
    eventType: "OrderPlaced",
    isJson: true,
    data: payload,
    metadata: Buffer.alloc(0)
  }))
const json = (value: unknown) => Buffer.from(JSON.stringify(value))

interface Written {
  records: number
  events: number
  /** Original streams the state will hold (metadata or tombstone): what calculation walks. */
  streamsWithState: number
}

const forAll = <A>(items: ReadonlyArray<A>, f: (a: A) => Effect.Effect<unknown, unknown>) =>
  Effect.forEach(items, f, { concurrency: 64, discard: true })

/** Metadata first, then 100-event appends round-robin over the streams up to the log size, then the deletes. */
const fill = (store: EventStoreService) =>
  Effect.gen(function* () {
    const written: Written = { records: 0, events: 0, streamsWithState: 0 }
    const all = Array.from({ length: streamCount }, (_, i) => i)
    const capped = all.filter((i) => roleOf(i) === "capped")
    yield* forAll(capped, (i) =>
      store.setStreamMetadata(streamName(i), ExpectedVersion.Any, json({ $maxCount: MAX_COUNT * 2 }))
    )
    written.records += capped.length
    let k = 0
    yield* Effect.forEach(
      Array.from({ length: 64 }),
      () =>
        Effect.gen(function* () {
          while (store.stats().writerPosition < logBytes) {
            yield* store.append(streamName(k++ % streamCount), ExpectedVersion.Any, events(100))
            written.events += 100
          }
        }),
      { concurrency: "unbounded", discard: true }
    )
    written.records += written.events
    // A tenth of the caps are tightened: their first metadata record becomes removable too.
    const tightened = capped.filter((i) => i % 20 === 0)
    yield* forAll(tightened, (i) =>
      store.setStreamMetadata(streamName(i), ExpectedVersion.Any, json({ $maxCount: MAX_COUNT }))
    )
    const hard = all.filter((i) => roleOf(i) === "hard")
    const soft = all.filter((i) => roleOf(i) === "soft")
    yield* forAll(hard, (i) => store.deleteStream(streamName(i), ExpectedVersion.Any, true))
    yield* forAll(soft, (i) => store.deleteStream(streamName(i), ExpectedVersion.Any, false))
    written.records += tightened.length + hard.length + soft.length
    written.streamsWithState = capped.length + hard.length + soft.length
    return written
  })

/** Fills the log in `dir` (or copies the one `--log-cache` kept from an earlier run of the same sizes). */
const filledLog = (dir: string, config: StorageConfig) =>
  Effect.gen(function* () {
    const cached =
      logCache === undefined
        ? undefined
        : path.resolve(logCache, `log-${logBytes / MiB}-${chunkSize / MiB}-${streamCount}`)
    const cachedFacts = cached === undefined ? undefined : path.join(cached, "written.json")
    if (cachedFacts !== undefined && fs.existsSync(cachedFacts)) {
      fs.cpSync(path.join(cached!, "db"), dir, { recursive: true })
      const written = JSON.parse(fs.readFileSync(cachedFacts, "utf8")) as Written
      print({ bench: "fill", fromCache: cached, records: written.records })
      return written
    }
    const fillStart = now()
    const written = yield* Effect.scoped(
      Effect.gen(function* () {
        const store = yield* make(config)
        const written = yield* fill(store)
        print({
          bench: "fill",
          logMiB: round(store.stats().writerPosition / MiB),
          chunkMiB: chunkSize / MiB,
          chunks: store.engine.log.chunks().length,
          records: written.records,
          events: written.events,
          streams: streamCount,
          secs: round(now() - fillStart, 1)
        })
        return written
      })
    )
    if (cached !== undefined) {
      fs.rmSync(cached, { recursive: true, force: true })
      fs.cpSync(dir, path.join(cached, "db"), { recursive: true })
      fs.writeFileSync(cachedFacts!, JSON.stringify(written))
    }
    return written
  })

// --- Observing a run -----------------------------------------------------------------------------------

interface FileInfo {
  readonly path: string
  readonly startNumber: number
  readonly endNumber: number
  readonly bytes: number
}

const chunkFiles = (store: EventStoreService): ReadonlyArray<FileInfo> =>
  store.engine.log.chunks().map((c) => ({
    path: c.path,
    startNumber: c.header.startNumber,
    endNumber: c.header.endNumber,
    bytes: fs.statSync(c.path).size
  }))

/** Bytes of the files one phase replaced (read) and of the files it wrote. */
const replacedBytes = (before: ReadonlyArray<FileInfo>, after: ReadonlyArray<FileInfo>) => {
  const beforePaths = new Set(before.map((f) => f.path))
  const afterPaths = new Set(after.map((f) => f.path))
  const read = before.filter((f) => !afterPaths.has(f.path))
  const written = after.filter((f) => !beforePaths.has(f.path))
  const sum = (files: ReadonlyArray<FileInfo>) => files.reduce((s, f) => s + f.bytes, 0)
  return { files: read.length, outputs: written.length, read: sum(read), written: sum(written) }
}

/** When each stage began (the commit that entered it), the chunk files then, and the peak RSS. */
interface Timeline {
  readonly stages: Array<{
    readonly stage: Checkpoint["stage"]
    readonly at: number
    readonly files: ReadonlyArray<FileInfo>
  }>
  peakRss: number
  /** Peak RSS seen while each stage ran, and the process's memory split at the overall peak. */
  peakByStage: Partial<Record<Checkpoint["stage"], number>>
  atPeak: NodeJS.MemoryUsage | undefined
  /** V8's heap spaces at the overall peak (MiB committed per space): which part of the heap grew. */
  spacesAtPeak: Record<string, number> | undefined
  accumulatedChunks: number
}

/** Samples RSS into the timeline, attributing it to the stage running (the last one entered). */
const sample = (timeline: Timeline) => {
  const usage = process.memoryUsage()
  const stage = timeline.stages[timeline.stages.length - 1]?.stage
  if (stage !== undefined) timeline.peakByStage[stage] = Math.max(timeline.peakByStage[stage] ?? 0, usage.rss)
  if (usage.rss > timeline.peakRss) {
    timeline.peakRss = usage.rss
    timeline.atPeak = usage
    timeline.spacesAtPeak = heapSpaces()
  }
}

const emptyTimeline = (): Timeline => ({
  stages: [],
  peakRss: 0,
  peakByStage: {},
  atPeak: undefined,
  spacesAtPeak: undefined,
  accumulatedChunks: 0
})

const heapSpaces = (): Record<string, number> =>
  Object.fromEntries(v8.getHeapSpaceStatistics().map((space) => [space.space_name, round(space.space_size / MiB)]))

const stageSpan = (t: Timeline, stage: Checkpoint["stage"]) => {
  const i = t.stages.findIndex((s) => s.stage === stage)
  if (i < 0 || i + 1 >= t.stages.length) return undefined
  return { secs: t.stages[i + 1]!.at - t.stages[i]!.at, before: t.stages[i]!.files, after: t.stages[i + 1]!.files }
}

const defaults: StartScavengeOptions = {
  threads,
  threshold: 0,
  throttlePercent: 100,
  syncOnly: false,
  startFromChunk: 0
}

/** Starts a run and waits for it, sampling RSS meanwhile; answers its wall time. */
const runScavenge = (scavenger: ScavengerService, timeline: Timeline) =>
  Effect.gen(function* () {
    const start = now()
    yield* scavenger.start(defaults)
    while (true) {
      sample(timeline)
      const last = yield* scavenger.last
      if (last.result !== "InProgress" && (yield* scavenger.current) === undefined) {
        if (last.result !== "Success") return yield* Effect.dieMessage(`scavenge ended ${last.result}`)
        return now() - start
      }
      yield* Effect.sleep("20 millis")
    }
  })

const main = Effect.gen(function* () {
  fs.rmSync(baseDir, { recursive: true, force: true })
  const ceiling = measureSequentialWrite()
  print({ bench: "ceiling", sequentialWriteMiBPerSec: round(ceiling), note: "4 MiB writes then one fdatasync" })

  const dir = freshDir("db")
  const config: StorageConfig = { ...defaultStorageConfig(dir), chunkSize }
  const written = yield* filledLog(dir, config)
  const scope = yield* Scope.make()
  const store = yield* make(config).pipe(Scope.extend(scope))

  let timeline: Timeline = emptyTimeline()
  const session = yield* openStateSession(join(dir, STATE_FOLDER), { pageSize: 16 * 1024, cacheBytes }).pipe(
    Scope.extend(scope)
  )
  const observed = {
    ...session,
    commit: (checkpoint: Checkpoint) =>
      Effect.map(session.commit(checkpoint), () => {
        sample(timeline)
        const last = timeline.stages[timeline.stages.length - 1]
        if (last?.stage !== checkpoint.stage)
          timeline.stages.push({ stage: checkpoint.stage, at: now(), files: chunkFiles(store) })
        if (checkpoint.stage === "Accumulating" && checkpoint.doneLogicalChunk !== undefined)
          timeline.accumulatedChunks = checkpoint.doneLogicalChunk + 1
      })
  }
  const scavenger = yield* makeScavenger(
    { nodeEndpoint: "127.0.0.1:2113", historyMaxAgeDays: 30, disableMerging: false, unsafeIgnoreHardDeletes: false },
    observed
  ).pipe(Effect.provideService(EventStore, store), Scope.extend(scope))

  gc()
  const usageBefore = process.memoryUsage()
  const spacesBefore = heapSpaces()
  const rssBefore = usageBefore.rss
  timeline.peakRss = rssBefore
  const firstSecs = yield* runScavenge(scavenger, timeline)
  const span = (stage: Checkpoint["stage"]) => stageSpan(timeline, stage)
  const accumulation = span("Accumulating")
  if (accumulation !== undefined) {
    print({
      bench: "accumulation",
      records: written.records,
      chunks: timeline.accumulatedChunks,
      secs: round(accumulation.secs, 2),
      recordsPerSec: round(written.records / accumulation.secs),
      target: 1_000_000
    })
  }
  const calculation = span("Calculating")
  if (calculation !== undefined) {
    print({
      bench: "calculation",
      streams: written.streamsWithState,
      secs: round(calculation.secs, 2),
      streamsPerSec: round(written.streamsWithState / calculation.secs)
    })
  }
  const execution = span("ExecutingChunks")
  if (execution !== undefined) {
    const bytes = replacedBytes(execution.before, execution.after)
    const rate = (bytes.read + bytes.written) / MiB / execution.secs
    print({
      bench: "execution",
      chunksRewritten: bytes.files,
      readMiB: round(bytes.read / MiB),
      writtenMiB: round(bytes.written / MiB),
      secs: round(execution.secs, 2),
      miBPerSec: round(rate),
      ceilingRatio: round(rate / ceiling, 2),
      target: 0.5
    })
  }
  const merge = span("MergingChunks")
  if (merge !== undefined) {
    const bytes = replacedBytes(merge.before, merge.after)
    print({
      bench: "merge",
      filesMerged: bytes.files,
      filesWritten: bytes.outputs,
      readMiB: round(bytes.read / MiB),
      writtenMiB: round(bytes.written / MiB),
      secs: round(merge.secs, 2),
      miBPerSec: round((bytes.read + bytes.written) / MiB / Math.max(merge.secs, 1e-6))
    })
  }
  const index = span("ExecutingIndex")
  if (index !== undefined) print({ bench: "index", secs: round(index.secs, 2) })
  const growth = timeline.peakRss - rssBefore
  print({
    bench: "memory",
    peakRssGrowthMiB: round(growth / MiB),
    configuredCacheMiB: cacheBytes / MiB,
    limitMiB: cacheBytes / MiB + 64,
    withinLimit: growth <= cacheBytes + 64 * MiB,
    runSecs: round(firstSecs, 1),
    peakGrowthByStageMiB: Object.fromEntries(
      Object.entries(timeline.peakByStage).map(([stage, peak]) => [stage, round((peak - rssBefore) / MiB)])
    ),
    beforeMiB: {
      rss: round(usageBefore.rss / MiB),
      heapUsed: round(usageBefore.heapUsed / MiB),
      heapTotal: round(usageBefore.heapTotal / MiB),
      external: round(usageBefore.external / MiB),
      arrayBuffers: round(usageBefore.arrayBuffers / MiB),
      spaces: spacesBefore
    },
    atPeakMiB:
      timeline.atPeak === undefined
        ? undefined
        : {
            heapUsed: round(timeline.atPeak.heapUsed / MiB),
            heapTotal: round(timeline.atPeak.heapTotal / MiB),
            external: round(timeline.atPeak.external / MiB),
            arrayBuffers: round(timeline.atPeak.arrayBuffers / MiB),
            spaces: timeline.spacesAtPeak
          }
  })

  // A second run finds nothing to remove: a new point, the new chunk accumulated, streams recalculated.
  const chunksAccumulated = timeline.accumulatedChunks
  timeline = emptyTimeline()
  const second = yield* runScavenge(scavenger, timeline)
  const stageSecs = Object.fromEntries(
    timeline.stages.slice(0, -1).map((s) => [s.stage, round(stageSpan(timeline, s.stage)?.secs ?? 0, 3)])
  )
  print({
    bench: "noop-scavenge",
    chunksAccumulated,
    secs: round(second, 3),
    secsPer1000Chunks: round((second / chunksAccumulated) * 1000, 2),
    target: 1,
    stageSecs,
    rewritten: (() => {
      const e = stageSpan(timeline, "ExecutingChunks")
      return e === undefined ? undefined : replacedBytes(e.before, e.after)
    })()
  })

  yield* Scope.close(scope, Exit.void)
  fs.rmSync(baseDir, { recursive: true, force: true })
})

Effect.runPromise(
  main.pipe(Effect.provideService(Disk, NodeDisk.make), Logger.withMinimumLogLevel(LogLevel.Warning))
).catch((e) => {
  console.error(e)
  process.exit(1)
})
