// System projections run by the engine: their native handlers behind the handler contract, their source, and
// `$by_event_type`'s progress checkpoint in `$et`.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { byCategory, byEventType, encodeCheckpointTag, streams } from "../src/index.js"
import { systemProjectionHandler, systemSourceDefinition } from "../src/engine/systemHandler.js"
import { appendEvents, openStore, specOf, start, storeSource, streamEvents } from "./engineSupport.js"

describe("system projections in the engine", () => {
  it("a config the projection refuses is the reference's fault message", () => {
    const refused = systemProjectionHandler(byEventType, "something")
    expect(Either.isLeft(refused) && refused.left).toBe("Empty source expected")
    expect(Either.isRight(systemProjectionHandler(byCategory, "first\r\n-"))).toBe(true)
  })

  it("reads all of $all, every event type, links as the projection says", () => {
    const definition = systemSourceDefinition(streams)
    expect([definition.allStreams, definition.allEvents, definition.options.includeLinks]).toEqual([true, true, true])
    expect(systemSourceDefinition(byEventType).options.includeLinks).toBe(false)
    expect(definition.options.producesResults).toBe(false)
  })

  it.scoped(
    "runs with no state: its writes are the emitted events, and $by_event_type checkpoints into $et (written directly, after the flush)",
    () =>
      Effect.gen(function* () {
        const store = yield* openStore()
        yield* appendEvents(store, "a", 2, "happened")
        const handler = Either.getOrThrow(systemProjectionHandler(byEventType, ""))
        const spec = specOf({
          name: "$by_event_type",
          system: true,
          emitEnabled: true,
          definition: systemSourceDefinition(byEventType),
          thresholds: { checkpointHandledThreshold: 2 }
        })
        const { runner, output } = yield* start(store, spec, storeSource(store), handler)
        const writes = output.enqueued.flatMap((item) =>
          item.writes.map((write) => [write.stream, write.eventType, write.data])
        )
        const position = runner.statistics().lastCheckpoint!
        expect(writes).toEqual([
          ["$et-happened", "$>", "0@a"],
          ["$et-happened", "$>", "1@a"]
        ])
        const progress = yield* streamEvents(store, "$et")
        expect(progress.map((event) => [event.type, event.data])).toEqual([
          ["$Checkpoint", encodeCheckpointTag(position)]
        ])
        expect((yield* runner.partition("")).state).toBe("")
        expect(runner.statistics().stateBytes).toBe(0)
      })
  )
})
