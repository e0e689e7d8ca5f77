// How a runner runs: the state it hands the handler (only on a partition switch or after a load), the partition
// cache's bound, back-pressure, waking on commits and polling, its statistics, stopping, and a stopped
// projection's state read from its checkpoint streams.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { checkpointTagText, type ProjectionHandler } from "../src/index.js"
import { emptyEntry, PartitionCache } from "../src/engine/PartitionCache.js"
import { readStoredPartition } from "../src/engine/checkpointStreams.js"
import { gracefulStopMillis, pollIntervalMs } from "../src/engine/startProjectionRunner.js"
import {
  appendEvents,
  countingHandler,
  definitionOf,
  fakeOutput,
  openStore,
  settle,
  specOf,
  start,
  storeSource,
  streamEvents
} from "./engineSupport.js"

describe("running", () => {
  it.scoped("hands the handler a partition's state only when the partition changes, in one batch too", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 2)
      yield* appendEvents(store, "b", 1)
      yield* appendEvents(store, "a", 1)
      const handler = countingHandler()
      const spec = specOf({
        definition: definitionOf({ byStream: true }),
        thresholds: { checkpointHandledThreshold: 100 }
      })
      const { runner } = yield* start(store, spec, storeSource(store), handler)
      expect(handler.calls.map((call) => [call.partition, call.state])).toEqual([
        ["a", ""],
        ["a", undefined],
        ["b", ""],
        ["a", '{"count":2}']
      ])
      expect((yield* runner.partition("a")).state).toBe('{"count":3}')
      expect(runner.statistics().partitionsCached).toBe(3)
    })
  )

  it.scoped("partitionBy: items with no partition are skipped", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 3)
      const handler = countingHandler({ partitionByData: true })
      const spec = specOf({ definition: definitionOf({ byCustomPartitions: true }) })
      const { runner } = yield* start(store, spec, storeSource(store), handler)
      expect(handler.calls).toEqual([])
      expect(runner.statistics().eventsProcessedAfterRestart).toBe(0)
      expect(runner.statistics().position).not.toEqual(undefined)
    })
  )

  it("the partition cache evicts unchanged entries, least recently used first, never the root or a changed one", () => {
    const cache = new PartitionCache(emptyEntry(), 3)
    for (const key of ["x", "y", "z"]) cache.set(key, emptyEntry())
    cache.get("x")!.dirty = true
    cache.get("y")
    cache.evict()
    expect(cache.all().map(([key]) => key)).toEqual(["", "x", "y"])
    cache.set("w", emptyEntry())
    cache.evict()
    expect(cache.all().map(([key]) => key)).toEqual(["", "x", "w"])
    cache.get("x")!.dirty = true
    cache.get("w")!.dirty = true
    cache.set("v", { ...emptyEntry(), dirty: true })
    cache.evict()
    expect(cache.size).toBe(4)
  })

  it.scoped("pauses reading while the output holds more than pendingEventsThreshold events", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 4)
      const output = fakeOutput()
      output.pending = 11
      output.held = yield* Deferred.make<void>()
      const source = storeSource(store)
      const spec = specOf({ thresholds: { pendingEventsThreshold: 10 } })
      const { runner } = yield* start(store, spec, source, countingHandler(), output)
      expect(runner.statistics().paused).toBe(true)
      expect(source.reads).toBe(0)
      yield* Deferred.succeed(output.held, undefined)
      output.held = undefined
      yield* settle()
      expect(runner.statistics().paused).toBe(false)
      expect(runner.statistics().eventsProcessedAfterRestart).toBe(4)
    })
  )

  it.scoped(
    "a graceful stop whose writes never complete (a disk that stays full) stops after a while without its checkpoint",
    () =>
      Effect.gen(function* () {
        const store = yield* openStore()
        yield* appendEvents(store, "a", 3)
        const output = fakeOutput()
        const spec = specOf({ thresholds: { checkpointHandledThreshold: 100 } })
        const { runner } = yield* start(store, spec, storeSource(store), countingHandler(), output)
        expect(runner.statistics().eventsProcessedAfterRestart).toBe(3)
        output.held = yield* Deferred.make<void>()
        const stopping = yield* Effect.fork(runner.stop(true))
        yield* settle(gracefulStopMillis - 1)
        expect(runner.statistics().status).toBe("Stopping")
        yield* settle(1)
        yield* Fiber.join(stopping)
        expect(yield* runner.outcome).toEqual({ _tag: "Stopped" })
        expect(runner.statistics().lastCheckpoint).toBeUndefined()
      })
  )

  it.scoped("reads on when a commit touches its source, and polls when no notice comes", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 1)
      const { runner } = yield* start(store, specOf(), storeSource(store), countingHandler())
      yield* appendEvents(store, "a", 1)
      yield* settle()
      expect(runner.statistics().eventsProcessedAfterRestart).toBe(1)
      runner.onCommit(["a"])
      yield* settle()
      expect(runner.statistics().eventsProcessedAfterRestart).toBe(2)
      yield* appendEvents(store, "a", 1)
      yield* settle(pollIntervalMs)
      expect(runner.statistics().eventsProcessedAfterRestart).toBe(3)
    })
  )

  it.scoped("statistics: position, processing time, lag while behind, state bytes", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 6)
      const gates = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
      const handler = countingHandler()
      const spec = specOf({ thresholds: { pendingEventsThreshold: 2, checkpointHandledThreshold: 100 } })
      // The first two batches wait at a gate: time passes in the first; the figures are read in the second.
      let calls = 0
      const gated = {
        ...handler,
        process: (items: Parameters<typeof handler.process>[0]) => {
          const gate = gates[calls++]
          return Effect.zipRight(gate === undefined ? Effect.void : Deferred.await(gate), handler.process(items))
        }
      }
      const { runner } = yield* start(store, spec, storeSource(store), gated)
      yield* settle(5)
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* settle()
      const behind = runner.statistics()
      expect(behind.eventsProcessedAfterRestart).toBe(2)
      expect(behind.lagEvents).toBe(4)
      // The first unprocessed event was written at 0 ms, the test clock is at 5.
      expect(behind.lagMilliseconds).toBe(5)
      expect(behind.lagBytes).toBeGreaterThan(0)
      expect(behind.progress).toBeGreaterThan(0)
      expect(behind.progress).toBeLessThan(100)
      expect(behind.coreProcessingTime).toBe(5)
      expect(behind.stateBytes).toBe('{"count":2}'.length)
      expect(behind.bufferedEvents).toBe(2)
      yield* Deferred.succeed(gates[1]!, undefined)
      yield* settle()
      const caughtUp = runner.statistics()
      expect([caughtUp.lagEvents, caughtUp.lagBytes, caughtUp.lagMilliseconds, caughtUp.progress]).toEqual([
        0, 0, 0, 100
      ])
      expect(caughtUp.coreProcessingTime).toBe(5)
      expect(caughtUp.bufferedEvents).toBe(0)
      const last = yield* Effect.orDie(store.readEvent("a", 5))
      const at = last._tag === "Success" ? last.event.event!.logPosition : -1
      expect(checkpointTagText(caughtUp.position!)).toBe(`C:${at}/P:${at}`)
    })
  )

  it.scoped("stop(false) ends the run at once with no checkpoint", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 3)
      const { runner } = yield* start(store, specOf(), storeSource(store), countingHandler())
      yield* runner.stop(false)
      expect(yield* runner.outcome).toEqual({ _tag: "Stopped" })
      expect(runner.statistics().status).toBe("Stopped")
      expect(runner.statistics().lastCheckpoint).toBe(undefined)
    })
  )

  it.scoped("a stopped projection's partitions are read from its checkpoint streams, in its epoch only", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 2)
      const spec = specOf({ definition: definitionOf({ byStream: true }) })
      const { runner } = yield* start(store, spec, storeSource(store), countingHandler())
      yield* runner.stop(true)
      const stored = yield* readStoredPartition(store, spec, "a")
      expect([stored.state, stored.result]).toEqual(['{"count":2}', '{"count":2}'])
      expect(stored.position).toEqual((yield* runner.partition("a")).position)
      const root = yield* readStoredPartition(store, spec, "")
      expect([root.state, root.result, root.position]).toEqual(["", null, runner.statistics().position])
      const reset = { ...spec, version: { ...spec.version, epoch: 1 } }
      expect(yield* readStoredPartition(store, reset, "a")).toEqual({ state: "", result: null, position: undefined })
    })
  )
})

