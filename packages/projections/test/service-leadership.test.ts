// The service on and off the lead, under `--run-projections` and `--start-standard-projections`, transient
// queries' expiry, commits handed to runners, and the subsystem's restart.
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { ClusterStatus } from "@vellum/cluster"
import { EventStore } from "@vellum/storage"
import * as ProjectionsLayer from "../src/ProjectionsLayer.js"
import { ProjectionRunnerFactory } from "../src/service/ProjectionRunnerFactory.js"
import { defaultProjectionsSettings, Projections } from "../src/service/Projections.js"
import { MemoryDisk } from "@vellum/platform"
import {
  admin,
  appendRaw,
  FakeCluster,
  makeFakeFactory,
  openStore,
  continuous,
  definitionsOf,
  eventsOf,
  openNode,
  settle,
  user,
  value
} from "./serviceSupport.js"

describe("projections and the lead", () => {
  it.scoped("the layer builds the service from the node's store, cluster status and runner factory", () =>
    Effect.gen(function* () {
      const store = yield* openStore(new MemoryDisk(), yield* Effect.scope)
      const fake = makeFakeFactory()
      const dependencies = Layer.mergeAll(
        Layer.succeed(EventStore, store),
        Layer.succeed(ClusterStatus, new FakeCluster().status),
        Layer.succeed(ProjectionRunnerFactory, fake.factory)
      )
      const context = yield* Layer.build(
        Layer.provide(
          ProjectionsLayer.layer({ ...defaultProjectionsSettings, startStandardProjections: true }),
          dependencies
        )
      )
      const service = Context.get(context, Projections)
      yield* settle()
      expect(value(yield* service.list("Any")).map((p) => p.status)).toEqual(Array(5).fill("Running"))
      expect(fake.runners.length).toBe(5)
    })
  )

  it.scoped("with --run-projections None nothing runs, nothing is written, and every call says so", () =>
    Effect.gen(function* () {
      const node = yield* openNode(new MemoryDisk(), { runProjections: "None" })
      expect(node.service.enabled).toBe(false)
      expect((yield* node.service.list("Any"))._tag).toBe("NotReady")
      expect((yield* node.service.create(continuous("p"), admin))._tag).toBe("NotReady")
      expect(node.service.snapshot()).toEqual([])
      expect(yield* eventsOf(node.store, "$projections-$all")).toEqual([])
    })
  )

  it.scoped("with --run-projections System user projections are created but do not run: Stopped (Enabled)", () =>
    Effect.gen(function* () {
      const node = yield* openNode(new MemoryDisk(), { runProjections: "System", startStandardProjections: true })
      expect(node.service.enabled).toBe(true)
      yield* node.service.create(continuous("p"), admin)
      expect(value(yield* node.service.statistics("p"))).toMatchObject({ status: "Stopped (Enabled)", enabled: true })
      expect(node.fake.runners.map((r) => r.spec.name)).not.toContain("p")
      expect(node.fake.runners.map((r) => r.spec.name)).toContain("$by_category")
    })
  )

  it.scoped("--start-standard-projections enables the system projections (a new definition) and runs them", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      const node = yield* openNode(disk, { startStandardProjections: true })
      const definitions = yield* definitionsOf(node.store, "$streams")
      expect(definitions.map((d) => [d["version"], d["enabled"] ?? false])).toEqual([
        [0, false],
        [1, true]
      ])
      const running = node.fake.runners.map((r) => [r.spec.name, r.spec.system, r.spec.emitEnabled])
      expect(running).toEqual(
        ["$streams", "$stream_by_category", "$by_category", "$by_event_type", "$by_correlation_id"].map((n) => [
          n,
          true,
          true
        ])
      )
      expect(value(yield* node.service.statistics("$by_category")).status).toBe("Running")
      // Disabled by hand, then the node starts again with the option: enabled again, as the reference does.
      yield* node.service.command("$streams", "disable", admin)
      yield* node.close
      const again = yield* openNode(disk, { startStandardProjections: true })
      expect(value(yield* again.service.statistics("$streams")).status).toBe("Running")
      // Without the option they stay as they are.
      yield* again.service.command("$streams", "disable", admin)
      yield* again.close
      const plain = yield* openNode(disk)
      expect(value(yield* plain.service.statistics("$streams")).status).toBe("Stopped")
    })
  )

  it.scoped(
    "losing the lead stops every runner without a last checkpoint; leading again loads and runs them anew",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode()
        yield* node.service.create(continuous("p"), admin)
        const first = node.fake.runners[0]!
        node.cluster.leader = false
        yield* settle()
        expect(first.stops).toEqual([false])
        expect(first.scopeClosed()).toBe(true)
        expect((yield* node.service.statistics("p"))._tag).toBe("NotReady")
        expect((yield* node.service.command("p", "disable", admin))._tag).toBe("NotReady")
        expect(node.service.snapshot()).toEqual([])
        node.cluster.leader = true
        node.cluster.term = 1
        yield* settle()
        expect(node.fake.runners.length).toBe(2)
        expect(node.fake.runners[1]!.spec.version).toEqual({ projectionId: 6, epoch: -1, version: 0 })
        expect(value(yield* node.service.statistics("p")).status).toBe("Running")
      })
  )

  it.scoped("a new term (another leader may have acted meanwhile) reloads everything", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      yield* node.service.create(continuous("p"), admin)
      node.cluster.term = 5
      yield* settle()
      expect(node.fake.runners[0]!.stops).toEqual([false])
      expect(node.fake.runners.length).toBe(2)
      // Nothing was registered twice.
      expect((yield* eventsOf(node.store, "$projections-$all")).length).toBe(7)
    })
  )

  it.scoped(
    "a definition written behind the service's back fails the next write; everything stops and loads again",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode()
        yield* node.service.create(continuous("p"), admin)
        const [written] = yield* eventsOf(node.store, "$projections-p")
        yield* appendRaw(
          node.store,
          "$projections-p",
          0,
          "$ProjectionUpdated",
          written!.data.replace('"query": "fromAll"', '"query": "changed"').replace('"version": 0', '"version": 1')
        )
        expect(yield* node.service.command("p", "disable", admin)).toMatchObject({ _tag: "OperationFailed" })
        // The disable stopped it before its write was refused; the service then let go of everything.
        expect(node.fake.runners[0]!.stops).toEqual([true])
        expect((yield* node.service.statistics("p"))._tag).toBe("NotReady")
        yield* settle()
        expect(node.fake.runners[1]!.query.query).toBe("changed")
        expect(node.fake.runners[1]!.spec.version.version).toBe(1)
      })
  )

  it.scoped("commits are handed to the running projections", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      yield* node.service.create(continuous("p"), admin)
      yield* appendRaw(node.store, "orders-1", -2, "x", "")
      yield* settle(0)
      expect(node.fake.runners[0]!.commits.flat()).toContain("orders-1")
    })
  )

  it.scoped("a transient query not looked at for the expiry time is deleted at the next minute's check", () =>
    Effect.gen(function* () {
      const node = yield* openNode(new MemoryDisk(), { queryExpiryMillis: 90_000, leadershipCheckMillis: 10_000 })
      const idle = value(yield* node.service.create(continuous("", "fromAll", { mode: "Transient" }), user))
      const watched = value(yield* node.service.create(continuous("", "fromAll", { mode: "Transient" }), user))
      yield* settle(60_000)
      yield* node.service.state(watched, "")
      yield* settle(30_000)
      expect((yield* node.service.statistics(idle))._tag).toBe("Ok")
      yield* settle(30_000)
      expect(yield* node.service.statistics(idle)).toEqual({ _tag: "NotFound" })
      expect(node.fake.runners[0]!.stops).toEqual([false])
      expect((yield* node.service.statistics(watched))._tag).toBe("Ok")
      yield* settle(60_000)
      expect(yield* node.service.statistics(watched)).toEqual({ _tag: "NotFound" })
    })
  )

  it.scoped("restart stops every projection gracefully and starts the subsystem again", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      yield* node.service.create(continuous("p"), admin)
      expect(yield* node.service.restart(admin)).toEqual({ _tag: "Ok", value: undefined })
      expect(node.fake.runners[0]!.stops).toEqual([true])
      expect(node.fake.runners.length).toBe(2)
      expect(value(yield* node.service.statistics("p")).status).toBe("Running")
    })
  )

  it.scoped("read-events goes to the factory; what it cannot read is a bad request", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      const request = { query: {}, position: {}, maxEvents: 10 }
      expect(value(yield* node.service.readEvents(request, user)).events).toEqual([])
      expect(yield* node.service.readEvents({ ...request, maxEvents: -1 }, user)).toEqual({
        _tag: "BadRequest",
        reason: "bad request"
      })
    })
  )
})
