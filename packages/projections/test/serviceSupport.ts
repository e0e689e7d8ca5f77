// The management service's tests: a store on a MemoryDisk, a cluster status the test moves, and a runner
// factory whose runners the test drives (complete, fault, count what they were told).
import { Deferred, Effect, Exit, Scope, TestClock } from "effect"
import { expect } from "vitest"
import { MemoryDisk } from "@vellum/platform"
import type { ClusterStatusService } from "@vellum/cluster"
import {
  defaultStorageConfig,
  make as makeEventStore,
  type EventStoreService,
  type StorageConfig
} from "@vellum/storage"
import type {
  PartitionView,
  ProjectionRunner,
  RunnerOutcome,
  RunnerSpec,
  RunnerStatistics
} from "../src/engine/ProjectionRunner.js"
import type { SourceDefinition } from "../src/language/SourceDefinition.js"
import { makeProjections } from "../src/service/makeProjections.js"
import {
  defaultProjectionsSettings,
  type CreateProjection,
  type ProjectionsService,
  type ProjectionsSettings,
  type Requester
} from "../src/service/Projections.js"
import type { QuerySpec, RunnerFactory } from "../src/service/RunnerFactory.js"
import { noFigures } from "../src/service/projectionStatus.js"
import { definitionWith } from "./languageSupport.js"

const storageConfig: StorageConfig = {
  ...defaultStorageConfig("/db"),
  chunkSize: 64 * 1024,
  memtableMaxEntries: 64,
  preallocateChunks: false
}

export const admin: Requester = { runAs: { name: "admin", roles: ["$admins"] }, operator: true }
export const user: Requester = { runAs: { name: "ouro", roles: [] }, operator: false }

/** A definition the fake "compiles" every script to: `fromAll().when({$any})`, or `fromStreams` of `streams:a,b`. */
export const definitionOf = (query: string): SourceDefinition => {
  const streams = /^streams:(.*)$/.exec(query)?.[1]?.split(",") ?? []
  return definitionWith(
    { allStreams: streams.length === 0, streams },
    { resultStreamName: query === "outputTo" ? "out" : null, definesFold: true }
  )
}

export interface FakeRunner {
  readonly spec: RunnerSpec
  readonly query: QuerySpec
  /** What `stop` was called with, in order. */
  readonly stops: Array<boolean>
  readonly commits: Array<ReadonlyArray<string>>
  status: RunnerStatistics["status"]
  processed: number
  readonly complete: Effect.Effect<void>
  readonly fault: (reason: string) => Effect.Effect<void>
  /** Still running (not stopped, completed or faulted). */
  readonly live: () => boolean
  readonly scopeClosed: () => boolean
}

export interface FakeFactory {
  readonly factory: RunnerFactory
  /** Every runner started, oldest first. */
  readonly runners: Array<FakeRunner>
  readonly prepared: Array<QuerySpec>
  /** What `storedPartition` answers, by projection name. */
  readonly stored: Map<string, PartitionView>
  /** When set, `prepare` waits for it (to look at a projection while it is preparing). */
  gate: Deferred.Deferred<void> | undefined
}

const position = (n: number) => ({ kind: "position", phase: 0, commit: n, prepare: n }) as const

/** Scripts starting `fault:` fault at preparation with the rest as the reason; `startfault:` when starting. */
export const makeFakeFactory = (): FakeFactory => {
  const runners: Array<FakeRunner> = []
  const prepared: Array<QuerySpec> = []
  const stored = new Map<string, PartitionView>()
  const fake: FakeFactory = {
    runners,
    prepared,
    stored,
    gate: undefined,
    factory: {
      prepare: (query) =>
        Effect.gen(function* () {
          prepared.push(query)
          if (fake.gate !== undefined) yield* Deferred.await(fake.gate)
          if (query.query.startsWith("fault:"))
            return yield* Effect.fail({ _tag: "PrepareFault", reason: query.query.slice(6) } as const)
          return definitionOf(query.query)
        }),
      start: (query, spec) =>
        Effect.gen(function* () {
          if (query.query.startsWith("startfault:"))
            return yield* Effect.fail({ _tag: "PrepareFault", reason: query.query.slice(11) } as const)
          const outcome = yield* Deferred.make<RunnerOutcome>()
          let closed = false
          yield* Effect.addFinalizer(() => Effect.sync(() => void (closed = true)))
          const fakeRunner: FakeRunner = {
            spec,
            query,
            stops: [],
            commits: [],
            status: "Running",
            processed: 0,
            complete: Effect.suspend(() => {
              fakeRunner.status = "Stopped"
              return Deferred.succeed(outcome, { _tag: "Completed" })
            }),
            fault: (reason) =>
              Effect.suspend(() => {
                fakeRunner.status = "Faulted"
                return Deferred.succeed(outcome, { _tag: "Faulted", reason })
              }),
            live: () => fakeRunner.status === "Running",
            scopeClosed: () => closed
          }
          const runner: ProjectionRunner = {
            spec,
            statistics: () => ({
              ...noFigures,
              status: fakeRunner.status,
              position: position(fakeRunner.processed),
              eventsProcessedAfterRestart: fakeRunner.processed
            }),
            outcome: Deferred.await(outcome),
            stop: (graceful) =>
              Effect.suspend(() => {
                fakeRunner.stops.push(graceful)
                if (fakeRunner.status === "Running") fakeRunner.status = "Stopped"
                return Deferred.succeed(outcome, { _tag: "Stopped" })
              }),
            partition: (partition) =>
              Effect.succeed({
                state: `{"p":"${partition}","count":${fakeRunner.processed}}`,
                result: fakeRunner.processed > 0 ? `${fakeRunner.processed}` : null,
                position: position(fakeRunner.processed)
              }),
            onCommit: (streams) => void fakeRunner.commits.push(streams)
          }
          runners.push(fakeRunner)
          return runner
        }),
      storedPartition: (spec, partition) =>
        Effect.succeed(stored.get(`${spec.name}/${partition}`) ?? { state: "", result: null, position: undefined }),
      readEvents: (request) =>
        request.maxEvents < 0
          ? Effect.fail({ _tag: "PrepareFault", reason: "bad request" } as const)
          : Effect.succeed({ readerPosition: position(0), events: [] })
    }
  }
  return fake
}

