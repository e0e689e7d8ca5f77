// The management commands and the states they lead to: what each writes, what happens to the runner, and the
// status text shown at each step.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { statusText, noFigures } from "../src/service/projectionStatus.js"
import {
  admin,
  appendRaw,
  continuous,
  definitionsOf,
  eventsOf,
  openNode,
  settle,
  user,
  value
} from "./serviceSupport.js"

const noDeletion = { deleteStateStream: false, deleteCheckpointStream: false, deleteEmittedStreams: false }

describe("projection commands", () => {
  it.scoped(
    "disable stops the runner gracefully and loads it stopped; enable runs it again; enable when running writes nothing",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode()
        const { service, fake } = node
        yield* service.create(continuous("p"), admin)
        expect(yield* service.command("p", "enable", admin)).toEqual({ _tag: "Ok", value: "p" })
        expect((yield* definitionsOf(node.store, "p")).length).toBe(1)
        const first = fake.runners[0]!
        fake.stored.set("p/", {
          state: '{"c":3}',
          result: null,
          position: { kind: "position", phase: 0, commit: 3, prepare: 3 }
        })
        expect(yield* service.command("p", "disable", admin)).toEqual({ _tag: "Ok", value: "p" })
        expect(first.stops).toEqual([true])
        expect(first.scopeClosed()).toBe(true)
        const stopped = value(yield* service.statistics("p"))
        expect([stopped.status, stopped.enabled, stopped.version]).toEqual(["Stopped", false, 1])
        expect(stopped.runner.position).toEqual({ kind: "position", phase: 0, commit: 3, prepare: 3 })
        expect(yield* service.command("p", "enable", admin)).toEqual({ _tag: "Ok", value: "p" })
        expect(fake.runners.length).toBe(2)
        expect(fake.runners[1]!.spec.version).toEqual({ projectionId: 6, epoch: -1, version: 2 })
        expect(value(yield* service.statistics("p")).status).toBe("Running")
        expect((yield* definitionsOf(node.store, "p")).map((d) => [d["version"], d["enabled"] ?? false])).toEqual([
          [0, true],
          [1, false],
          [2, true]
        ])
      })
  )

  it.scoped("abort stops the runner without a last checkpoint and leaves it stopped and disabled", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      yield* node.service.create(continuous("p"), admin)
      expect(yield* node.service.command("p", "abort", admin)).toEqual({ _tag: "Ok", value: "p" })
      expect(node.fake.runners[0]!.stops).toEqual([false])
      expect(value(yield* node.service.statistics("p"))).toMatchObject({ status: "Stopped", enabled: false })
      expect((yield* definitionsOf(node.store, "p"))[1]).toMatchObject({ version: 1 })
      expect((yield* definitionsOf(node.store, "p"))[1]).not.toHaveProperty("enabled")
    })
  )

  it.scoped("reset starts a new epoch at the new version, running again if enabled and staying stopped if not", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      yield* node.service.create(continuous("p"), admin)
      yield* node.service.command("p", "reset", admin)
      expect(node.fake.runners[0]!.stops).toEqual([true])
      expect(node.fake.runners[1]!.spec.version).toEqual({ projectionId: 6, epoch: 1, version: 1 })
      expect((yield* definitionsOf(node.store, "p"))[1]).toMatchObject({ epoch: 1, version: 1, enabled: true })
      yield* node.service.command("p", "disable", admin)
      yield* node.service.command("p", "reset", admin)
      expect((yield* definitionsOf(node.store, "p"))[3]).toMatchObject({ epoch: 3, version: 3 })
      expect(node.fake.runners.length).toBe(2)
      expect(value(yield* node.service.statistics("p"))).toMatchObject({ status: "Stopped", epoch: 3, version: 3 })
    })
  )

  it.scoped(
    "a runner that completes shows Completed; one that faults shows Faulted (Enabled) and runs again on enable",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode()
        const { service, fake } = node
        yield* service.create(continuous("q", "fromAll", { mode: "OneTime", checkpointsEnabled: false }), admin)
        yield* fake.runners[0]!.complete
        yield* settle(0)
        expect(value(yield* service.statistics("q"))).toMatchObject({ status: "Completed", stateReason: "" })
        yield* service.create(continuous("p"), admin)
        yield* fake.runners[1]!.fault("Script error at C:1/P:1")
        yield* settle(0)
        expect(value(yield* service.statistics("p"))).toMatchObject({
          status: "Faulted (Enabled)",
          stateReason: "Script error at C:1/P:1"
        })
        // A faulted runner stays readable until something replaces it.
        expect(value(yield* service.state("p", ""))).toMatchObject({ text: '{"p":"","count":0}' })
        yield* service.command("p", "enable", admin)
        expect(fake.runners.length).toBe(3)
        expect(fake.runners[1]!.scopeClosed()).toBe(true)
        expect(value(yield* service.statistics("p"))).toMatchObject({ status: "Running", stateReason: "" })
        // Disabling a completed query leaves it stopped.
        yield* service.command("q", "disable", admin)
        expect(value(yield* service.statistics("q")).status).toBe("Stopped")
      })
  )

  it.scoped(
    "updating the query restarts from the checkpoint, resets a completed projection, and recovers a faulted one",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode()
        const { service, fake } = node
        yield* service.create(continuous("p"), admin)
        expect(yield* service.updateQuery("p", "fromAll2", true, admin)).toEqual({ _tag: "Ok", value: "p" })
        expect(fake.runners[0]!.stops).toEqual([true])
        expect(fake.runners[1]!.spec).toMatchObject({ emitEnabled: true, version: { epoch: -1, version: 1 } })
        expect((yield* definitionsOf(node.store, "p"))[1]).toMatchObject({ query: "fromAll2", emitEnabled: true })
        // emit left out: unchanged.
        yield* service.updateQuery("p", "fromAll3", undefined, admin)
        expect(fake.runners[2]!.spec.emitEnabled).toBe(true)
        // New code that faults: Faulted; fixed code: running again.
        yield* service.updateQuery("p", "fault:bad code", undefined, admin)
        expect(value(yield* service.statistics("p"))).toMatchObject({ status: "Faulted", stateReason: "bad code" })
        yield* service.updateQuery("p", "fromAll", undefined, admin)
        expect(value(yield* service.statistics("p")).status).toBe("Running")
        // A completed query given new code starts a new epoch.
        yield* service.create(continuous("q", "fromAll", { mode: "OneTime", checkpointsEnabled: false }), admin)
        const query = fake.runners.at(-1)!
        yield* query.complete
        yield* settle(0)
        yield* service.updateQuery("q", "fromAll again", undefined, admin)
        expect(fake.runners.at(-1)!.spec.version).toEqual({ projectionId: 7, epoch: 1, version: 1 })
        // A faulted and disabled projection given good code is stopped.
        yield* service.create(continuous("s", "fault:x", { enabled: false }), admin)
        expect(value(yield* service.statistics("s")).status).toBe("Faulted")
        yield* service.updateQuery("s", "fromAll", undefined, admin)
        expect(value(yield* service.statistics("s")).status).toBe("Stopped")
      })
  )

  it.scoped(
    "delete: only stopped or faulted, never a system projection; it removes what it is asked to and frees the name",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode()
        const { service, store } = node
        yield* service.create(continuous("p", "streams:a,b", { emitEnabled: true, trackEmittedStreams: true }), admin)
        expect(yield* service.delete("p", noDeletion, admin)).toEqual({
          _tag: "OperationFailed",
          reason: "Cannot delete a projection that hasn't been stopped or faulted."
        })
        expect(yield* service.delete("$by_category", noDeletion, admin)).toEqual({
          _tag: "OperationFailed",
          reason: "We currently don't allow for the deletion of System Projections."
        })
        expect(yield* service.delete("p", noDeletion, user)).toEqual({ _tag: "NotAuthorized" })
        yield* service.command("p", "disable", admin)
        // What the projection wrote: a checkpoint, an emitted stream it tracked, its order stream.
        const write = (stream: string, type: string, data: string) => appendRaw(store, stream, -2, type, data)
        yield* write("$projections-p-checkpoint", "$ProjectionCheckpoint", "[]")
        yield* write("emitted-1", "x", "")
        yield* write("$projections-p-emittedstreams", "$StreamTracked", "emitted-1")
        yield* write("$projections-p-order", "$>", "0@a")
        yield* write("kept", "x", "")
        const options = { deleteStateStream: true, deleteCheckpointStream: true, deleteEmittedStreams: true }
        expect(yield* service.delete("p", options, admin)).toEqual({ _tag: "Ok", value: "p" })
        const deleting = (yield* definitionsOf(store, "p"))[2]
        expect(deleting).toMatchObject({
          numberOfPrequisitesMetForDeletion: 3,
          deleting: true,
          deleteEmittedStreams: true,
          deleteCheckpointStream: true,
          deleteStateStream: true,
          version: 2
        })
        expect(deleting).not.toHaveProperty("enabled")
        for (const stream of [
          "$projections-p-checkpoint",
          "emitted-1",
          "$projections-p-emittedstreams",
          "$projections-p-order"
        ])
          expect((yield* store.readStreamForward(stream, 0, 10))._tag).not.toBe("Success")
        expect((yield* eventsOf(store, "kept")).length).toBe(1)
        expect((yield* eventsOf(store, "$projections-$all")).at(-1)).toEqual({ type: "$ProjectionDeleted", data: "p" })
        expect(yield* service.statistics("p")).toEqual({ _tag: "NotFound" })
        // The name is free again; its new definition follows the old ones in the same stream.
        yield* service.create(continuous("p"), admin)
        expect((yield* definitionsOf(store, "p")).map((d) => d["version"])).toEqual([0, 1, 2, 3])
        expect(node.fake.runners.at(-1)!.spec.version).toEqual({ projectionId: 8, epoch: -1, version: 3 })
      })
  )

  it.scoped("delete without options leaves the projection's streams alone", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      yield* node.service.create(continuous("p", "fromAll", { enabled: false }), admin)
      yield* appendRaw(node.store, "$projections-p-checkpoint", -2, "$ProjectionCheckpoint", "[]")
      expect(yield* node.service.delete("p", noDeletion, admin)).toEqual({ _tag: "Ok", value: "p" })
      expect((yield* definitionsOf(node.store, "p"))[1]).toMatchObject({ deleting: true })
      expect((yield* definitionsOf(node.store, "p"))[1]).not.toHaveProperty("numberOfPrequisitesMetForDeletion")
      expect((yield* eventsOf(node.store, "$projections-p-checkpoint")).length).toBe(1)
    })
  )

  it.scoped(
    "state and result: from the runner with its position, none for a completed query, stored when stopped",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode()
        const { service, fake } = node
        yield* service.create(continuous("p"), admin)
        fake.runners[0]!.processed = 4
        const at4 = { kind: "position", phase: 0, commit: 4, prepare: 4 } as const
        expect(value(yield* service.state("p", "a"))).toEqual({ text: '{"p":"a","count":4}', position: at4 })
        expect(value(yield* service.result("p", ""))).toEqual({ text: "4", position: at4 })
        yield* service.create(continuous("q", "fromAll", { mode: "OneTime", checkpointsEnabled: false }), admin)
        yield* fake.runners[1]!.complete
        yield* settle(0)
        expect(value(yield* service.state("q", ""))).toEqual({ text: '{"p":"","count":0}', position: undefined })
        expect(value(yield* service.result("q", ""))).toEqual({ text: "", position: undefined })
        yield* service.command("p", "disable", admin)
        fake.stored.set("p/b", { state: "s", result: "r", position: at4 })
        expect(value(yield* service.state("p", "b"))).toEqual({ text: "s", position: at4 })
        expect(value(yield* service.result("p", "b"))).toEqual({ text: "r", position: at4 })
        expect(yield* service.state("nope", "")).toEqual({ _tag: "NotFound" })
      })
  )

  it.scoped("a deletion cut short is finished when the projections are loaded again", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      const first = yield* openNode(disk)
      yield* first.service.create(continuous("p", "fromAll", { enabled: false }), admin)
      yield* appendRaw(first.store, "$projections-p-checkpoint", -2, "$ProjectionCheckpoint", "[]")
      // The deleting definition was written, then the node stopped before anything was removed.
      const [created] = yield* definitionsOf(first.store, "p")
      const deleting = { ...created, version: 1, deleting: true, deleteCheckpointStream: true }
      yield* appendRaw(first.store, "$projections-p", 0, "$ProjectionUpdated", JSON.stringify(deleting))
      yield* first.close
      const second = yield* openNode(disk)
      expect(yield* second.service.statistics("p")).toEqual({ _tag: "NotFound" })
      expect((yield* second.store.readStreamForward("$projections-p-checkpoint", 0, 10))._tag).not.toBe("Success")
      expect((yield* eventsOf(second.store, "$projections-$all")).at(-1)).toEqual({
        type: "$ProjectionDeleted",
        data: "p"
      })
      expect(second.fake.runners).toEqual([])
    })
  )

  it.scoped("while a projection prepares it shows Preparing, its version unknown, and its state empty", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      node.fake.gate = yield* Deferred.make<void>()
      const creating = yield* Effect.fork(node.service.create(continuous("p"), admin))
      yield* settle(0)
      const stats = node.service.snapshot().find((s) => s.name === "p")
      expect([stats?.status, stats?.version, stats?.epoch]).toEqual(["Preparing", -1, -1])
      yield* Deferred.succeed(node.fake.gate, undefined)
      expect(yield* Fiber.join(creating)).toEqual({ _tag: "Ok", value: "p" })
      expect(value(yield* node.service.statistics("p")).status).toBe("Running")
    })
  )

  it.scoped("operators manage one-time and continuous projections; anyone may manage a transient query", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      const { service } = node
      yield* service.create(continuous("p"), admin)
      const name = value(yield* service.create(continuous("", "fromAll", { mode: "Transient" }), user))
      for (const command of ["enable", "disable", "reset", "abort"] as const)
        expect(yield* service.command("p", command, user)).toEqual({ _tag: "NotAuthorized" })
      expect(yield* service.updateQuery("p", "x", undefined, user)).toEqual({ _tag: "NotAuthorized" })
      expect(yield* service.restart(user)).toEqual({ _tag: "NotAuthorized" })
      expect((yield* service.statistics("p"))._tag).toBe("Ok")
      expect((yield* service.state("p", ""))._tag).toBe("Ok")
      expect(yield* service.command(name, "disable", user)).toEqual({ _tag: "Ok", value: name })
      expect(yield* service.updateQuery(name, "fromAll", undefined, user)).toEqual({ _tag: "Ok", value: name })
      // A transient query's config changes in any state, and it may be deleted while running.
      expect(value(yield* service.statistics(name)).status).toBe("Stopped")
      yield* service.command(name, "enable", user)
      const config = value(yield* service.config(name, user))
      expect(yield* service.updateConfig(name, { ...config, pendingEventsThreshold: 7 }, user)).toMatchObject({
        _tag: "Ok"
      })
      expect(yield* service.delete(name, noDeletion, user)).toEqual({ _tag: "Ok", value: name })
      expect(yield* service.statistics(name)).toEqual({ _tag: "NotFound" })
      expect((yield* eventsOf(node.store, "$projections-$all")).map((e) => e.data)).not.toContain(name)
    })
  )

  it.effect(
    "the status text: the leader state alone without figures, else the runner's, combined as the reference does",
    () =>
      Effect.sync(() => {
        const figures = (status: typeof noFigures.status, more: Partial<typeof noFigures> = {}) => ({
          ...noFigures,
          status,
          ...more
        })
        expect(statusText("Preparing", undefined, true)).toBe("Preparing")
        expect(statusText("Faulted", undefined, true)).toBe("Faulted")
        expect(statusText("Running", figures("Running"), true)).toBe("Running")
        expect(statusText("Running", figures("Running", { paused: true }), true)).toBe("Running/Paused")
        expect(statusText("Stopping", figures("Running"), true)).toBe("Stopping/Running")
        expect(statusText("Completed", figures("Stopped"), true)).toBe("Completed")
        expect(statusText("Completed", figures("PhaseCompleted"), false)).toBe("Completed/PhaseCompleted")
        expect(statusText("Running", figures("Running", { writingResults: true }), false)).toBe(
          "Running/Writing results"
        )
        expect(statusText("Stopped", figures("Stopped"), true)).toBe("Stopped (Enabled)")
        expect(statusText("Stopped", figures("Stopped"), false)).toBe("Stopped")
        expect(statusText("Faulted", figures("Faulted"), true)).toBe("Faulted (Enabled)")
      })
  )
})
