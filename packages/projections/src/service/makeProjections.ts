/**
 * The projections of a node that leads. When the node becomes leader (and everything it holds is committed,
 * so no acknowledged change is missed) the service reads the registry and every definition, creates the
 * system projections that are missing, and runs what is enabled; when it stops leading, or leads again in a
 * new term, every runner is stopped without writing anything more (another leader may have moved on).
 * Management commands run one at a time, each answering once its transition is done; each definition write
 * names the version it follows, as the registry writes do.
 */
import { Clock, Effect, type Scope } from "effect"
import type { ClusterStatusService } from "@vellum/cluster"
import { randomUuid, type AppendError, type EventStoreService } from "@vellum/storage"
import {
  emptyDefinition,
  projectionCreatedEvent,
  projectionDeletedEvent,
  projectionIdOf,
  projectionSubsystemVersion,
  registryInitializedEvent,
  type DefinitionRecord
} from "../persisted/definitionRecord.js"
import { registryStream } from "../persisted/streamNames.js"
import { isSystemProjectionName, SystemProjections } from "../system/index.js"
import {
  appendEvents,
  deleteProjectionStreams,
  loadRegistry,
  nextDefinitionVersion,
  readDefinition,
  deletingDefinition,
  isMultiStream,
  streamsToDelete,
  writeDefinition
} from "./definitionStreams.js"
import { makeLifecycle, newManaged, type Managed } from "./projectionLifecycle.js"
import type {
  CreateProjection,
  ProjectionCommand,
  ProjectionsOutcome,
  ProjectionsService,
  ProjectionsSettings,
  Requester
} from "./Projections.js"
import type { RunnerFactory } from "./RunnerFactory.js"
import { notRunningService } from "./notRunningService.js"
import { configOf, partitionOf, queryOf, statisticsOf } from "./projectionViews.js"
import { systemDefinitionRecord } from "./systemDefinitions.js"

type Outcome<A> = ProjectionsOutcome<A>

const notReady: Outcome<never> = { _tag: "NotReady", reason: "Projections are not ready: this node does not lead" }
const notFound: Outcome<never> = { _tag: "NotFound" }
const notAuthorized: Outcome<never> = { _tag: "NotAuthorized" }
const ok = <A>(value: A): Outcome<A> => ({ _tag: "Ok", value })
const failed = (reason: string): Outcome<never> => ({ _tag: "OperationFailed", reason })

/** How often transient queries are looked at for expiry, as the reference does. */
const expiryCheckMillis = 60_000

interface Leading {
  readonly term: number
  /** The registry's last event number, the expected version of its next write. */
  registryVersion: number
  /** Every name the registry holds (a registered projection whose definition is unreadable keeps its name). */
  readonly registered: Set<string>
  /** Creation order. */
  readonly projections: Map<string, Managed>
}

/** A changed definition: the next version. */
const bump = (record: DefinitionRecord, changes: Partial<DefinitionRecord>): DefinitionRecord => ({
  ...record,
  ...changes,
  version: (record.version ?? 0) + 1,
  projectionSubsystemVersion
})

