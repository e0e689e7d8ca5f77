// The output writer's appends: side by side across streams and one at a time per stream, bounded in flight
// and in length without splitting an item; result links; the tracked-streams catalogue; refusals retried or
// ending the run.
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { DiskError } from "@vellum/platform"
import { NotLeader, StorageFailed, WriteTimeout, type EventStoreService } from "@vellum/storage"
import { emittedStreamsStream } from "../src/persisted/streamNames.js"
import {
  causeOf,
  closeWriter,
  dataOf,
  emit,
  eventsOf,
  metadataOf,
  openStore,
  resultLink,
  specOf,
  stampOf,
  startWriter
} from "./outputSupport.js"

interface Append {
  readonly stream: string
  readonly events: number
}

/** The store with its appends held until `release`, recording each append and how many were in flight. */
const heldAppends = (store: EventStoreService) =>
  Effect.gen(function* () {
    const latch = yield* Effect.makeLatch(false)
    const appends: Array<Append> = []
    const inFlight = new Map<string, number>()
    const seen = { most: 0, mostPerStream: 0 }
    const total = () => [...inFlight.values()].reduce((a, b) => a + b, 0)
    const writer: EventStoreService = {
      ...store,
      append: (stream, expectedVersion, events) =>
        Effect.gen(function* () {
          appends.push({ stream, events: events.length })
          inFlight.set(stream, (inFlight.get(stream) ?? 0) + 1)
          seen.most = Math.max(seen.most, total())
          seen.mostPerStream = Math.max(seen.mostPerStream, inFlight.get(stream)!)
          yield* latch.await
          return yield* store.append(stream, expectedVersion, events)
        }).pipe(Effect.ensuring(Effect.sync(() => inFlight.set(stream, inFlight.get(stream)! - 1))))
    }
    return { writer, appends, seen, release: latch.open }
  })

/** The store, its appends failing with what `failure` gives for attempt `n` (undefined: append). */
const failingAppends = (
  store: EventStoreService,
  failure: (attempt: number, stream: string) => "landed-then-timeout" | Error | undefined
) => {
  let attempt = 0
  const writer: EventStoreService = {
    ...store,
    append: (stream, expectedVersion, events) =>
      Effect.suspend(() => {
        const outcome = failure(++attempt, stream)
        if (outcome === undefined) return store.append(stream, expectedVersion, events)
        if (outcome === "landed-then-timeout")
          return Effect.zipRight(
            store.append(stream, expectedVersion, events),
            Effect.fail(new WriteTimeout({ timeoutMillis: 10 }))
          )
        return Effect.fail(outcome as StorageFailed)
      })
  }
  return { writer, attempts: () => attempt }
}

const settle = Effect.gen(function* () {
  for (let i = 0; i < 50; i++) yield* Effect.yieldNow()
})

/** Lets retries' backoff pass on the test clock. */
const passTime = Effect.gen(function* () {
  for (let i = 0; i < 40; i++) {
    yield* settle
    yield* TestClock.adjust(Duration.seconds(5))
  }
})

