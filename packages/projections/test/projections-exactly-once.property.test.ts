/**
 * Issue 21's exactly-once property, over the real pieces the node runs (the live runner factory: sandboxed
 * JavaScript, the source reader, the engine and the exactly-once output writer, on a store on a memory disk):
 * for a random event log and each of four projections (counting with results, one partition per stream with
 * partition results, one emitting and linking, a `fromStreams` merge), a continuous projection that is
 * crashed (its scope closed: no final checkpoint, writes possibly in flight) and restarted at random points
 * while the log grows ends with exactly the state, result and written streams of one uninterrupted run.
 *
 * `VELLUM_PROJECTION_RUNS` sets the histories per projection (CI: 6) and `VELLUM_PROJECTION_SEED` the seed (21).
 */
import { describe, expect, it } from "vitest"
import { Effect, Exit, Scope } from "effect"
import fc from "fast-check"
import { MemoryDisk } from "@vellum/platform"
import {
  ExpectedVersion,
  defaultStorageConfig,
  make as makeEventStore,
  type EventStoreService,
  type ProposedEvent
} from "@vellum/storage"
import {
  defaultProjectionsSettings,
  makeLiveRunnerFactory,
  type CheckpointTag,
  type ProjectionRunner,
  type QuerySpec,
  type RunnerSpec
} from "../src/index.js"

const runs = Number(process.env.VELLUM_PROJECTION_RUNS ?? "6")

interface Case {
  readonly name: string
  readonly query: string
  /** The partitions to compare at the end, from the log. */
  readonly partitions: (log: ReadonlyArray<Deposit>) => ReadonlyArray<string>
}

const cases: ReadonlyArray<Case> = [
  {
    name: "counting",
    query: `fromAll().when({
      $init: () => ({ n: 0, sum: 0 }),
      Deposited: (s, e) => { s.n++; s.sum += e.data.v }
    }).transformBy((s) => ({ average: s.n === 0 ? 0 : s.sum / s.n }))`,
    partitions: () => [""]
  },
  {
    name: "partitioned",
    query: `fromAll().foreachStream().when({
      $init: () => ({ n: 0 }),
      Deposited: (s, e) => { s.n += e.data.v }
    }).outputState()`,
    partitions: (log) => ["", ...new Set(log.map((d) => d.stream))]
  },
  {
    name: "emitting",
    query: `fromAll().when({
      $init: () => ({ n: 0 }),
      Deposited: (s, e) => {
        s.n++
        emit('seen-' + e.streamId, 'Seen', { v: e.data.v, n: s.n })
        if (e.data.v % 2 === 0) linkTo('evens', e)
      }
    })`,
    partitions: () => [""]
  },
  {
    name: "merge",
    query: `fromStreams('acc-1', 'acc-2').when({
      $init: () => ({ order: [] }),
      Deposited: (s, e) => { s.order.push(e.streamId + ':' + e.sequenceNumber) }
    }).outputState()`,
    partitions: () => [""]
  }
]

interface Deposit {
  readonly stream: string
  readonly v: number
}

const logArb = fc.array(
  fc.record({ stream: fc.constantFrom("acc-1", "acc-2", "acc-3"), v: fc.integer({ min: 0, max: 9 }) }),
  { minLength: 1, maxLength: 40 }
)

/** Where a run is interrupted: after how many processed events of a segment (each restart starts a segment). */
const crashesArb = fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 4 })

const storageConfig = {
  ...defaultStorageConfig("/db"),
  chunkSize: 64 * 1024,
  memtableMaxEntries: 64,
  preallocateChunks: false
}

