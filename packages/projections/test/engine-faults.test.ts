// Why a run faults, and with which reason: a handler's error framed as the reference frames it (plus the event
// type and the stack), a deletion notification's, emitting where emit is off, a state over the size limit, the
// output writer's fault, a checkpoint stream written from outside. A failing store read is retried instead.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ExpectedVersion } from "@vellum/storage"
import {
  definitionOf,
  fakeOutput,
  openStore,
  settle,
  specOf,
  start,
  storeSource,
  streamEvents
} from "./engineSupport.js"
import { appendEvents, countingHandler } from "./engineSupport.js"
import type { EventStoreService } from "@vellum/storage"

const framed = (what: string, position: string, message: string, type: string) =>
  `The p projection failed to process ${what}.\r\nHandler: EventStore.Projections.Core.Services.Interpreted.JintProjectionStateHandler\r\n` +
  `Event Position: ${position}\r\n\r\nMessage:\r\n\r\n${message}\r\n\r\nEvent Type: ${type}\r\n\r\nStack:\r\n\r\nat handler`

const logPositionOf = (store: EventStoreService, stream: string, eventNumber: number) =>
  Effect.map(Effect.orDie(store.readEvent(stream, eventNumber)), (read) =>
    read._tag === "Success" ? read.event.event!.logPosition : -1
  )