export const makeProjections = (
  store: EventStoreService,
  cluster: ClusterStatusService,
  settings: ProjectionsSettings,
  factory: RunnerFactory
): Effect.Effect<ProjectionsService, never, Scope.Scope> =>
  Effect.gen(function* () {
    if (settings.runProjections === "None") return notRunningService
    const writer = store.leaderOnly ?? store
    const lock = yield* Effect.makeSemaphore(1)
    const exclusively = lock.withPermits(1)
    let leading: Leading | undefined
    /** System projections this node enabled for `--start-standard-projections` (once each, as the reference). */
    const autoEnabled = new Set<string>()
    const lifecycle = makeLifecycle(
      factory,
      settings,
      (name) => settings.runProjections === "All" || name.startsWith("$")
    )

    const stopAll = (graceful: boolean) =>
      Effect.gen(function* () {
        const current = leading
        leading = undefined
        if (current === undefined) return
        yield* Effect.forEach(current.projections.values(), (m) => lifecycle.discard(m, graceful), { discard: true })
        yield* Effect.logInfo(`projections stopped (${current.projections.size})`)
      })

    /**
     * A registry or definition write that failed: this node no longer leads, another leader wrote meanwhile,
     * or the write's fate is unknown. What the log holds is then the truth: everything stops, and the next
     * leadership check loads it again if this node still leads.
     */
    const failure = (error: AppendError): Effect.Effect<Outcome<never>> =>
      Effect.as(stopAll(false), error._tag === "NotLeader" ? notReady : failed(error.message))

    /** Writes the definition (a transient query's stays in memory); undefined when written. */
    const persist = (m: Managed, record: DefinitionRecord): Effect.Effect<Outcome<never> | undefined> =>
      Effect.gen(function* () {
        if (record.mode !== "Transient") {
          const written = yield* Effect.either(writeDefinition(writer, m.name, record))
          if (written._tag === "Left") return yield* failure(written.left)
        }
        m.record = record
        return undefined
      })

    /**
     * A command's transition: stop the runner if asked, prepare the new definition when the projection is
     * to run (or has no source definition yet), write it, then run the projection or load it stopped.
     */
    const transition = (
      m: Managed,
      next: DefinitionRecord,
      stop: "graceful" | "abort",
      prepare: boolean
    ): Effect.Effect<Outcome<string>> =>
      Effect.gen(function* () {
        yield* lifecycle.discard(m, stop === "graceful")
        const record =
          prepare || lifecycle.shouldRun(m, next) || m.definition === undefined
            ? yield* lifecycle.prepare(m, next)
            : next
        const refused = yield* persist(m, record)
        if (refused !== undefined) return refused
        yield* lifecycle.run(m)
        return ok(m.name)
      })

    const appendRegistry = (current: Leading, events: Parameters<typeof appendEvents>[3]) =>
      Effect.map(appendEvents(writer, registryStream, current.registryVersion, events), (written) => {
        current.registryVersion = written.lastEventNumber
        return written
      })

    /** Registers and prepares a new projection, writes its first definition, and runs it. */
    const createRegistered = (
      current: Leading,
      names: ReadonlyArray<string>,
      recordOf: (name: string, version: number) => DefinitionRecord
    ): Effect.Effect<Outcome<string>> =>
      Effect.gen(function* () {
        const registered = yield* Effect.either(appendRegistry(current, names.map(projectionCreatedEvent)))
        if (registered._tag === "Left") return yield* failure(registered.left)
        for (const name of names) current.registered.add(name)
        const now = yield* Clock.currentTimeMillis
        for (const [index, name] of names.entries()) {
          const version = yield* Effect.orElseSucceed(nextDefinitionVersion(store, name), () => 0)
          const draft = recordOf(name, version)
          const m = newManaged(name, projectionIdOf(registered.right.firstEventNumber + index), draft, now)
          m.state = "Preparing"
          current.projections.set(name, m)
          const record = yield* lifecycle.prepare(m, draft)
          const refused = yield* persist(m, record)
          if (refused !== undefined) {
            current.projections.delete(name)
            return refused
          }
          yield* lifecycle.run(m)
        }
        return ok(names[0] ?? "")
      })

    /** Removes what the projection's deleting definition asks for, then deregisters it; undefined when done. */
    const finishDeletion = (current: Leading, m: Managed): Effect.Effect<Outcome<never> | undefined> =>
      Effect.gen(function* () {
        if (m.record.mode !== "Transient") {
          const what = streamsToDelete(m.record, isMultiStream(m))
          const removed = yield* Effect.either(deleteProjectionStreams(store, writer, m.name, what))
          if (removed._tag === "Left")
            yield* Effect.logWarning(`projection ${m.name}: its streams were not deleted: ${removed.left.message}`)
          const deregistered = yield* Effect.either(appendRegistry(current, [projectionDeletedEvent(m.name)]))
          if (deregistered._tag === "Left") return yield* failure(deregistered.left)
        }
        current.registered.delete(m.name)
        current.projections.delete(m.name)
        return undefined
      })

    const enable = (m: Managed): Effect.Effect<Outcome<string>> =>
      m.record.enabled && m.state !== "Completed" && m.state !== "Faulted" && m.state !== "Stopped"
        ? Effect.succeed(ok(m.name))
        : transition(m, bump(m.record, { enabled: true }), "abort", true)

    /** Everything this node holds is committed (the new leader's own epoch included): reads see every ack. */
    const caughtUp = Effect.map(store.committedPosition, (committed) => committed >= store.stats().writerPosition)

    const startLeading = (term: number) =>
      Effect.gen(function* () {
        const registry = yield* Effect.either(loadRegistry(store))
        if (registry._tag === "Left") {
          yield* Effect.logWarning(`projections: the registry is not readable yet: ${registry.left.message}`)
          return
        }
        const current: Leading = {
          term,
          registryVersion: registry.right.version,
          registered: new Set(registry.right.projections.keys()),
          projections: new Map()
        }
        // Leading before the first runner starts, so no commit after its first read goes unheard.
        leading = current
        const now = yield* Clock.currentTimeMillis
        for (const [name, id] of registry.right.projections) {
          const stored = yield* Effect.either(readDefinition(store, name))
          if (stored._tag === "Left" || stored.right === undefined) {
            yield* Effect.logWarning(`projections: ${name} is registered but has no readable definition`)
            // A creation cut short between its registration and its first definition (a crash): it was never
            // answered, so it counts as not created — a system projection is created again below, and the name
            // is free for a user's create. (A read that failed keeps the name: the definition may be there.)
            if (stored._tag === "Right") current.registered.delete(name)
            continue
          }
          const { record, eventNumber } = stored.right
          const m = newManaged(
            name,
            id,
            {
              ...record,
              // An old definition without a version is at its event number, in no epoch yet.
              version: Math.max(record.version ?? eventNumber, eventNumber),
              epoch: record.version === undefined ? -1 : record.epoch,
              runAs: record.runAs ?? { name: "$system", roles: [] }
            },
            now
          )
          current.projections.set(name, m)
          // A deletion cut short (the node stopped, or lost the lead) is finished, as the reference does.
          if (m.record.deleting) {
            if ((yield* finishDeletion(current, m)) !== undefined) return
            continue
          }
          if (lifecycle.shouldRun(m, m.record) || m.definition === undefined)
            m.record = yield* lifecycle.prepare(m, m.record)
          yield* lifecycle.run(m)
        }
        if (current.registryVersion < 0) {
          const initialized = yield* Effect.either(appendRegistry(current, [registryInitializedEvent]))
          if (initialized._tag === "Left") return yield* Effect.asVoid(failure(initialized.left))
        }
        const missing = SystemProjections.filter((p) => !current.registered.has(p.name))
        if (missing.length > 0) {
          const created = yield* createRegistered(
            current,
            missing.map((p) => p.name),
            (name, version) =>
              systemDefinitionRecord(
                missing.find((p) => p.name === name)!,
                version
              )
          )
          if (created._tag !== "Ok") return
        }
        if (settings.startStandardProjections)
          for (const m of current.projections.values()) {
            if (!isSystemProjectionName(m.name) || m.record.enabled || autoEnabled.has(m.name)) continue
            autoEnabled.add(m.name)
            if ((yield* enable(m))._tag !== "Ok") return
          }
        yield* Effect.logInfo(`projections started (${current.projections.size})`)
      })

    const checkLeadership = exclusively(
      Effect.gen(function* () {
        const term = cluster.state() === "Leader" ? cluster.leadingTerm() : undefined
        if (term === undefined) return yield* stopAll(false)
        if (leading !== undefined && leading.term === term) return
        yield* stopAll(false)
        if (yield* caughtUp) yield* startLeading(term)
      })
    )

    const expireQueries = exclusively(
      Effect.gen(function* () {
        const current = leading
        if (current === undefined) return
        const now = yield* Clock.currentTimeMillis
        for (const m of [...current.projections.values()]) {
          if (m.record.mode !== "Transient" || m.lastAccessed + settings.queryExpiryMillis >= now) continue
          yield* Effect.logInfo(`projections: transient query ${m.name} expired`)
          yield* lifecycle.discard(m, false)
          current.projections.delete(m.name)
        }
      })
    )

    // Every commit, to the running projections (each decides whether its source was touched).
    yield* store.onCommit((notice) => {
      if (leading === undefined) return
      for (const m of leading.projections.values()) m.active?.runner.onCommit(notice.streams)
    })
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(checkLeadership, Effect.sleep(settings.leadershipCheckMillis)))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(expiryCheckMillis), expireQueries)))
    yield* Effect.addFinalizer(() => exclusively(stopAll(true)))

    const touch = (m: Managed) => Effect.map(Clock.currentTimeMillis, (now) => void (m.lastAccessed = now))

    /**
     * One projection's call: `NotReady` off the lead, `NotFound` for an unknown name, `NotAuthorized` for a
     * change (`by` given) of a one-time or continuous projection by someone not an operator.
     */
    const withProjection = <A>(
      name: string,
      by: Requester | undefined,
      run: (m: Managed, current: Leading) => Effect.Effect<Outcome<A>>
    ): Effect.Effect<Outcome<A>> =>
      exclusively(
        Effect.suspend(() => {
          const current = leading
          if (current === undefined) return Effect.succeed(notReady)
          const m = current.projections.get(name)
          if (m === undefined) return Effect.succeed(notFound)
          if (by !== undefined && m.record.mode !== "Transient" && !by.operator) return Effect.succeed(notAuthorized)
          return Effect.zipRight(touch(m), run(m, current))
        })
      )

    const create = (request: CreateProjection, by: Requester): Effect.Effect<Outcome<string>> =>
      exclusively(
        Effect.gen(function* () {
          const current = leading
          if (current === undefined) return notReady
          if (request.mode !== "Transient" && !by.operator) return notAuthorized
          const name = request.name !== "" ? request.name : request.mode === "Continuous" ? "" : yield* randomUuid
          if (name === "") return failed("Projection name is required")
          if (current.registered.has(name) || current.projections.has(name))
            return { _tag: "Conflict", reason: `Duplicate projection names : ${name}` } as const
          const checkpoints =
            request.mode === "Continuous" || (request.mode === "OneTime" && request.checkpointsEnabled)
          const emit = request.mode !== "Transient" && request.emitEnabled
          // Refused before anything is written (the reference registers the name first, leaving it unusable).
          if (emit && !checkpoints) return failed("Emit requires checkpoints")
          const recordOf = (version: number): DefinitionRecord => ({
            ...emptyDefinition,
            handlerType: request.handlerType,
            query: request.query,
            mode: request.mode,
            enabled: request.enabled,
            emitEnabled: emit,
            checkpointsDisabled: !checkpoints,
            trackEmittedStreams: emit && request.trackEmittedStreams,
            epoch: -1,
            version,
            runAs: by.runAs,
            projectionSubsystemVersion
          })
          if (request.mode !== "Transient") return yield* createRegistered(current, [name], (_, v) => recordOf(v))
          const m = newManaged(name, 0, recordOf(0), yield* Clock.currentTimeMillis)
          current.projections.set(name, m)
          m.record = yield* lifecycle.prepare(m, m.record)
          yield* lifecycle.run(m)
          return ok(name)
        })
      )

    const command = (m: Managed, which: ProjectionCommand): Effect.Effect<Outcome<string>> => {
      switch (which) {
        case "enable":
          return enable(m)
        case "disable":
          return transition(m, bump(m.record, { enabled: false }), "graceful", false)
        case "abort":
          return transition(m, bump(m.record, { enabled: false }), "abort", false)
        case "reset": {
          const version = (m.record.version ?? 0) + 1
          return transition(m, bump(m.record, { epoch: version }), "graceful", true)
        }
      }
    }

    const isStoppedOrFaulted = (m: Managed) =>
      m.state === "Stopped" || m.state === "Faulted" || m.record.mode === "Transient"

    const service: ProjectionsService = {
      enabled: true,
      list: (filter) =>
        Effect.sync(() => {
          if (leading === undefined) return notReady
          const chosen = [...leading.projections.values()].filter(
            (m) =>
              filter === "Any" ||
              m.record.mode === filter ||
              (filter === "AllNonTransient" && m.record.mode !== "Transient")
          )
          return ok(chosen.map(statisticsOf))
        }),
      statistics: (name) =>
        Effect.sync(() => {
          if (leading === undefined) return notReady
          const m = leading.projections.get(name)
          return m === undefined ? notFound : ok(statisticsOf(m))
        }),
      create,
      command: (name, which, by) => withProjection(name, by, (m) => command(m, which)),
      query: (name) => withProjection(name, undefined, (m) => Effect.succeed(ok(queryOf(m)))),
      updateQuery: (name, query, emitEnabled, by) =>
        withProjection(name, by, (m) => {
          const version = (m.record.version ?? 0) + 1
          // A completed projection given new code starts again in a new epoch.
          const epoch = m.state === "Completed" ? { epoch: version } : {}
          const next = bump(m.record, { query, emitEnabled: emitEnabled ?? m.record.emitEnabled, ...epoch })
          return transition(m, next, "graceful", true)
        }),
      config: (name, by) => withProjection(name, by, (m) => Effect.succeed(ok(configOf(m)))),
      updateConfig: (name, config, by) =>
        withProjection(name, by, (m) =>
          Effect.gen(function* () {
            const timeout = config.projectionExecutionTimeout
            if (timeout !== null && timeout <= 0)
              return {
                _tag: "BadRequest",
                reason: `projectionExecutionTimeout should be positive. Found : ${timeout}`
              } as const
            if (!isStoppedOrFaulted(m))
              return failed("Cannot update the config of a projection that hasn't been stopped or faulted.")
            const refused = yield* persist(
              m,
              bump(m.record, {
                ...config,
                projectionExecutionTimeout: timeout ?? undefined
              })
            )
            return refused ?? ok(m.name)
          })
        ),
      delete: (name, options, by) =>
        withProjection(name, by, (m, current) =>
          Effect.gen(function* () {
            if (isSystemProjectionName(m.name))
              return failed("We currently don't allow for the deletion of System Projections.")
            if (!isStoppedOrFaulted(m)) return failed("Cannot delete a projection that hasn't been stopped or faulted.")
            yield* lifecycle.discard(m, false)
            m.state = "Deleting"
            const refused = yield* persist(m, bump(deletingDefinition(m.record, options, isMultiStream(m)), {}))
            return refused ?? (yield* finishDeletion(current, m)) ?? ok(m.name)
          })
        ),
      state: (name, partition) =>
        withProjection(name, undefined, (m) =>
          Effect.map(partitionOf(m, partition, factory, lifecycle), (texts) => ok(texts.state))
        ),
      result: (name, partition) =>
        withProjection(name, undefined, (m) =>
          Effect.map(partitionOf(m, partition, factory, lifecycle), (texts) => ok(texts.result))
        ),
      readEvents: (request) =>
        Effect.suspend(() =>
          leading === undefined
            ? Effect.succeed(notReady)
            : Effect.match(factory.readEvents(request), {
                onFailure: (fault) => ({ _tag: "BadRequest", reason: fault.reason }) as const,
                onSuccess: ok
              })
        ),
      restart: (by) =>
        exclusively(
          Effect.gen(function* () {
            const current = leading
            if (current === undefined) return notReady
            if (!by.operator) return notAuthorized
            yield* stopAll(true)
            yield* startLeading(current.term)
            return leading === undefined ? failed("The projections could not be loaded") : ok(undefined)
          })
        ),
      snapshot: () => (leading === undefined ? [] : [...leading.projections.values()].map(statisticsOf))
    }
    return service
  })
