/**
 * The real scavenger against the reference model on random workloads over a real
 * store: tiny chunks and memtables, sometimes every stream sharing one hash, appends, metadata of every kind
 * (limits, junk, metadata of metastreams), soft and hard deletes, recreation, links, time moving on, and
 * several scavenges interleaved with more writes (the model's state carried from run to run).
 *
 * After every run: the log before the point is exactly what the model keeps; the index finds what the
 * model keeps and nothing it drops; the model's invariants; stream reads unchanged; `$all` loses exactly the
 * removed positions. Runs: VELLUM_SCAVENGE_RUNS (default small, so the file stays well under a minute).
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Clock, Effect, Logger, LogLevel } from "effect"
import { MemoryDisk } from "@vellum/platform"
import {
  DeletedStreamNumber,
  ExpectedVersion,
  RecordKind,
  type EventRecord,
  type HashFn,
  type LogRecord,
  type ProposedEvent,
  type StorageConfig
} from "@vellum/storage"
import { executeWithThreshold, indexKey, scavengeModel, type ModelInput, type ModelState } from "./model/index.js"
import {
  allPositions,
  closeNode,
  deleteState,
  logRecords,
  openNode,
  scavenge,
  settings,
  storageConfig,
  streamView,
  uuid,
  WrittenLog,
  type Node
} from "./scavenger-support.js"

const RUNS = Number(process.env["VELLUM_SCAVENGE_RUNS"] ?? 10)
const STREAMS = ["s0", "s1", "s2", "s3"] as const
const LINKS = "links"
/** Every stream has the same 64-bit hash (as packages/storage/test/streams-harness.ts `collide`). */
const collide: HashFn = () => ({ hi: 0, lo: 1 })

/** Metadata a workload writes: limits, clearing, and data the scavenger must read as "no limits". */
const METADATA: ReadonlyArray<{ readonly text: string; readonly isJson: boolean }> = [
  ...[1, 2, 3].map((n) => ({ text: `{"$maxCount":${n}}`, isJson: true })),
  ...[1, 10, 30, 60, 600].map((s) => ({ text: `{"$maxAge":${s}}`, isJson: true })),
  ...[0, 2, 5, 9].map((n) => ({ text: `{"$tb":${n}}`, isJson: true })),
  { text: `{"$maxCount":2,"$maxAge":30}`, isJson: true },
  { text: `{"$maxAge":600,"$tb":3}`, isJson: true },
  { text: `{}`, isJson: true },
  { text: `{"$maxCount":"2"}`, isJson: true },
  { text: `{"$maxAge":0,"x":[1,2]}`, isJson: true },
  { text: `not json at all`, isJson: false }
]

export type Op =
  | { readonly k: "append"; readonly s: number; readonly n: number; readonly size: number }
  | { readonly k: "meta"; readonly s: number; readonly m: number }
  | { readonly k: "metaOfMeta"; readonly s: number; readonly m: number }
  | { readonly k: "soft"; readonly s: number }
  | { readonly k: "hard"; readonly s: number }
  | { readonly k: "link"; readonly s: number; readonly n: number }
  | { readonly k: "advance"; readonly seconds: number }
  | { readonly k: "scavenge"; readonly threshold: number }

const stream = fc.nat(STREAMS.length - 1)
const opArb = (thresholds: ReadonlyArray<number>): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        k: fc.constant("append" as const),
        s: stream,
        n: fc.integer({ min: 1, max: 4 }),
        size: fc.integer({ min: 0, max: 200 })
      })
    },
    { weight: 4, arbitrary: fc.record({ k: fc.constant("meta" as const), s: stream, m: fc.nat(METADATA.length - 1) }) },
    {
      weight: 1,
      arbitrary: fc.record({ k: fc.constant("metaOfMeta" as const), s: stream, m: fc.nat(METADATA.length - 1) })
    },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("soft" as const), s: stream }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("hard" as const), s: stream }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("link" as const), s: stream, n: fc.nat(8) }) },
    {
      weight: 4,
      arbitrary: fc.record({ k: fc.constant("advance" as const), seconds: fc.constantFrom(1, 5, 20, 60, 400, 700) })
    },
    {
      weight: 2,
      arbitrary: fc.record({ k: fc.constant("scavenge" as const), threshold: fc.constantFrom(...thresholds) })
    }
  )