/** A cluster status the test moves: leader in `term`, or not leading. */
export class FakeCluster {
  leader = true
  term = 0
  readonly status = {
    clusterSize: 1,
    isReadOnlyReplica: false,
    state: () => (this.leader ? "Leader" : "Follower"),
    leadingTerm: () => (this.leader ? this.term : undefined)
  } as unknown as ClusterStatusService
}

export const settle = (millis = 300) =>
  Effect.gen(function* () {
    for (let i = 0; i < 30; i++) yield* Effect.yieldNow()
    yield* TestClock.adjust(millis)
    for (let i = 0; i < 30; i++) yield* Effect.yieldNow()
  })

export const openStore = (disk: MemoryDisk, scope: Scope.Scope) =>
  makeEventStore(storageConfig).pipe(Effect.provide(MemoryDisk.layer(disk)), Scope.extend(scope), Effect.orDie)

export interface Node {
  readonly store: EventStoreService
  readonly service: ProjectionsService
  readonly fake: FakeFactory
  readonly cluster: FakeCluster
  readonly close: Effect.Effect<void>
}

/** A store and the service over it on `disk`, leading; `close` ends both (a node's restart). */
export const openNode = (
  disk: MemoryDisk = new MemoryDisk(),
  settings: Partial<ProjectionsSettings> = {},
  fake: FakeFactory = makeFakeFactory()
): Effect.Effect<Node> =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const store = yield* openStore(disk, scope)
    const cluster = new FakeCluster()
    const service = yield* makeProjections(
      store,
      cluster.status,
      { ...defaultProjectionsSettings, runProjections: "All", ...settings },
      fake.factory
    ).pipe(Scope.extend(scope))
    yield* settle()
    return { store, service, fake, cluster, close: Scope.close(scope, Exit.void) }
  })

export const continuous = (
  name: string,
  query = "fromAll",
  changes: Partial<CreateProjection> = {}
): CreateProjection => ({
  mode: "Continuous",
  name,
  query,
  handlerType: "JS",
  enabled: true,
  emitEnabled: false,
  checkpointsEnabled: true,
  trackEmittedStreams: false,
  ...changes
})

/** The events of a stream: type and data text. */
export const eventsOf = (store: EventStoreService, stream: string) =>
  Effect.map(Effect.orDie(store.readStreamForward(stream, 0, 1000)), (read) =>
    read._tag === "Success"
      ? read.events.map((e) => ({ type: e.event!.eventType, data: e.event!.data.toString("utf8") }))
      : []
  )

/** The JSON of every definition written for `name`. */
export const definitionsOf = (store: EventStoreService, name: string) =>
  Effect.map(eventsOf(store, `$projections-${name}`), (events) =>
    events.map((e) => {
      expect(e.type).toBe("$ProjectionUpdated")
      return JSON.parse(e.data) as Record<string, unknown>
    })
  )

export const value = <A>(outcome: { readonly _tag: string; readonly value?: A }): A => {
  if (outcome._tag !== "Ok") throw new Error(`expected Ok, got ${JSON.stringify(outcome)}`)
  return outcome.value as A
}

/** Appends one event as someone else than the service would (a projection's own output, a foreign write). */
export const appendRaw = (store: EventStoreService, stream: string, expected: number, type: string, data: string) =>
  store.append(stream, expected, [
    {
      eventId: crypto.randomUUID(),
      eventType: type,
      isJson: data.startsWith("{") || data.startsWith("["),
      data: Buffer.from(data),
      metadata: Buffer.from("")
    }
  ])