const idOf = (i: number) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`

const proposed = (d: Deposit, i: number): ProposedEvent => ({
  eventId: idOf(i),
  eventType: "Deposited",
  isJson: true,
  data: new TextEncoder().encode(JSON.stringify({ v: d.v })),
  metadata: new Uint8Array()
})

const specOf = (c: Case, definition: RunnerSpec["definition"], threshold: number): RunnerSpec => ({
  name: c.name,
  version: { projectionId: 1, epoch: 0, version: 0 },
  mode: "Continuous",
  definition,
  emitEnabled: true,
  checkpointsEnabled: true,
  trackEmittedStreams: false,
  thresholds: {
    checkpointHandledThreshold: threshold,
    checkpointAfterMs: 0,
    checkpointUnhandledBytesThreshold: 10_000_000,
    pendingEventsThreshold: 5000,
    maxWriteBatchLength: 500,
    maxAllowedWritesInFlight: 0
  },
  maxStateSizeBytes: 16 * 1024 * 1024,
  stopOnEof: false,
  system: false
})

/** The runner has processed everything up to the last input event, and nothing it queued is unwritten. */
const caughtUp = (runner: ProjectionRunner, last: { position: number; numbers: Map<string, number> }): boolean => {
  const s = runner.statistics()
  if (s.faultReason !== undefined) throw new Error(`the projection faulted: ${s.faultReason}`)
  const tag: CheckpointTag | undefined = s.position
  if (tag === undefined) return false
  const reached =
    tag.kind === "position"
      ? tag.commit >= last.position
      : tag.kind === "streams"
        ? tag.streams.every(([stream, n]) => n >= (last.numbers.get(stream) ?? -1))
        : false
  return reached && s.writePendingEventsBeforeCheckpoint === 0 && s.writePendingEventsAfterCheckpoint === 0
}

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const waitUntil = (check: () => boolean, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 4_000; i++) {
      if (check()) return
      yield* sleep(1)
    }
    throw new Error(`never: ${what}`)
  })

interface Outcome {
  readonly partitions: ReadonlyArray<readonly [string, string, string | null]>
  readonly written: ReadonlyArray<string>
}

/**
 * What the projection wrote: every event of a stream that is not the input or a checkpoint, stream by stream in
 * event-number order (streams are written side by side, so their interleaving in the log may differ). Input
 * positions in metadata are written as the input event's index: a run that was interrupted holds the same input
 * events at other log positions (its own checkpoints came between them).
 */
const writtenBy = (store: EventStoreService, inputPositions: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const out: Array<string> = []
    let position = 0
    for (;;) {
      const page = yield* Effect.orDie(store.readAllForward(position, 500))
      for (const r of page.events) {
        const e = r.event!
        if (e.stream.startsWith("acc-") || e.stream.endsWith("-checkpoint") || e.stream === "$epoch-information")
          continue
        if (e.stream.startsWith("$projections-$") || e.stream === "$$$projections-$all") continue
        const text = (b: Uint8Array) => new TextDecoder().decode(b)
        const metadata = text(e.metadata).replace(
          /"\$c":(\d+),"\$p":(\d+)/g,
          (_, c: string) => `"$c":"input ${inputPositions.indexOf(Number(c))}"`
        )
        out.push(`${e.stream}#${String(e.eventNumber).padStart(6, "0")} ${e.eventType} ${text(e.data)} ${metadata}`)
      }
      if (page.isEnd) return out.sort()
      position = page.nextPosition
    }
  })

const run = (c: Case, log: ReadonlyArray<Deposit>, crashes: ReadonlyArray<number>, chunks: number, threshold: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const store = yield* makeEventStore(storageConfig).pipe(
        Effect.provide(MemoryDisk.layer(new MemoryDisk())),
        Effect.orDie
      )
      const factory = makeLiveRunnerFactory(store, defaultProjectionsSettings)
      const query: QuerySpec = {
        name: c.name,
        query: c.query,
        handlerType: "JS",
        system: false,
        executionTimeoutMillis: 250
      }
      const definition = yield* Effect.orDie(factory.prepare(query))
      const spec = specOf(c, definition, threshold)
      const last = { position: 0, numbers: new Map<string, number>() }
      const inputPositions: Array<number> = []
      const size = Math.ceil(log.length / chunks)
      let appended = 0
      const appendChunk = Effect.gen(function* () {
        const end = Math.min(log.length, appended + size)
        for (; appended < end; appended++) {
          const d = log[appended]!
          const result = yield* Effect.orDie(store.append(d.stream, ExpectedVersion.Any, [proposed(d, appended)]))
          last.position = result.position
          inputPositions.push(result.position)
          last.numbers.set(d.stream, result.lastEventNumber)
        }
      })
      const start = Effect.gen(function* () {
        const scope = yield* Scope.make()
        const runner = yield* Effect.orDie(Scope.extend(factory.start(query, spec), scope))
        return { scope, runner }
      })
      yield* appendChunk
      let current = yield* start
      for (const crashAfter of crashes) {
        const target = crashAfter
        yield* waitUntil(
          () => current.runner.statistics().eventsProcessedAfterRestart >= target || caughtUp(current.runner, last),
          "the crash point"
        )
        yield* Scope.close(current.scope, Exit.void)
        if (appended < log.length) yield* appendChunk
        current = yield* start
      }
      while (appended < log.length) yield* appendChunk
      yield* waitUntil(() => caughtUp(current.runner, last), "caught up")
      yield* current.runner.stop(true)
      const partitions: Array<readonly [string, string, string | null]> = []
      for (const p of c.partitions(log)) {
        const view = yield* current.runner.partition(p)
        partitions.push([p, view.state, view.result])
      }
      yield* Scope.close(current.scope, Exit.void)
      const outcome: Outcome = { partitions, written: yield* writtenBy(store, inputPositions) }
      return outcome
    })
  )

describe("a continuous projection crashed and restarted at random points", () => {
  for (const c of cases)
    it(`${c.name}: ends exactly as one uninterrupted run (state, result, written streams)`, async () => {
      await fc.assert(
        fc.asyncProperty(
          logArb,
          crashesArb,
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 6 }),
          async (log, crashes, chunks, threshold) => {
            const once = await Effect.runPromise(run(c, log, [], chunks, threshold))
            const interrupted = await Effect.runPromise(run(c, log, crashes, chunks, threshold))
            expect(interrupted).toEqual(once)
          }
        ),
        { numRuns: runs, seed: Number(process.env.VELLUM_PROJECTION_SEED ?? "21") }
      )
    }, 120_000)
})