export interface Workload {
  readonly chunkSize: number
  readonly collide: boolean
  /** The state's cache: 0 keeps no row in memory, so every lookup (chunk execution's too) reads its page. */
  readonly stateCacheBytes?: number
  readonly ops: ReadonlyArray<Op>
}

const workloadArb = (thresholds: ReadonlyArray<number>, collide: fc.Arbitrary<boolean>): fc.Arbitrary<Workload> =>
  fc.record({
    chunkSize: fc.constantFrom(1024, 2048, 4096),
    collide,
    stateCacheBytes: fc.constantFrom(0, 1 << 20),
    ops: fc.array(opArb(thresholds), { minLength: 12, maxLength: 40, size: "max" })
  })

let nextId = 1
const event = (size: number, type = "T", data?: string): ProposedEvent => {
  const id = nextId++
  return {
    eventId: uuid(id),
    eventType: type,
    isJson: data === undefined,
    data: Buffer.from(data ?? JSON.stringify({ id, pad: "x".repeat(size) })),
    metadata: Buffer.alloc(0)
  }
}

/**
 * The time every fiber of a workload sees (the store stamps events with it, a scavenge point takes its
 * EffectiveNow from it), moved on only by the workload. Like TestClock, but its sleeps never end: a
 * TestClock adjust steps the store's one-second sweeper through every simulated second, which made
 * advancing time most of a run's cost. Nothing a run waits for sleeps (the throttle is at 100%).
 */
class ManualClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  /** A day in, so `$maxAge` cutoffs are positive. */
  private millis = 86_400_000
  unsafeCurrentTimeMillis(): number {
    return this.millis
  }
  readonly currentTimeMillis = Effect.sync(() => this.millis)
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.millis) * 1_000_000n
  }
  readonly currentTimeNanos = Effect.sync(() => this.unsafeCurrentTimeNanos())
  sleep(): Effect.Effect<void> {
    return Effect.never
  }
  readonly advance = (seconds: number) =>
    Effect.sync(() => {
      this.millis += seconds * 1000
    })
}

/** Applies one write; refusals (a hard-deleted stream, invalid metadata) are part of the workload. */
const apply = (node: Node, clock: ManualClock, op: Exclude<Op, { k: "scavenge" }>) => {
  const { store } = node
  const name = STREAMS[op.k === "advance" ? 0 : op.s]!
  switch (op.k) {
    case "append":
      return store.append(
        name,
        ExpectedVersion.Any,
        Array.from({ length: op.n }, () => event(op.size))
      )
    case "meta":
    case "metaOfMeta": {
      const m = METADATA[op.m]!
      return store.setStreamMetadata(op.k === "meta" ? name : `$$${name}`, ExpectedVersion.Any, Buffer.from(m.text), {
        isJson: m.isJson
      })
    }
    case "soft":
    case "hard":
      return store.deleteStream(name, ExpectedVersion.Any, op.k === "hard")
    case "link":
      return store.append(LINKS, ExpectedVersion.Any, [event(0, "$>", `${op.n}@${name}`)])
    case "advance":
      return clock.advance(op.seconds)
  }
}

const isEvent = (r: LogRecord): r is EventRecord => r.kind === RecordKind.Event
const sorted = (xs: Iterable<number>) => [...xs].sort((a, b) => a - b)

/** A scavenge history stream: a run appends to these itself, so reads of them change across it. */
const isHistory = (name: string) => /^(\$\$)*\$scavenge/.test(name)

/** Every stream name the log has events of (but the history), plus the metastreams of the workload's streams. */
const streamNames = (records: ReadonlyArray<LogRecord>) =>
  [...new Set([...STREAMS, LINKS, ...STREAMS.map((s) => `$$${s}`), ...records.filter(isEvent).map((r) => r.stream)])]
    .filter((s) => !isHistory(s))
    .sort()

