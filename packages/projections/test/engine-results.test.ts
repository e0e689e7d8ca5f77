// Results: a continuous projection's running results (root, and partitioned with links and the partition
// catalogue), and a query's end: a `Result` per partition then `$Eof`, status and progress of a completed run.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { checkpointTagText } from "../src/index.js"
import {
  appendEvents,
  countingHandler,
  definitionOf,
  openStore,
  specOf,
  start,
  storeSource,
  streamEvents,
  type Enqueued
} from "./engineSupport.js"

const writesOf = (enqueued: ReadonlyArray<Enqueued>) =>
  enqueued.flatMap((item) =>
    item.writes.map((write) =>
      write.linkToWrittenIn === undefined
        ? [write.stream, write.eventType, write.data]
        : [write.stream, write.eventType, `-> ${write.linkToWrittenIn}`]
    )
  )

describe("results", () => {
  it.scoped("a continuous projection writes Result when the result changes and ResultRemoved when it goes", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 3)
      const spec = specOf({ definition: definitionOf({ options: { producesResults: true } }) })
      // Results: the count while it is below 2, none from then on.
      const resultOf = (state: string) => ((JSON.parse(state) as { count: number }).count < 2 ? state : null)
      const { output } = yield* start(store, spec, storeSource(store), countingHandler({ resultOf }))
      expect(writesOf(output.enqueued)).toEqual([
        ["$projections-p-result", "Result", '{"count":1}'],
        ["$projections-p-result", "ResultRemoved", ""]
      ])
    })
  )

  it.scoped(
    "a partitioned one writes into the partition's result stream, links it, and catalogues new partitions",
    () =>
      Effect.gen(function* () {
        const store = yield* openStore()
        yield* appendEvents(store, "a", 2)
        yield* appendEvents(store, "b", 1)
        const spec = specOf({ definition: definitionOf({ byStream: true, options: { producesResults: true } }) })
        const { output, runner } = yield* start(store, spec, storeSource(store), countingHandler())
        expect(writesOf(output.enqueued)).toEqual([
          ["$projections-p-partitions", "$partition", "a"],
          ["$projections-p-a-result", "Result", '{"count":1}'],
          ["$projections-p-result", "$>", "-> $projections-p-a-result"],
          ["$projections-p-a-result", "Result", '{"count":2}'],
          ["$projections-p-result", "$>", "-> $projections-p-a-result"],
          ["$projections-p-partitions", "$partition", "b"],
          ["$projections-p-b-result", "Result", '{"count":1}'],
          ["$projections-p-result", "$>", "-> $projections-p-b-result"]
        ])
        // After a restart from a checkpoint, a known partition is not catalogued again.
        yield* runner.stop(true)
        yield* appendEvents(store, "a", 1)
        const again = yield* start(store, spec, storeSource(store), countingHandler())
        expect(writesOf(again.output.enqueued)).toEqual([
          ["$projections-p-a-result", "Result", '{"count":3}'],
          ["$projections-p-result", "$>", "-> $projections-p-a-result"]
        ])
      })
  )

  it.scoped("writes no result when the result did not change, nor for a continuous projection without results", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 3)
      const spec = specOf({ definition: definitionOf({ options: { producesResults: true } }) })
      const constant = yield* start(store, spec, storeSource(store), countingHandler({ resultOf: () => "1" }))
      expect(writesOf(constant.output.enqueued)).toEqual([["$projections-p-result", "Result", "1"]])
      const none = yield* start(store, specOf(), storeSource(store), countingHandler())
      expect(none.output.enqueued).toEqual([])
    })
  )

  it.scoped("a query writes a Result per partition then $Eof at the end of its source, and completes", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 2)
      yield* appendEvents(store, "b", 1)
      const spec = specOf({ mode: "OneTime", stopOnEof: true, definition: definitionOf({ byStream: true }) })
      const { runner, output } = yield* start(store, spec, storeSource(store), countingHandler())
      expect(yield* runner.outcome).toEqual({ _tag: "Completed" })
      expect(writesOf(output.enqueued)).toEqual([
        ["$projections-p-result", "Result", ""],
        ["$projections-p-result", "Result", '{"count":2}'],
        ["$projections-p-result", "Result", '{"count":1}'],
        ["$projections-p-result", "$Eof", ""]
      ])
      expect(output.enqueued[0]!.cause).toEqual({
        tag: { kind: "phase", phase: 1, completed: true },
        eventId: "",
        correlationId: undefined
      })
      const statistics = runner.statistics()
      expect([statistics.status, statistics.progress, checkpointTagText(statistics.position!)]).toEqual([
        "Stopped",
        100,
        "Phase: 1 (completed)"
      ])
    })
  )

  it.scoped("a query with no fold writes its results while running and only $Eof at the end", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 2)
      const spec = specOf({ stopOnEof: true, definition: definitionOf({ options: { definesFold: false } }) })
      const { runner, output } = yield* start(store, spec, storeSource(store), countingHandler())
      expect(yield* runner.outcome).toEqual({ _tag: "Completed" })
      expect(writesOf(output.enqueued)).toEqual([
        ["$projections-p-result", "Result", '{"count":1}'],
        ["$projections-p-result", "Result", '{"count":2}'],
        ["$projections-p-result", "$Eof", ""]
      ])
    })
  )

  it.scoped("a query with checkpoints still starts from the beginning of its source", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 5)
      const spec = specOf({ mode: "OneTime", stopOnEof: true })
      const first = yield* start(store, spec, storeSource(store), countingHandler())
      expect(yield* first.runner.outcome).toEqual({ _tag: "Completed" })
      expect((yield* streamEvents(store, "$projections-p-checkpoint")).length).toBe(1)
      const handler = countingHandler()
      const second = yield* start(store, spec, storeSource(store), handler)
      expect(yield* second.runner.outcome).toEqual({ _tag: "Completed" })
      expect(handler.calls[0]!.state).toBe("")
      expect((yield* second.runner.partition("")).state).toBe('{"count":5}')
    })
  )
})