describe("bi-state", () => {
  /** Counts per partition, and all events in the shared state `{"total":n}`; records the shared state given. */
  const biStateHandler = () => {
    const inner = countingHandler()
    let total: number | undefined
    const sharedGiven: Array<string | undefined> = []
    const handler: ProjectionHandler = {
      ...inner,
      process: (items) =>
        Effect.map(inner.process(items), (outcomes) =>
          outcomes.map((outcome, index) => {
            const shared = items[index]!.shared
            sharedGiven.push(shared)
            if (shared !== undefined) total = shared === "" ? 0 : (JSON.parse(shared) as { total: number }).total
            total = total! + 1
            return { ...outcome, shared: JSON.stringify({ total }) }
          })
        )
    }
    return { handler, sharedGiven }
  }

  it.scoped("hands the shared state over with a partition's, keeps it as the root state, and resumes it", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 2)
      yield* appendEvents(store, "b", 1)
      const spec = specOf({ definition: definitionOf({ byStream: true, options: { isBiState: true } }) })
      const first = biStateHandler()
      const { runner } = yield* start(store, spec, storeSource(store), first.handler)
      expect(first.sharedGiven).toEqual(["", undefined, '{"total":2}'])
      expect((yield* runner.partition("")).state).toBe('{"total":3}')
      expect(runner.statistics().stateBytes).toBe('{"total":3}'.length)
      yield* runner.stop(true)
      const checkpoints = yield* streamEvents(store, "$projections-p-checkpoint")
      expect(checkpoints[checkpoints.length - 1]!.data).toBe('[{"total":3}]')
      yield* appendEvents(store, "a", 1)
      const second = biStateHandler()
      const again = yield* start(store, spec, storeSource(store), second.handler)
      expect(second.sharedGiven).toEqual(['{"total":3}'])
      expect((yield* again.runner.partition("")).state).toBe('{"total":4}')
    })
  )
})