/** What reads and `$all` show, to compare before and after a run. */
const observe = (node: Node, names: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const reads = new Map<string, unknown>()
    for (const s of names) reads.set(s, yield* streamView(node.store, s))
    return { reads, all: yield* allPositions(node.store) }
  })

interface RunCheck {
  readonly node: Node
  readonly config: StorageConfig
  readonly written: ReadonlyArray<LogRecord>
  readonly before: {
    readonly reads: ReadonlyMap<string, unknown>
    readonly all: ReadonlyArray<number>
    readonly positions: ReadonlySet<number>
  }
  readonly prior: ModelState | undefined
  readonly unsafeIgnoreHardDeletes: boolean
}

/** The checks after one run; answers the model state to carry to the next run. */
const checkRun = ({ node, config, written, before, prior, unsafeIgnoreHardDeletes }: RunCheck) =>
  Effect.gen(function* () {
    const { store } = node
    const sps = written.filter((r) => r.kind === RecordKind.ScavengePoint)
    const spRecord = sps[sps.length - 1]
    if (spRecord === undefined || spRecord.kind !== RecordKind.ScavengePoint)
      throw new Error("no scavenge point written")
    const sp = {
      position: spRecord.logPosition,
      effectiveNowMicros: spRecord.effectiveNowMicros,
      threshold: spRecord.threshold
    }
    const input: ModelInput = {
      records: written,
      chunkSize: config.chunkSize,
      scavengePoint: sp,
      ...(prior === undefined ? {} : { prior }),
      unsafeIgnoreHardDeletes
    }
    const model = scavengeModel(input)
    const run = executeWithThreshold(input, model)
    if (sp.threshold < 0) expect(sorted(run.keptInLog)).toEqual(sorted(model.keptInLog))

    const now = new Map((yield* logRecords(store)).map((r) => [r.logPosition, r]))
    // 1. The log before the point is what the model keeps (every record kind).
    const realBefore = sorted([...now.keys()].filter((p) => p < sp.position))
    expect(realBefore, "records left before the scavenge point").toEqual(
      sorted([...run.keptInLog].filter((p) => p < sp.position))
    )

    // 3. Nothing at or after the point changed; non-event records all survive.
    for (const r of written) {
      if (r.logPosition >= sp.position || !isEvent(r))
        expect(now.get(r.logPosition), `record at ${r.logPosition}`).toEqual(r)
    }
    // 3. Each stream keeps its last event before the point (a tombstoned stream's is its tombstone; its
    //    metastream goes entirely); with every chunk executed (threshold -1), removals are a prefix, except
    //    holes below the maybe-discard point (a chunk skipped for its weight leaves holes of its own).
    const byStream = new Map<string, Array<EventRecord>>()
    for (const r of written)
      if (isEvent(r) && r.logPosition < sp.position) byStream.set(r.stream, [...(byStream.get(r.stream) ?? []), r])
    const tombstoned = new Set(
      written
        .filter((r) => isEvent(r) && r.eventNumber === DeletedStreamNumber && r.logPosition < sp.position)
        .map((r) => (r as EventRecord).stream)
    )
    for (const [name, events] of byStream) {
      const last = events.reduce((a, b) => (b.eventNumber > a.eventNumber ? b : a))
      const metaOfTombstoned = name.startsWith("$$") && tombstoned.has(name.slice(2))
      // With UnsafeIgnoreHardDelete a hard-deleted stream goes entirely, its tombstone included.
      if (!metaOfTombstoned && !(unsafeIgnoreHardDeletes && tombstoned.has(name)))
        expect(now.has(last.logPosition), `last event ${name}@${last.eventNumber} survives`).toBe(true)
      const kept = events.filter((e) => now.has(e.logPosition)).map((e) => e.eventNumber)
      const firstKept = Math.min(...kept)
      const maybe = run.state.originals.get(name)?.maybeDiscardPoint ?? 0
      for (const e of events) {
        if (sp.threshold < 0 && !now.has(e.logPosition) && e.eventNumber > firstKept)
          expect(e.eventNumber, `hole ${name}@${e.eventNumber} inside the maybe range`).toBeLessThan(maybe)
      }
    }

    // 2. The index: kept entries are found when their record is still there; dropped ones never are.
    for (const r of written) {
      if (!isEvent(r)) continue
      const found = yield* store.engine.readIndex.eventAt(r.stream, r.eventNumber)
      const inIndex = model.keptInIndex.has(indexKey(r.stream, r.eventNumber))
      if (inIndex && now.has(r.logPosition))
        expect(found?.logPosition, `index finds ${r.stream}@${r.eventNumber}`).toBe(r.logPosition)
      if (!inIndex) expect(found, `index drops ${r.stream}@${r.eventNumber}`).toBeUndefined()
      if (!config.streamHash) {
        // With a real hash the raw entries are the stream's own: maybe-expired entries stay, dropped
        // ones are gone from the tables (the memtable is not scavenged).
        const raw = yield* store.engine.index.range(r.stream, r.eventNumber, r.eventNumber)
        const entry = raw.find((e) => e.position === r.logPosition)
        if (inIndex) expect(entry, `raw index keeps ${r.stream}@${r.eventNumber}`).toBeDefined()
        else if (entry !== undefined) expect(entry.exact, `raw index drops ${r.stream}@${r.eventNumber}`).toBe(true)
      }
    }

    // 3. Stream reads are what they were; 4. `$all` lost exactly the removed positions.
    // (Without its tombstone, an unsafely scavenged hard-deleted stream no longer reads as deleted.)
    const compared = [...before.reads.keys()].filter(
      (s) => !(unsafeIgnoreHardDeletes && tombstoned.has(s.replace(/^\$\$/, "")))
    )
    const after = yield* observe(node, compared)
    expect(after.reads, "stream reads").toEqual(new Map(compared.map((s) => [s, before.reads.get(s)])))
    const removed = new Set([...before.positions].filter((p) => !run.keptInLog.has(p)))
    const allBefore = new Set(before.all)
    expect(
      after.all.filter((p) => allBefore.has(p)),
      "$all"
    ).toEqual(before.all.filter((p) => !removed.has(p)))
    return { state: run.state, sp }
  })