describe("runner faults", () => {
  it.scoped("a handler's error faults the run with the reference's frame, the event type and the stack", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 2)
      yield* appendEvents(store, "a", 1, "bad")
      yield* appendEvents(store, "a", 1)
      const handler = countingHandler({ failOn: "bad" })
      const { runner } = yield* start(
        store,
        specOf({ thresholds: { checkpointHandledThreshold: 100 } }),
        storeSource(store),
        handler
      )
      const at = yield* logPositionOf(store, "a", 2)
      const reason = framed("an event", `C:${at}/P:${at}`, "boom at 2", "bad")
      expect(yield* runner.outcome).toEqual({ _tag: "Faulted", reason })
      expect(runner.statistics().status).toBe("Faulted")
      expect(runner.statistics().faultReason).toBe(reason)
      // The state is the last successful event's; no checkpoint was written after the fault.
      expect((yield* runner.partition("")).state).toBe('{"count":2}')
      expect(yield* streamEvents(store, "$projections-p-checkpoint")).toEqual([])
    })
  )

  it.scoped("a deletion notification's error says so", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 1, "gone")
      const handler = countingHandler({ failOn: "gone" })
      const spec = specOf({ definition: definitionOf({ byStream: true }) })
      const { runner } = yield* start(store, spec, storeSource(store, { deletedType: "gone" }), handler)
      const at = yield* logPositionOf(store, "a", 0)
      const outcome = yield* runner.outcome
      expect(outcome).toEqual({
        _tag: "Faulted",
        reason: framed("a delete partition notification", `C:${at}/P:${at}`, "boom at 0", "gone")
      })
    })
  )

  it.scoped(
    "emitting while emit is off faults with the reference's reason; with emit on, writes carry their cause",
    () =>
      Effect.gen(function* () {
        const store = yield* openStore()
        yield* appendEvents(store, "a", 2, "thing", '{"$correlationId":"c-1"}')
        const off = yield* start(store, specOf(), storeSource(store), countingHandler({ emit: true }))
        expect(yield* off.runner.outcome).toEqual({
          _tag: "Faulted",
          reason: "'emit' is not allowed by the projection/configuration/mode"
        })
        expect(off.output.enqueued).toEqual([])

        const on = yield* start(
          store,
          specOf({ emitEnabled: true }),
          storeSource(store),
          countingHandler({ emit: true })
        )
        yield* settle()
        expect(on.runner.statistics().status).toBe("Running")
        const first = yield* Effect.orDie(store.readEvent("a", 0))
        const firstId = first._tag === "Success" ? first.event.event!.eventId : ""
        expect(on.output.enqueued[0]!.cause).toEqual({
          tag: {
            kind: "position",
            phase: 0,
            commit: first._tag === "Success" ? first.event.event!.logPosition : 0,
            prepare: first._tag === "Success" ? first.event.event!.logPosition : 0
          },
          eventId: firstId,
          correlationId: "c-1"
        })
        expect(on.output.enqueued.map((item) => item.writes.map((write) => [write.stream, write.data]))).toEqual([
          [["out-a", "0@a"]],
          [["out-a", "1@a"]]
        ])
      })
  )

  it.scoped("a state over MaxProjectionStateSize faults, naming the partition and grouping the digits", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 1)
      const root = yield* start(
        store,
        specOf({ maxStateSizeBytes: 1000 }),
        storeSource(store),
        countingHandler({ padding: 600 })
      )
      // State and result are the same text: twice its length counts.
      const size = 2 * JSON.stringify({ count: 1, pad: "x".repeat(600) }).length
      expect(yield* root.runner.outcome).toEqual({
        _tag: "Faulted",
        reason: `The state size of projection 'p' is ${size.toLocaleString("en-US")} bytes which exceeds the configured MaxProjectionStateSize of 1,000 bytes.`
      })
      const spec = specOf({ maxStateSizeBytes: 1000, definition: definitionOf({ byStream: true }) })
      const partitioned = yield* start(store, spec, storeSource(store), countingHandler({ padding: 600 }))
      expect(yield* partitioned.runner.outcome).toEqual({
        _tag: "Faulted",
        reason: `The state size of projection 'p' in partition 'a' is ${size.toLocaleString("en-US")} bytes which exceeds the configured MaxProjectionStateSize of 1,000 bytes.`
      })
    })
  )

  it.scoped("the output writer's fault ends the run with its reason", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 2)
      const output = fakeOutput()
      output.faultWith = "The 'x' stream managed by projection p has been written to from the outside."
      const { runner } = yield* start(store, specOf(), storeSource(store), countingHandler(), output)
      expect(yield* runner.outcome).toEqual({ _tag: "Faulted", reason: output.faultWith })
    })
  )

  it.scoped("a checkpoint stream written from outside faults the run", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 4)
      yield* appendEvents(store, "b", 4)
      const { runner } = yield* start(
        store,
        specOf({ thresholds: { checkpointHandledThreshold: 4, pendingEventsThreshold: 4 } }),
        storeSource(store),
        countingHandler()
      )
      yield* runner.stop(true)
      // Someone else appends to the checkpoint stream; the next run's expected version no longer holds.
      const second = yield* start(store, specOf(), storeSource(store), countingHandler())
      yield* Effect.orDie(
        store.append("$projections-p-checkpoint", ExpectedVersion.Any, [
          {
            eventId: "00000000-0000-4000-8000-00000000ffff",
            eventType: "x",
            isJson: false,
            data: Buffer.from("x"),
            metadata: Buffer.alloc(0)
          }
        ])
      )
      yield* appendEvents(store, "a", 4)
      second.runner.onCommit(["a"])
      yield* settle()
      expect(yield* second.runner.outcome).toEqual({
        _tag: "Faulted",
        reason: "Checkpoint stream `$projections-p-checkpoint` has been written to from the outside"
      })
    })
  )

  it.scoped("a store read that fails is retried with backoff, not a fault", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 3)
      const source = storeSource(store)
      source.failNextReads = 3
      const { runner } = yield* start(store, specOf(), source, countingHandler())
      expect(runner.statistics().eventsProcessedAfterRestart).toBe(0)
      yield* settle(50)
      yield* settle(100)
      yield* settle(200)
      expect(runner.statistics().status).toBe("Running")
      expect(runner.statistics().eventsProcessedAfterRestart).toBe(3)
    })
  )

  it.scoped("a partition function's error is framed like a handler's", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 1)
      const handler = countingHandler()
      const failing = {
        ...handler,
        partitionsOf: () =>
          Effect.fail({ _tag: "HandlerFault" as const, index: 0, message: "no key", stack: "", done: [] })
      }
      const spec = specOf({ definition: definitionOf({ byCustomPartitions: true }) })
      const { runner } = yield* start(store, spec, storeSource(store), failing)
      const at = yield* logPositionOf(store, "a", 0)
      const outcome = yield* runner.outcome
      expect(outcome._tag === "Faulted" && outcome.reason).toBe(
        `The p projection failed to process an event.\r\nHandler: EventStore.Projections.Core.Services.Interpreted.JintProjectionStateHandler\r\n` +
          `Event Position: C:${at}/P:${at}\r\n\r\nMessage:\r\n\r\nno key\r\n\r\nEvent Type: thing`
      )
    })
  )
})