describe("output writer: appends", () => {
  it.scoped("appends to different streams are in flight together, one at a time per stream", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const held = yield* heldAppends(store)
      const { output } = yield* startWriter(store, specOf(), held.writer)
      output.enqueue(causeOf(1), [emit("a", "a1"), emit("b", "b1"), emit("c", "c1")])
      output.enqueue(causeOf(2), [emit("a", "a2")])
      yield* settle
      expect(output.writesInFlight()).toBe(3)
      expect(output.pendingEvents()).toBe(4)
      yield* held.release
      yield* output.flush
      expect(held.seen).toEqual({ most: 3, mostPerStream: 1 })
      expect(held.appends.filter((append) => append.stream === "a")).toHaveLength(2)
      expect(yield* dataOf(store, "a")).toEqual(["a1", "a2"])
      expect(output.pendingEvents()).toBe(0)
      expect(output.writesInFlight()).toBe(0)
    })
  )

  it.scoped("no more appends are in flight than maxAllowedWritesInFlight", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const held = yield* heldAppends(store)
      const { output } = yield* startWriter(store, specOf({ maxAllowedWritesInFlight: 2 }), held.writer)
      output.enqueue(causeOf(1), [emit("a", "a1"), emit("b", "b1"), emit("c", "c1"), emit("d", "d1")])
      yield* settle
      expect(output.writesInFlight()).toBe(2)
      yield* held.release
      yield* output.flush
      expect(held.seen.most).toBe(2)
      expect(yield* dataOf(store, "d")).toEqual(["d1"])
    })
  )

  it.scoped("a flush still waiting when the writer's scope closes fails instead of waiting forever", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const held = yield* heldAppends(store)
      const { output, scope } = yield* startWriter(store, specOf(), held.writer)
      output.enqueue(causeOf(1), [emit("a", "1")])
      const flushed = yield* Effect.fork(Effect.flip(output.flush))
      yield* settle
      yield* closeWriter(scope)
      expect((yield* Fiber.join(flushed)).reason).toBe("The projection's output writer was stopped.")
    })
  )

  it.scoped("an append carries whole items, at most maxWriteBatchLength events unless one item has more", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const held = yield* heldAppends(store)
      const { output } = yield* startWriter(store, specOf({ maxWriteBatchLength: 2 }), held.writer)
      output.enqueue(causeOf(1), [emit("a", "1")])
      yield* settle
      output.enqueue(causeOf(2), [emit("a", "2")])
      output.enqueue(causeOf(3), [emit("a", "3")])
      output.enqueue(causeOf(4), [emit("a", "4a"), emit("a", "4b"), emit("a", "4c")])
      output.enqueue(causeOf(5), [emit("a", "5")])
      output.enqueue(causeOf(6), [emit("a", "6a"), emit("a", "6b")])
      yield* held.release
      yield* output.flush
      expect(held.appends.map((append) => append.events)).toEqual([1, 2, 3, 1, 2])
      expect(yield* dataOf(store, "a")).toEqual(["1", "2", "3", "4a", "4b", "4c", "5", "6a", "6b"])
    })
  )

  it.scoped("a result link points at the event its item wrote last into the linked stream", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(1), [emit("$p-a", "r1"), resultLink("$root", "$p-a")])
      output.enqueue(causeOf(2), [emit("$p-b", "r2"), resultLink("$root", "$p-b")])
      output.enqueue(causeOf(3), [emit("$p-a", "r3"), emit("$p-a", "r4"), resultLink("$root", "$p-a")])
      yield* output.flush
      const root = yield* eventsOf(store, "$root")
      expect(root.map((event) => [event.type, event.isJson, event.data])).toEqual([
        ["$>", false, "0@$p-a"],
        ["$>", false, "0@$p-b"],
        ["$>", false, "2@$p-a"]
      ])
      expect(root[2]!.metadata).toBe(stampOf(3))
    })
  )

  it.scoped("after a restart, a link whose target was written before it is found by reading the target back", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      // The first run writes the partitions' results, then stops leading before the root's links land.
      const refused = failingAppends(store, (_, stream) =>
        stream === "$root" ? new NotLeader({ message: "a follower now" }) : undefined
      )
      const first = yield* startWriter(store, specOf(), refused.writer)
      const items = [
        [emit("$p-a", "r1"), emit("$p-a", "r2"), resultLink("$root", "$p-a")],
        [emit("$p-b", "r3"), resultLink("$root", "$p-b")],
        [emit("$p-a", "r4"), resultLink("$root", "$p-a")]
      ] as const
      items.forEach((writes, i) => first.output.enqueue(causeOf(i + 1), writes))
      expect((yield* Effect.flip(first.output.flush)).reason).toContain("stopped leading")
      yield* closeWriter(first.scope)
      expect(yield* dataOf(store, "$p-a")).toEqual(["r1", "r2", "r4"])
      expect(yield* dataOf(store, "$root")).toEqual([])

      const second = yield* startWriter(store)
      items.forEach((writes, i) => second.output.enqueue(causeOf(i + 1), writes))
      yield* second.output.flush
      expect(yield* dataOf(store, "$p-a")).toEqual(["r1", "r2", "r4"])
      expect(yield* dataOf(store, "$root")).toEqual(["1@$p-a", "0@$p-b", "2@$p-a"])
    })
  )

  it.scoped("with trackEmittedStreams, each stream written is named once in the catalogue, across restarts", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const spec = specOf({ trackEmittedStreams: true })
      const catalogue = emittedStreamsStream("p")
      const first = yield* startWriter(store, spec)
      first.output.enqueue(causeOf(1), [emit("a", "1"), emit("b", "2"), emit("a", "3")])
      first.output.enqueue(causeOf(2), [emit("b", "4"), emit("c", "5")])
      yield* first.output.flush
      yield* closeWriter(first.scope)
      const second = yield* startWriter(store, spec)
      second.output.enqueue(causeOf(2), [emit("b", "4"), emit("c", "5")])
      second.output.enqueue(causeOf(3), [emit("a", "6"), emit("d", "7")])
      yield* second.output.flush
      const tracked = yield* eventsOf(store, catalogue)
      expect(tracked.map((event) => [event.type, event.isJson, event.data])).toEqual([
        ["$StreamTracked", false, "a"],
        ["$StreamTracked", false, "b"],
        ["$StreamTracked", false, "c"],
        ["$StreamTracked", false, "d"]
      ])
      expect(tracked[3]!.metadata).toBe(stampOf(3))
      expect(yield* metadataOf(store, catalogue)).toBe(`{"$acl":{"$r":"$all","$mr":"$all"}}`)
    })
  )

  it.scoped("without trackEmittedStreams, no catalogue is written", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(1), [emit("a", "1")])
      yield* output.flush
      expect(yield* eventsOf(store, emittedStreamsStream("p"))).toEqual([])
    })
  )

  it.scoped("a node that stops leading ends the run with a reason saying so", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const refused = failingAppends(store, () => new NotLeader({ message: "not the leader" }))
      const { output } = yield* startWriter(store, specOf(), refused.writer)
      output.enqueue(causeOf(1), [emit("a", "1")])
      const fault = yield* Effect.flip(output.flush)
      expect(fault.reason).toBe(
        "This node stopped leading while writing to 'a' (not the leader); the projection runs on the new leader."
      )
      expect(refused.attempts()).toBe(1)
      expect(output.fault()).toEqual(fault)
    })
  )

  it.scoped("refusals that may pass are retried with backoff; one that landed is not written twice", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const flaky = failingAppends(store, (attempt) =>
        attempt === 1
          ? new StorageFailed({ message: "writes refused" })
          : attempt === 2
            ? new DiskError({ reason: "IOError", op: "write", path: "/db", message: "bad sector" })
            : attempt === 3
              ? "landed-then-timeout"
              : undefined
      )
      const { output } = yield* startWriter(store, specOf(), flaky.writer)
      output.enqueue(causeOf(1), [emit("a", "1"), emit("a", "2")])
      const flushed = yield* Effect.fork(output.flush)
      yield* passTime
      yield* Fiber.join(flushed)
      expect(flaky.attempts()).toBe(4)
      expect(yield* dataOf(store, "a")).toEqual(["1", "2"])
    })
  )

  it.scoped("a refusal that does not pass ends the run once the retries are spent", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const broken = failingAppends(store, () => new StorageFailed({ message: "the disk is full", reason: "DiskFull" }))
      const { output } = yield* startWriter(store, specOf(), broken.writer)
      output.enqueue(causeOf(1), [emit("a", "1")])
      const flushed = yield* Effect.fork(Effect.flip(output.flush))
      yield* passTime
      const fault = yield* Fiber.join(flushed)
      expect(fault.reason).toBe("Failed to write events to a. Retry limit of 12 reached. Reason: the disk is full")
      expect(broken.attempts()).toBe(13)
    })
  )
})