/**
 * Runs a workload (a final scavenge is added), checking every run against the model. With `rerun`, the
 * last point is then scavenged to again from scratch (state deleted): the log before it must not change.
 */
interface RunOptions {
  readonly disableMerging: boolean
  readonly rerun: boolean
  readonly unsafeIgnoreHardDeletes?: boolean
}

interface PropertyOptions extends RunOptions {
  /** Whether workloads run with every stream sharing one hash; default either. */
  readonly collide?: fc.Arbitrary<boolean>
}

export const runWorkload = (workload: Workload, options: RunOptions) => {
  const clock = new ManualClock()
  return Effect.withClock(
    Effect.gen(function* () {
      const config = storageConfig({
        chunkSize: workload.chunkSize,
        ...(workload.collide ? { streamHash: collide } : {})
      })
      const unsafeIgnoreHardDeletes = options.unsafeIgnoreHardDeletes === true
      const nodeSettings = { ...settings, disableMerging: options.disableMerging, unsafeIgnoreHardDeletes }
      const nodeOptions = { settings: nodeSettings, stateCacheBytes: workload.stateCacheBytes ?? 1 << 20 }
      let node = yield* openNode(new MemoryDisk(), config, nodeOptions)
      const written = new WrittenLog()
      let prior: ModelState | undefined
      let lastThreshold = 0
      const ops: ReadonlyArray<Op> = [
        ...workload.ops,
        { k: "scavenge", threshold: workload.ops.filter((o) => o.k === "scavenge").at(-1)?.threshold ?? -1 }
      ]
      for (const op of ops) {
        if (op.k !== "scavenge") {
          yield* Effect.either(apply(node, clock, op))
          continue
        }
        // Everything written so far goes to index tables (the memtable is not scavenged).
        yield* node.store.flushIndex
        yield* written.sync(node.store)
        const reads = yield* observe(node, streamNames(written.records))
        const positions = new Set((yield* logRecords(node.store)).map((r) => r.logPosition))
        expect((yield* scavenge(node, { threshold: op.threshold })).result).toBe("Success")
        yield* written.sync(node.store)
        const checked = yield* checkRun({
          node,
          config,
          written: written.records,
          before: { ...reads, positions },
          prior,
          unsafeIgnoreHardDeletes
        })
        prior = checked.state
        lastThreshold = op.threshold
      }
      if (options.rerun && lastThreshold < 0) {
        const before = (yield* logRecords(node.store)).filter(
          (r) => r.logPosition < written.records.filter((r) => r.kind === RecordKind.ScavengePoint).at(-1)!.logPosition
        )
        yield* closeNode(node)
        yield* deleteState(node.mem, config)
        node = yield* openNode(node.mem, config, nodeOptions)
        expect((yield* scavenge(node, { syncOnly: true })).result).toBe("Success")
        const end = before.length === 0 ? 0 : before[before.length - 1]!.logPosition + 1
        expect(
          (yield* logRecords(node.store)).filter((r) => r.logPosition < end),
          "a second run to the same point"
        ).toEqual(before)
      }
      yield* closeNode(node)
    }),
    clock
  )
}

