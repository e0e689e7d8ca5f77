// The management service's records: the registry, the definitions it writes for each change, and the specs
// it starts runners with (over a real store on a memory disk and a fake runner factory).
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { sourceDefinitionJson, sourceDefinitionOf } from "../src/service/sourceDefinitionJson.js"
import { definitionWith } from "./languageSupport.js"
import {
  admin,
  definitionOf,
  continuous,
  definitionsOf,
  eventsOf,
  makeFakeFactory,
  openNode,
  settle,
  user,
  value
} from "./serviceSupport.js"

const systemNames = ["$streams", "$stream_by_category", "$by_category", "$by_event_type", "$by_correlation_id"]

describe("the projections registry and definitions", () => {
  it.scoped("a first start registers the five system projections, disabled and stopped", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      expect(yield* eventsOf(node.store, "$projections-$all")).toEqual([
        { type: "$ProjectionsInitialized", data: "" },
        ...systemNames.map((name) => ({ type: "$ProjectionCreated", data: name }))
      ])
      const [byCategory] = yield* definitionsOf(node.store, "$by_category")
      expect(byCategory).toEqual({
        handlerType: "native:EventStore.Projections.Core.Standard.CategorizeEventsByStreamPath",
        query: "first\r\n-",
        mode: "Continuous",
        sourceDefinition: {
          allEvents: true,
          allStreams: true,
          categories: [],
          events: [],
          streams: [],
          options: { definesFold: true }
        },
        emitEnabled: true,
        checkpointsDisabled: false,
        trackEmittedStreams: false,
        epoch: -1,
        version: 0,
        runAs: { name: "$system", roles: [] },
        checkpointHandledThreshold: 4000,
        checkpointUnhandledBytesThreshold: 10000000,
        pendingEventsThreshold: 5000,
        maxWriteBatchLength: 500,
        projectionSubsystemVersion: 4
      })
      const list = value(yield* node.service.list("Continuous"))
      expect(list.map((p) => [p.name, p.status, p.enabled])).toEqual(systemNames.map((n) => [n, "Stopped", false]))
      expect(node.fake.runners).toEqual([])
      // The system projections are prepared as what they are: system, under their native handler type.
      expect(node.fake.prepared.map((q) => [q.name, q.system, q.handlerType.startsWith("native:")])).toEqual(
        systemNames.map((n) => [n, true, true])
      )
    })
  )

  it.scoped("creating a continuous projection registers it, writes its definition byte for byte, and runs it", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      expect(yield* node.service.create(continuous("p"), admin)).toEqual({ _tag: "Ok", value: "p" })
      const registry = yield* eventsOf(node.store, "$projections-$all")
      expect(registry[6]).toEqual({ type: "$ProjectionCreated", data: "p" })
      const [text] = (yield* eventsOf(node.store, "$projections-p")).map((e) => e.data)
      expect(text).toBe(
        [
          "{",
          '  "handlerType": "JS",',
          '  "query": "fromAll",',
          '  "mode": "Continuous",',
          '  "enabled": true,',
          '  "sourceDefinition": {',
          '    "allEvents": true,',
          '    "allStreams": true,',
          '    "categories": [],',
          '    "events": [],',
          '    "streams": [],',
          '    "options": {',
          '      "definesFold": true',
          "    }",
          "  },",
          '  "emitEnabled": false,',
          '  "checkpointsDisabled": false,',
          '  "trackEmittedStreams": false,',
          '  "epoch": -1,',
          '  "version": 0,',
          '  "runAs": {',
          '    "name": "admin",',
          '    "roles": [',
          '      "$admins"',
          "    ]",
          "  },",
          '  "checkpointHandledThreshold": 4000,',
          '  "checkpointUnhandledBytesThreshold": 10000000,',
          '  "pendingEventsThreshold": 5000,',
          '  "maxWriteBatchLength": 500,',
          '  "projectionSubsystemVersion": 4',
          "}"
        ].join("\n")
      )
      const [runner] = node.fake.runners
      expect(runner!.spec).toMatchObject({
        name: "p",
        version: { projectionId: 6, epoch: -1, version: 0 },
        mode: "Continuous",
        emitEnabled: false,
        checkpointsEnabled: true,
        stopOnEof: false,
        system: false,
        thresholds: {
          checkpointHandledThreshold: 4000,
          checkpointAfterMs: 0,
          checkpointUnhandledBytesThreshold: 10_000_000,
          pendingEventsThreshold: 5000,
          maxWriteBatchLength: 500,
          maxAllowedWritesInFlight: 0
        }
      })
      expect(runner!.query).toMatchObject({ query: "fromAll", handlerType: "JS", executionTimeoutMillis: 250 })
      const stats = value(yield* node.service.statistics("p"))
      expect([stats.status, stats.stateReason, stats.enabled, stats.version, stats.epoch]).toEqual([
        "Running",
        "",
        true,
        0,
        -1
      ])
    })
  )

  it.scoped(
    "a creation is refused, with nothing written, without a name, under a taken name, or by a non-operator",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode()
        yield* node.service.create(continuous("p"), admin)
        const before = (yield* eventsOf(node.store, "$projections-$all")).length
        expect(yield* node.service.create(continuous(""), admin)).toEqual({
          _tag: "OperationFailed",
          reason: "Projection name is required"
        })
        expect(yield* node.service.create(continuous("p"), admin)).toEqual({
          _tag: "Conflict",
          reason: "Duplicate projection names : p"
        })
        expect(yield* node.service.create(continuous("$by_category"), admin)).toMatchObject({ _tag: "Conflict" })
        expect(yield* node.service.create(continuous("q"), user)).toEqual({ _tag: "NotAuthorized" })
        expect(
          yield* node.service.create(
            continuous("q", "fromAll", { mode: "OneTime", emitEnabled: true, checkpointsEnabled: false }),
            admin
          )
        ).toEqual({ _tag: "OperationFailed", reason: "Emit requires checkpoints" })
        expect((yield* eventsOf(node.store, "$projections-$all")).length).toBe(before)
        expect(yield* eventsOf(node.store, "$projections-q")).toEqual([])
      })
  )

  it.scoped("one-time and transient projections without a name get a GUID; a query runs without checkpoints", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      const oneTime = value(
        yield* node.service.create(continuous("", "fromAll", { mode: "OneTime", checkpointsEnabled: false }), admin)
      )
      const transient = value(
        yield* node.service.create(continuous("", "fromAll", { mode: "Transient", checkpointsEnabled: true }), user)
      )
      expect(oneTime).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(transient).toMatch(/^[0-9a-f-]{36}$/)
      expect(transient).not.toBe(oneTime)
      const [first, second] = node.fake.runners
      expect(first!.spec).toMatchObject({
        mode: "OneTime",
        checkpointsEnabled: false,
        stopOnEof: true,
        thresholds: { checkpointHandledThreshold: 0, checkpointAfterMs: 0, checkpointUnhandledBytesThreshold: 0 }
      })
      // A transient query is neither registered nor written, and runs as projection 0.
      expect(second!.spec).toMatchObject({ mode: "Transient", checkpointsEnabled: false, version: { projectionId: 0 } })
      const registry = (yield* eventsOf(node.store, "$projections-$all")).map((e) => e.data)
      expect(registry).toContain(oneTime)
      expect(registry).not.toContain(transient)
      expect(yield* eventsOf(node.store, `$projections-${transient}`)).toEqual([])
      expect(value(yield* node.service.list("Transient")).map((p) => p.name)).toEqual([transient])
      expect(value(yield* node.service.list("AllNonTransient")).map((p) => p.name)).toContain(oneTime)
      expect(value(yield* node.service.list("AllNonTransient")).map((p) => p.name)).not.toContain(transient)
    })
  )

  it.scoped("a script that faults is created all the same, Faulted, its definition written without a source", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      expect(yield* node.service.create(continuous("bad", "fault:Unexpected token"), admin)).toEqual({
        _tag: "Ok",
        value: "bad"
      })
      const stats = value(yield* node.service.statistics("bad"))
      expect([stats.status, stats.stateReason, stats.version]).toEqual(["Faulted", "Unexpected token", -1])
      const [definition] = yield* definitionsOf(node.store, "bad")
      expect(definition).toMatchObject({ query: "fault:Unexpected token", enabled: true, version: 0 })
      expect(definition).not.toHaveProperty("sourceDefinition")
      expect(node.fake.runners).toEqual([])
      // A fault when starting (after a good preparation) also leaves it Faulted.
      yield* node.service.create(continuous("late", "startfault:boom"), admin)
      expect(value(yield* node.service.statistics("late"))).toMatchObject({ status: "Faulted", stateReason: "boom" })
      expect(value(yield* node.service.query("bad"))).toMatchObject({ definition: undefined, resultStreamName: "" })
    })
  )

  it.scoped("query and config show the definition; the config is written whole once the projection is stopped", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      yield* node.service.create(continuous("p", "outputTo", { emitEnabled: true, trackEmittedStreams: true }), admin)
      expect(value(yield* node.service.query("p"))).toEqual({
        name: "p",
        query: "outputTo",
        mode: "Continuous",
        emitEnabled: true,
        trackEmittedStreams: true,
        checkpointsEnabled: true,
        definition: {
          allEvents: true,
          allStreams: true,
          categories: [],
          events: [],
          streams: [],
          options: { resultStreamName: "out", definesFold: true }
        },
        resultStreamName: "out"
      })
      expect(value(yield* node.service.statistics("p")).resultStreamName).toBe("out")
      const config = value(yield* node.service.config("p", admin))
      expect(config).toEqual({
        emitEnabled: true,
        trackEmittedStreams: true,
        checkpointAfterMs: 0,
        checkpointHandledThreshold: 4000,
        checkpointUnhandledBytesThreshold: 10_000_000,
        pendingEventsThreshold: 5000,
        maxWriteBatchLength: 500,
        maxAllowedWritesInFlight: 0,
        projectionExecutionTimeout: null
      })
      const changed = { ...config, checkpointHandledThreshold: 10, projectionExecutionTimeout: 900 }
      expect(yield* node.service.updateConfig("p", changed, admin)).toEqual({
        _tag: "OperationFailed",
        reason: "Cannot update the config of a projection that hasn't been stopped or faulted."
      })
      expect(yield* node.service.updateConfig("p", { ...changed, projectionExecutionTimeout: 0 }, admin)).toEqual({
        _tag: "BadRequest",
        reason: "projectionExecutionTimeout should be positive. Found : 0"
      })
      expect(yield* node.service.config("p", user)).toEqual({ _tag: "NotAuthorized" })
      yield* node.service.command("p", "disable", admin)
      expect(yield* node.service.updateConfig("p", changed, admin)).toEqual({ _tag: "Ok", value: "p" })
      expect(value(yield* node.service.config("p", admin))).toEqual(changed)
      const definitions = yield* definitionsOf(node.store, "p")
      expect(definitions.map((d) => d["version"])).toEqual([0, 1, 2])
      expect(definitions[2]).toMatchObject({ checkpointHandledThreshold: 10, projectionExecutionTimeout: 900 })
      // The new config is what the projection runs with next.
      yield* node.service.command("p", "enable", admin)
      const latest = node.fake.runners.at(-1)!
      expect(latest.spec.thresholds.checkpointHandledThreshold).toBe(10)
      expect(latest.query.executionTimeoutMillis).toBe(900)
      expect(yield* settle(0)).toBeUndefined()
    })
  )

  it.scoped("a restarted node loads every definition again: ids, versions, enabled ones run, others stay stopped", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      const first = yield* openNode(disk)
      yield* first.service.create(continuous("on"), admin)
      yield* first.service.create(continuous("off", "fromAll", { enabled: false }), admin)
      yield* first.service.command("on", "reset", admin)
      const registry = (yield* eventsOf(first.store, "$projections-$all")).length
      yield* first.close
      const fake = makeFakeFactory()
      fake.stored.set("off/", {
        state: '{"n":1}',
        result: null,
        position: { kind: "position", phase: 0, commit: 9, prepare: 9 }
      })
      const second = yield* openNode(disk, {}, fake)
      // Nothing more registered: the system projections exist already.
      expect((yield* eventsOf(second.store, "$projections-$all")).length).toBe(registry)
      expect(fake.runners.map((r) => [r.spec.name, r.spec.version])).toEqual([
        ["on", { projectionId: 6, epoch: 1, version: 1 }]
      ])
      const off = value(yield* second.service.statistics("off"))
      expect([off.status, off.version, off.runner.position]).toEqual([
        "Stopped",
        0,
        { kind: "position", phase: 0, commit: 9, prepare: 9 }
      ])
      expect(value(yield* second.service.state("off", ""))).toEqual({
        text: '{"n":1}',
        position: { kind: "position", phase: 0, commit: 9, prepare: 9 }
      })
    })
  )

  it.scoped("a name registered without a definition (a creation cut short by a crash) counts as not created", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      const first = yield* openNode(disk)
      // The registry event of a creation reached the log; the crash came before its first definition.
      yield* first.store.append("$projections-$all", -2, [
        {
          eventId: "00000000-0000-4000-8000-0000000000c1",
          eventType: "$ProjectionCreated",
          isJson: false,
          data: Buffer.from("ghost"),
          metadata: Buffer.alloc(0)
        }
      ])
      yield* first.close
      const second = yield* openNode(disk)
      expect(yield* second.service.create(continuous("ghost"), admin)).toEqual({ _tag: "Ok", value: "ghost" })
      const [ghost] = yield* definitionsOf(second.store, "ghost")
      expect(ghost?.mode).toBe("Continuous")
    })
  )

  it.effect("a source definition is kept with defaults left out and read back whole", () =>
    Effect.sync(() => {
      const definition = definitionWith(
        { allEvents: false, byCustomPartitions: true, events: ["a", "b"], streams: ["s1", "s2"] },
        { resultStreamName: "r", partitionResultStreamNamePattern: "r-{0}", reorderEvents: true, processingLag: 60 }
      )
      const json = sourceDefinitionJson(definition)
      expect(JSON.stringify(json)).toBe(
        '{"byCustomPartitions":true,"categories":[],"events":["a","b"],"streams":["s1","s2"],' +
          '"options":{"resultStreamName":"r","partitionResultStreamNamePattern":"r-{0}","reorderEvents":true,"processingLag":60}}'
      )
      expect(sourceDefinitionOf(json)).toEqual(definition)
      expect(sourceDefinitionOf(JSON.parse(JSON.stringify(sourceDefinitionJson(definitionOf("fromAll")))))).toEqual(
        definitionOf("fromAll")
      )
      expect(sourceDefinitionOf("not an object")).toBeUndefined()
    })
  )
})
