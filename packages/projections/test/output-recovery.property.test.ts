// Exactly once, as a property: random items emitting into a few streams (`$`-streams among them, links,
// result links), a crash at a random point (the writer's scope closed, appends possibly in flight), then a
// restart that queues the items again from an earlier checkpoint — the streams end exactly as one
// uninterrupted run leaves them. Optionally an older epoch wrote first: the new epoch truncates its output.
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Effect, type Scope } from "effect"
import { ExpectedVersion, type EventStoreService } from "@vellum/storage"
import type { ProjectionVersion } from "../src/persisted/checkpointTag.js"
import { emittedStreamsStream } from "../src/persisted/streamNames.js"
import type { OutputWriterSpec } from "../src/engine/OutputWriter.js"
import type { EmittedWrite } from "../src/engine/ProjectionHandler.js"
import {
  causeOf,
  closeWriter,
  emit,
  eventsOf,
  metadataOf,
  openStore,
  resultLink,
  specOf,
  startWriter
} from "./outputSupport.js"

const streams = ["a", "b", "$c", "$d"] as const
const root = "$root"
const catalogue = emittedStreamsStream("p")

const writeArb = fc.record({
  stream: fc.constantFrom(...streams),
  link: fc.boolean(),
  type: fc.constantFrom("x", "y")
})
const itemArb = fc.record({
  writes: fc.array(writeArb, { maxLength: 3 }),
  /** Index (modulo) of the written stream a result link in `$root` points at, if any. */
  resultLink: fc.option(fc.nat(), { nil: undefined })
})
type Item = typeof itemArb extends fc.Arbitrary<infer T> ? T : never

/** Item `i`'s writes: events (or links) in order, then its result link. */
const writesOf = (item: Item, i: number): Array<EmittedWrite> => {
  const writes: Array<EmittedWrite> = item.writes.map((write, j) =>
    write.link
      ? { stream: write.stream, eventType: "$>", isJson: false, data: `${i}@source`, extraMetadata: [] }
      : emit(write.stream, `{"i":${i},"j":${j}}`, write.type)
  )
  const written = [...new Set(item.writes.map((write) => write.stream))]
  if (item.resultLink !== undefined && written.length > 0)
    writes.push(resultLink(root, written[item.resultLink % written.length]!))
  return writes
}

const scenarioArb = fc
  .record({
    items: fc.array(itemArb, { minLength: 1, maxLength: 20 }),
    olderEpoch: fc.option(fc.array(itemArb, { minLength: 1, maxLength: 8 }), { nil: undefined }),
    trackEmittedStreams: fc.boolean(),
    maxWriteBatchLength: fc.integer({ min: 1, max: 4 }),
    maxAllowedWritesInFlight: fc.integer({ min: 0, max: 3 }),
    idleStreamsKept: fc.constantFrom(0, 2, 1000),
    checkpoint: fc.nat(),
    crash: fc.nat(),
    stepsBeforeCrash: fc.nat({ max: 60 })
  })
  .map((s) => {
    // At least one item queued after the checkpoint before the crash.
    const checkpoint = s.checkpoint % s.items.length
    const crash = checkpoint + 1 + (s.crash % (s.items.length - checkpoint))
    return { ...s, checkpoint, crash }
  })
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never

const older: ProjectionVersion = { projectionId: 7, epoch: 0, version: 0 }
const current: ProjectionVersion = { projectionId: 7, epoch: 2, version: 2 }

const specFor = (s: Scenario, version: ProjectionVersion): OutputWriterSpec =>
  specOf({
    version,
    trackEmittedStreams: s.trackEmittedStreams,
    maxWriteBatchLength: s.maxWriteBatchLength,
    maxAllowedWritesInFlight: s.maxAllowedWritesInFlight
  })

/** Queues items `from` to `to` (exclusive) of `items`, with their own positions. */
const enqueueItems = (
  output: { readonly enqueue: (cause: ReturnType<typeof causeOf>, writes: ReadonlyArray<EmittedWrite>) => void },
  items: ReadonlyArray<Item>,
  from: number,
  to: number
) => {
  for (let i = from; i < to; i++) output.enqueue(causeOf(i + 1), writesOf(items[i]!, i))
}

/** One whole run of `items` by `version`. */
const runAll = (store: EventStoreService, s: Scenario, items: ReadonlyArray<Item>, version: ProjectionVersion) =>
  Effect.gen(function* () {
    const { output, scope } = yield* startWriter(store, specFor(s, version), store, s.idleStreamsKept)
    enqueueItems(output, items, 0, items.length)
    yield* output.flush
    yield* closeWriter(scope)
  })

/** What every stream the scenario can touch holds, and its metadata. */
const snapshot = (store: EventStoreService) =>
  Effect.gen(function* () {
    const all: Record<string, unknown> = {}
    for (const stream of [...streams, root, catalogue])
      all[stream] = { events: yield* eventsOf(store, stream), metadata: yield* metadataOf(store, stream) }
    return all
  })

const uninterrupted = (s: Scenario): Effect.Effect<Record<string, unknown>, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* openStore
    if (s.olderEpoch !== undefined) yield* runAll(store, s, s.olderEpoch, older)
    yield* runAll(store, s, s.items, current)
    // A reset's output starts over where the new epoch writes: what an older epoch wrote there is out of sight.
    const written = new Set(s.items.flatMap((item, i) => writesOf(item, i).map((write) => write.stream)))
    for (const stream of written)
      for (const event of yield* eventsOf(store, stream)) expect(event.metadata).toContain(`"$v":"7:2:2:4"`)
    return yield* snapshot(store)
  })

const crashedAndRestarted = (s: Scenario): Effect.Effect<Record<string, unknown>, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* openStore
    if (s.olderEpoch !== undefined) yield* runAll(store, s, s.olderEpoch, older)
    const first = yield* startWriter(store, specFor(s, current), store, s.idleStreamsKept)
    enqueueItems(first.output, s.items, 0, s.checkpoint)
    yield* first.output.flush
    enqueueItems(first.output, s.items, s.checkpoint, s.crash)
    for (let i = 0; i < s.stepsBeforeCrash; i++) yield* Effect.yieldNow()
    yield* closeWriter(first.scope)
    // Appends the crash left in flight may still land, as they may in a real crash before the restart
    // reads the streams: an append queued after them completes after them.
    yield* Effect.orDie(store.append("quiet", ExpectedVersion.Any, []))
    const second = yield* startWriter(store, specFor(s, current), store, s.idleStreamsKept)
    enqueueItems(second.output, s.items, s.checkpoint, s.items.length)
    yield* second.output.flush
    expect(second.output.pendingEvents()).toBe(0)
    return yield* snapshot(store)
  })

describe("output writer: exactly once across a crash (property)", () => {
  it("a crashed run restarted from a checkpoint leaves the streams as one uninterrupted run does", async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const expected = await Effect.runPromise(Effect.scoped(uninterrupted(s)))
        const actual = await Effect.runPromise(Effect.scoped(crashedAndRestarted(s)))
        expect(actual).toEqual(expected)
      }),
      { numRuns: 60, seed: 2121, endOnFailure: true }
    )
  })
})