/** Runs a workload without the scavenger's progress logs. */
const runQuietly = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(effect.pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))

const runProperty = (thresholds: ReadonlyArray<number>, options: PropertyOptions) =>
  fc.assert(
    fc.asyncProperty(workloadArb(thresholds, options.collide ?? fc.boolean()), (workload) =>
      runQuietly(runWorkload(workload, options))
    ),
    {
      numRuns: RUNS,
      // A failure is still reported (with the smallest case found so far) when shrinking takes too long.
      interruptAfterTimeLimit: 100_000,
      markInterruptAsFailure: true,
      endOnFailure: process.env["VELLUM_SCAVENGE_NO_SHRINK"] === "1",
      ...(process.env["VELLUM_SCAVENGE_SEED"] === undefined
        ? {}
        : { seed: Number(process.env["VELLUM_SCAVENGE_SEED"]) })
    }
  )

describe("the scavenger agrees with the reference model on random workloads", () => {
  it(
    "threshold -1 with merging: the log is exactly the model's keptInLog, and a rerun changes nothing",
    () => runProperty([-1], { disableMerging: false, rerun: true }),
    120_000
  )

  // Real hash only: with a shared hash, an entry whose record a `$maxAge` execution removed cannot be told
  // apart from another stream's, so it no longer adds its +1 (upstream's calculator skips it too for a
  // colliding stream); that weight can decide a chunk at a positive threshold, which the
  // collision-free model does not know.
  it(
    "thresholds 0 and above without merging: the log is exactly keptWithThreshold across runs",
    () => runProperty([0, 0, 1, 2, 3, 5], { disableMerging: true, rerun: false, collide: fc.constant(false) }),
    120_000
  )

  it(
    "UnsafeIgnoreHardDelete at threshold -1: hard-deleted streams go entirely, the rest as the model says",
    () => runProperty([-1], { disableMerging: false, rerun: false, unsafeIgnoreHardDeletes: true }),
    120_000
  )
})

describe("regressions the properties found", () => {
  // A `$maxAge` record removed by its chunk's execution keeps its index entry, and the next run's
  // calculation must still see that entry (judging it "maybe" again, +1 weight). The calculation
  // walked only entries whose record was still there, so it took the stream to start after the removed
  // record and dropped the entry from the index. Found by the threshold -1 property (raw index check).
  it("a maybe-expired entry whose record is gone stays in the index across later runs", () =>
    runQuietly(
      runWorkload(
        {
          chunkSize: 4096,
          collide: false,
          ops: [
            { k: "meta", s: 0, m: METADATA.findIndex((m) => m.text === `{"$maxAge":30}`) },
            { k: "append", s: 0, n: 1, size: 10 },
            { k: "advance", seconds: 60 },
            { k: "append", s: 0, n: 1, size: 10 },
            { k: "scavenge", threshold: -1 },
            { k: "append", s: 0, n: 1, size: 10 },
            { k: "scavenge", threshold: -1 }
          ]
        },
        { disableMerging: false, rerun: true }
      )
    ))
})
