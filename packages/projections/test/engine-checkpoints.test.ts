// The runner's checkpoints over a real store: when they are written, what they hold, and that a restart from
// them (after a crash: the scope closed with no graceful stop) ends where one uninterrupted run ends.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Scope } from "effect"
import { checkpointStreamMetadata, checkpointTagText, decodeCheckpointTag } from "../src/index.js"
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
import { readStoredPartition, writeCheckpointEvent } from "../src/engine/checkpointStreams.js"

const rootCheckpoints = (store: Parameters<typeof streamEvents>[0], name = "p") =>
  streamEvents(store, `$projections-${name}-checkpoint`)

describe("runner checkpoints", () => {
  it.scoped("checkpoints after the handled threshold, with the root state and the position stamped with $v", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 7)
      const { runner } = yield* start(store, specOf(), storeSource(store), countingHandler())
      const checkpoints = yield* rootCheckpoints(store)
      expect(checkpoints.map((event) => [event.type, event.data])).toEqual([
        ["$ProjectionCheckpoint", '[{"count":4},{"count":4}]']
      ])
      const position = decodeCheckpointTag(checkpoints[0]!.metadata)!
      expect([position.projectionId, position.epoch, position.version]).toEqual([7, 0, 1])
      expect(runner.statistics().lastCheckpoint).toEqual(position.tag)
      expect(runner.statistics().eventsProcessedAfterRestart).toBe(7)
      const metadata = yield* store.getStreamMetadata("$projections-p-checkpoint")
      expect(metadata.raw?.toString("utf8")).toBe(checkpointStreamMetadata)
    })
  )

  it.scoped("waits checkpointAfterMs since the last checkpoint before the next", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 5)
      const spec = specOf({ thresholds: { checkpointHandledThreshold: 1, checkpointAfterMs: 10_000 } })
      yield* start(store, spec, storeSource(store), countingHandler())
      expect(yield* rootCheckpoints(store)).toEqual([])
      // The poll after the interval reads nothing new, but the thresholds are now met.
      yield* settle(10_000)
      expect((yield* rootCheckpoints(store)).map((event) => event.data)).toEqual(['[{"count":5},{"count":5}]'])
    })
  )

  it.scoped("checkpoints after more than the unhandled-bytes threshold of skipped log", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "$system", 3)
      const spec = specOf({ thresholds: { checkpointUnhandledBytesThreshold: 250 } })
      const { runner } = yield* start(store, spec, storeSource(store), countingHandler())
      const checkpoints = yield* rootCheckpoints(store)
      expect(checkpoints.map((event) => event.data)).toEqual(["[]"])
      expect(runner.statistics().lastCheckpoint).toEqual(decodeCheckpointTag(checkpoints[0]!.metadata)!.tag)
    })
  )

  it.scoped("writes no checkpoint while the output is not durable", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 4)
      const output = fakeOutput()
      output.held = yield* Deferred.make<void>()
      const { runner } = yield* start(store, specOf(), storeSource(store), countingHandler(), output)
      expect(yield* rootCheckpoints(store)).toEqual([])
      expect(runner.statistics().checkpointStatus).toBe("Requested")
      yield* Deferred.succeed(output.held, undefined)
      output.held = undefined
      yield* settle()
      expect((yield* rootCheckpoints(store)).length).toBe(1)
      expect(runner.statistics().checkpointStatus).toBe("")
    })
  )

  it.scoped("a graceful stop writes a final checkpoint; closing the scope writes none", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 6)
      const graceful = yield* start(store, specOf(), storeSource(store), countingHandler())
      yield* graceful.runner.stop(true)
      expect(yield* graceful.runner.outcome).toEqual({ _tag: "Stopped" })
      expect(graceful.runner.statistics().status).toBe("Stopped")
      expect((yield* rootCheckpoints(store)).map((event) => event.data)).toEqual([
        '[{"count":4},{"count":4}]',
        '[{"count":6},{"count":6}]'
      ])

      const other = yield* openStore()
      yield* appendEvents(other, "a", 6)
      const scope = yield* Scope.make()
      const crashed = yield* start(other, specOf(), storeSource(other), countingHandler()).pipe(Scope.extend(scope))
      yield* Scope.close(scope, { _tag: "Success", value: undefined } as never)
      expect(yield* crashed.runner.outcome).toEqual({ _tag: "Stopped" })
      expect((yield* rootCheckpoints(other)).map((event) => event.data)).toEqual(['[{"count":4},{"count":4}]'])
    })
  )

  it.scoped("a restart after a crash resumes from the checkpoint and ends where one run ends", () =>
    Effect.gen(function* () {
      const definition = definitionOf({ byStream: true })
      const spec = specOf({ definition, thresholds: { checkpointHandledThreshold: 3 } })
      const write = (store: Parameters<typeof appendEvents>[0]) =>
        Effect.gen(function* () {
          yield* appendEvents(store, "a", 4)
          yield* appendEvents(store, "b", 2)
          yield* appendEvents(store, "a", 1)
          yield* appendEvents(store, "c", 3)
        })
      const once = yield* openStore()
      yield* write(once)
      const single = yield* start(once, spec, storeSource(once), countingHandler())

      const twice = yield* openStore()
      yield* write(twice)
      const scope = yield* Scope.make()
      yield* start(twice, spec, storeSource(twice), countingHandler()).pipe(Scope.extend(scope))
      yield* Scope.close(scope, { _tag: "Success", value: undefined } as never)
      const handler = countingHandler()
      const restarted = yield* start(twice, spec, storeSource(twice), handler)
      // The first item after the restart comes with its partition's checkpointed state.
      expect(handler.calls[0]!.state).not.toBeUndefined()
      for (const partition of ["a", "b", "c"]) {
        const expected = yield* single.runner.partition(partition)
        const actual = yield* restarted.runner.partition(partition)
        expect([partition, actual.state]).toEqual([partition, expected.state])
      }
      expect(checkpointTagText(restarted.runner.statistics().position!)).toBe(
        checkpointTagText(single.runner.statistics().position!)
      )
    })
  )

  it.scoped("passes over a partition's checkpoint written past the root checkpoint (a checkpoint cut short)", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      const spec = specOf({
        definition: definitionOf({ byStream: true }),
        thresholds: { checkpointHandledThreshold: 3 }
      })
      yield* appendEvents(store, "a", 2)
      yield* appendEvents(store, "b", 1)
      yield* appendEvents(store, "a", 2)
      const scope = yield* Scope.make()
      yield* start(store, spec, storeSource(store), countingHandler()).pipe(Scope.extend(scope))
      yield* Scope.close(scope, { _tag: "Success", value: undefined } as never)
      expect((yield* rootCheckpoints(store)).map((event) => event.data)).toEqual(["[]"])
      // The crash came after the next checkpoint had written a's state and before its root checkpoint.
      const last = yield* Effect.orDie(store.readEvent("a", -1))
      const logPosition = last._tag === "Success" ? last.event.event!.logPosition : -1
      yield* Effect.orDie(
        writeCheckpointEvent(
          store,
          "$projections-p-a-checkpoint",
          0,
          {
            eventType: "$Checkpoint",
            state: '{"count":4}',
            result: '{"count":4}',
            tag: { kind: "position", phase: 0, commit: logPosition, prepare: logPosition }
          },
          spec.version,
          { metadata: "00000000-0000-4000-8000-00000000a001", event: "00000000-0000-4000-8000-00000000a002" }
        )
      )
      // Stopped, its partition shows the state at its checkpoint.
      expect((yield* readStoredPartition(store, spec, "a")).state).toBe('{"count":2}')
      const handler = countingHandler()
      const restarted = yield* start(store, spec, storeSource(store), handler)
      // a's events after the root checkpoint count once, on the state a had there.
      expect(handler.calls.filter((call) => call.partition === "a")[0]!.state).toBe('{"count":2}')
      expect((yield* restarted.runner.partition("a")).state).toBe('{"count":4}')
    })
  )

  it.scoped("ignores checkpoints of an earlier epoch (a reset) and starts from the beginning", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 5)
      const first = yield* start(store, specOf(), storeSource(store), countingHandler())
      yield* first.runner.stop(true)
      const handler = countingHandler()
      const reset = specOf({ version: { projectionId: 7, epoch: 1, version: 2 } })
      const second = yield* start(store, reset, storeSource(store), handler)
      expect(handler.calls[0]!.state).toBe("")
      expect((yield* second.runner.partition("")).state).toBe('{"count":5}')
      expect(second.runner.statistics().eventsProcessedAfterRestart).toBe(5)
    })
  )

  it.scoped("ignores a partition's checkpoint of an earlier epoch", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 2)
      const spec = specOf({ definition: definitionOf({ byStream: true }) })
      const first = yield* start(store, spec, storeSource(store), countingHandler())
      yield* first.runner.stop(true)
      expect((yield* streamEvents(store, "$projections-p-a-checkpoint")).map((event) => event.data)).toEqual([
        '[{"count":2},{"count":2}]'
      ])
      // The root checkpoint stream's last event is no checkpoint: only the partition's could still count.
      yield* appendEvents(store, "$projections-p-checkpoint", 1, "other")
      const next = { ...spec, version: { projectionId: 7, epoch: 1, version: 2 } }
      yield* appendEvents(store, "a", 1)
      const second = yield* start(store, next, storeSource(store), countingHandler())
      expect((yield* second.runner.partition("a")).state).toBe('{"count":3}')
    })
  )

  it.scoped("ignores a checkpoint another projection (another id) wrote", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendEvents(store, "a", 4)
      const first = yield* start(store, specOf(), storeSource(store), countingHandler())
      yield* first.runner.stop(true)
      const handler = countingHandler()
      const other = specOf({ version: { projectionId: 8, epoch: 0, version: 1 } })
      const second = yield* start(store, other, storeSource(store), handler)
      expect(handler.calls[0]!.state).toBe("")
      expect(second.runner.statistics().eventsProcessedAfterRestart).toBe(4)
    })
  )
})
