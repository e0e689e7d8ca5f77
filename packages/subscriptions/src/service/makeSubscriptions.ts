/**
 * The groups of a node that leads. The service loads the definitions record when the node becomes leader
 * (once everything it holds is committed, so no acknowledged create is missed), starts a runner per group,
 * and stops them all when the node stops leading or leads again in a new term (another leader may have moved
 * checkpoints meanwhile). Management commands run one at a time; each writes the whole definitions record at
 * the version it last saw, as the reference does.
 */
import { Clock, Effect, Queue, Ref, type Scope } from "effect"
import type { ClusterStatusService } from "@vellum/cluster"
import { originalEvent, type AppendError, type EventStoreService } from "@vellum/storage"
import { AllStream, type GroupDefinition } from "../persisted/groupDefinitions.js"
import { groupKey } from "../persisted/streamNames.js"
import {
  deleteGroupStreams,
  loadDefinitions,
  positionTextOf,
  saveDefinitions,
  writeCheckpoint
} from "./groupStreams.js"
import { GroupRunner, startOf, type RunnerDeps } from "./GroupRunner.js"
import type { GroupInfo, GroupSpec, ManageResult, ReadMessagesResult, SubscriptionsService } from "./Subscriptions.js"

export interface SubscriptionsSettings {
  /** How often groups see the clock (deadlines, checkpoints). */
  readonly tickMillis: number
  /** How often the node's leadership is looked at. */
  readonly leadershipCheckMillis: number
}

export const defaultSubscriptionsSettings: SubscriptionsSettings = { tickMillis: 1_000, leadershipCheckMillis: 250 }

const notReady: ManageResult = {
  _tag: "NotReady",
  reason: "Persistent subscriptions are not ready: this node does not lead"
}

const doesNotExist = (group: string): ManageResult => ({
  _tag: "DoesNotExist",
  reason: `Group '${group}' does not exist.`
})

interface Leading {
  /** The term this node leads in (a new term reloads everything). */
  readonly term: number
  /** The definitions stream's last event number when last read or written. */
  version: number
  readonly runners: Map<string, GroupRunner>
  /** Creation order. */
  definitions: Array<GroupDefinition>
}

export const makeSubscriptions = (
  store: EventStoreService,
  cluster: ClusterStatusService,
  settings: SubscriptionsSettings
): Effect.Effect<SubscriptionsService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const writer = store.leaderOnly ?? store
    const lock = yield* Effect.makeSemaphore(1)
    const exclusively = lock.withPermits(1)
    let leading: Leading | undefined
    const lostLead = yield* Ref.make(false)

    const deps: RunnerDeps = { store, writer, lostLead: Ref.set(lostLead, true) }

    const specOf = (d: GroupDefinition): GroupSpec => ({
      stream: d.stream,
      group: d.group,
      settings: d.settings,
      filter: d.filter
    })

    const stopAll = (flush: boolean) =>
      Effect.gen(function* () {
        const current = leading
        leading = undefined
        if (current === undefined) return
        yield* Effect.forEach(current.runners.values(), (r) => r.stop(flush), { discard: true })
        yield* Effect.logInfo(`persistent subscriptions stopped (${current.runners.size} groups)`)
      })

    /** Everything this node holds is committed (the new leader's own epoch included): reads see every ack. */
    const caughtUp = Effect.map(store.committedPosition, (committed) => committed >= store.stats().writerPosition)

    const startLeading = (term: number) =>
      Effect.gen(function* () {
        const loaded = yield* Effect.either(loadDefinitions(store))
        if (loaded._tag === "Left") {
          yield* Effect.logWarning(`persistent subscriptions: definitions not readable yet: ${loaded.left.message}`)
          return
        }
        for (const reason of loaded.right.skipped) yield* Effect.logWarning(`persistent subscriptions: ${reason}`)
        // Leading before the first group starts, so no commit after its first tail read goes unheard.
        const runners = new Map<string, GroupRunner>()
        leading = { term, version: loaded.right.version, runners, definitions: [...loaded.right.entries] }
        for (const definition of loaded.right.entries)
          runners.set(groupKey(definition.stream, definition.group), yield* GroupRunner.start(specOf(definition), deps))
        yield* Ref.set(lostLead, false)
        yield* Effect.logInfo(`persistent subscriptions started (${runners.size} groups)`)
      })

    const checkLeadership = exclusively(
      Effect.gen(function* () {
        const term = cluster.state() === "Leader" ? cluster.leadingTerm() : undefined
        if (term === undefined || (yield* Ref.get(lostLead))) {
          if (leading !== undefined) yield* stopAll(false)
          yield* Ref.set(lostLead, false)
          return
        }
        if (leading !== undefined && leading.term === term) return
        yield* stopAll(false)
        if (yield* caughtUp) yield* startLeading(term)
      })
    )

    // Every commit, to the groups whose source it touched. The store calls the listener in its writer's
    // round: with no group running it costs nothing; otherwise it notes the streams and wakes one fiber.
    let touched = new Set<string>()
    let touchedAll = false
    const wake = yield* Queue.sliding<void>(1)
    yield* store.onCommit((notice) => {
      if (leading === undefined || leading.runners.size === 0) return
      for (const stream of notice.streams) touched.add(stream)
      touchedAll = true
      Queue.unsafeOffer(wake, undefined)
    })
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* Queue.take(wake)
          const current = leading
          const streams = touched
          const any = touchedAll
          touched = new Set()
          touchedAll = false
          if (current === undefined || !any) return
          for (const runner of current.runners.values()) {
            const stream = runner.sourceStream
            if (stream === undefined || streams.has(stream)) yield* runner.onCommit()
          }
        })
      )
    )
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(settings.tickMillis),
          Effect.suspend(() => tickAll)
        )
      )
    )
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(checkLeadership, Effect.sleep(settings.leadershipCheckMillis)))
    )
    yield* Effect.addFinalizer(() => exclusively(stopAll(true)))

    const tickAll = Effect.suspend(() =>
      leading === undefined ? Effect.void : Effect.forEach(leading.runners.values(), (r) => r.tick, { discard: true })
    )

    /** Writes the definitions as they will be; on success the caller changes the runners. */
    const record = (current: Leading, definitions: Array<GroupDefinition>, by: string | undefined) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const written = yield* Effect.either(saveDefinitions(writer, definitions, current.version, by, now))
        if (written._tag === "Left") return yield* failure(written.left)
        current.version = written.right
        current.definitions = definitions
        return undefined
      })

    const failure = (error: AppendError): Effect.Effect<ManageResult> =>
      Effect.gen(function* () {
        if (error._tag === "NotLeader") return notReady
        // Another leader wrote since this one loaded: the groups stop, and the next leadership check reloads.
        if (error._tag === "WrongExpectedVersion") yield* stopAll(false)
        return { _tag: "Fail", reason: error.message } as const
      })

    const manage = (run: (current: Leading) => Effect.Effect<ManageResult>): Effect.Effect<ManageResult> =>
      exclusively(Effect.suspend(() => (leading === undefined ? Effect.succeed(notReady) : run(leading))))

    const definitionOf = (spec: GroupSpec): GroupDefinition => ({
      stream: spec.stream,
      group: spec.group,
      settings: spec.settings,
      filter: spec.filter
    })

    /**
     * A group on `$all` given a start position reads on from it, and the log is read only from where a record
     * begins: a position inside a record is refused now rather than retried for ever by the group.
     */
    const startRefused = (spec: GroupSpec): Effect.Effect<ManageResult | undefined> => {
      const start = startOf(spec, undefined)
      if (spec.stream !== AllStream || start._tag !== "At" || start.position === 0) return Effect.succeed(undefined)
      return Effect.map(Effect.either(store.readAllForward(start.position, 1)), (read) =>
        read._tag === "Left" && read.left._tag === "InvalidRequest"
          ? {
              _tag: "Fail",
              reason: `Start position '${spec.settings.startPosition ?? start.position}' is not where an event's record begins in the log`
            }
          : undefined
      )
    }

    const runnerOf = (stream: string, group: string): GroupRunner | undefined =>
      leading?.runners.get(groupKey(stream, group))

    const service: SubscriptionsService = {
      isReady: () => leading !== undefined,
      create: (spec, by) =>
        manage((current) =>
          Effect.gen(function* () {
            const key = groupKey(spec.stream, spec.group)
            if (current.runners.has(key))
              return { _tag: "AlreadyExists", reason: `Group '${spec.group}' already exists.` } as const
            const refused = yield* startRefused(spec)
            if (refused !== undefined) return refused
            const failed = yield* record(current, [...current.definitions, definitionOf(spec)], by)
            if (failed !== undefined) return failed
            // A group starting at the end starts where the end was at its creation, even after a restart; on
            // an empty stream that is before event 0 (checkpoint -1), not wherever the end is at the restart.
            if (startsAtTheEnd(spec)) {
              // On `$all`, the last event's own position: a checkpoint is read on from a record boundary.
              const head =
                spec.stream === "$all"
                  ? yield* Effect.orElseSucceed(
                      Effect.map(store.readAllBackward(-1, 1), (r) =>
                        r.events[0] === undefined ? -1 : originalEvent(r.events[0]).logPosition
                      ),
                      () => -1
                    )
                  : yield* Effect.orElseSucceed(store.lastEventNumber(spec.stream), () => -1)
              yield* Effect.ignore(writeCheckpoint(writer, spec.stream, spec.group, positionTextOf(spec.stream), head))
            }
            current.runners.set(key, yield* GroupRunner.start(spec, deps))
            return { _tag: "Success" } as const
          })
        ),
      update: (spec, by) =>
        manage((current) =>
          Effect.gen(function* () {
            const key = groupKey(spec.stream, spec.group)
            const runner = current.runners.get(key)
            if (runner === undefined) return doesNotExist(spec.group)
            const refused = yield* startRefused(spec)
            if (refused !== undefined) return refused
            const definitions = current.definitions.map((d) =>
              groupKey(d.stream, d.group) === key ? definitionOf(spec) : d
            )
            const failed = yield* record(current, definitions, by)
            if (failed !== undefined) return failed
            yield* runner.stop(true)
            current.runners.set(key, yield* GroupRunner.start(spec, deps))
            return { _tag: "Success" } as const
          })
        ),
      delete: (stream, group, by) =>
        manage((current) =>
          Effect.gen(function* () {
            const key = groupKey(stream, group)
            const runner = current.runners.get(key)
            if (runner === undefined) return doesNotExist(group)
            const definitions = current.definitions.filter((d) => groupKey(d.stream, d.group) !== key)
            const failed = yield* record(current, definitions, by)
            if (failed !== undefined) return failed
            current.runners.delete(key)
            yield* runner.stop(false)
            const removed = yield* Effect.either(deleteGroupStreams(writer, stream, group))
            if (removed._tag === "Left")
              yield* Effect.logWarning(`subscription ${key}: its streams were not deleted: ${removed.left.message}`)
            return { _tag: "Success" } as const
          })
        ),
      readMessages: (stream, group, options) =>
        Effect.suspend((): Effect.Effect<ReadMessagesResult> => {
          if (leading === undefined) return Effect.succeed({ _tag: "NotReady", reason: notReady.reason })
          const runner = runnerOf(stream, group)
          if (runner === undefined) return Effect.succeed({ _tag: "DoesNotExist", reason: "Not found." })
          return Effect.map(runner.readMessages(options.count, options.waitMillis), (messages) => ({
            _tag: "Messages" as const,
            messages
          }))
        }),
      ack: (stream, group, ids) => Effect.suspend(() => runnerOf(stream, group)?.ack(ids) ?? Effect.void),
      nack: (stream, group, ids, action) =>
        Effect.suspend(() => runnerOf(stream, group)?.nack(ids, action) ?? Effect.void),
      replayParked: (stream, group, stopAt) =>
        Effect.suspend(() => {
          if (leading === undefined) return Effect.succeed(notReady)
          const runner = runnerOf(stream, group)
          if (runner === undefined) return Effect.succeed(doesNotExist(group))
          return Effect.as(runner.replayParked(stopAt), { _tag: "Success" } as const)
        }),
      restart: () =>
        exclusively(
          Effect.gen(function* () {
            const current = leading
            if (current === undefined) return notReady
            yield* stopAll(true)
            yield* startLeading(current.term)
            return leading === undefined
              ? ({ _tag: "Fail", reason: "The definitions could not be read" } as const)
              : ({ _tag: "Success" } as const)
          })
        ),
      list: () =>
        Effect.suspend(() => {
          const current = leading
          if (current === undefined) return Effect.succeed([])
          return Effect.forEach(listOrder(current.definitions), (d) => {
            const runner = current.runners.get(groupKey(d.stream, d.group))
            return runner === undefined ? Effect.succeed(undefined) : runner.info()
          }).pipe(Effect.map((infos) => infos.filter((i): i is GroupInfo => i !== undefined)))
        }),
      info: (stream, group) => Effect.suspend(() => runnerOf(stream, group)?.info() ?? Effect.succeed(undefined))
    }
    return service
  })

const startsAtTheEnd = (spec: GroupSpec): boolean =>
  spec.stream === "$all"
    ? spec.settings.startPosition === undefined
      ? spec.settings.startFrom === -1
      : /^-1$|^C:-1\/P:-1$/.test(spec.settings.startPosition.trim())
    : (spec.settings.startPosition === undefined ? spec.settings.startFrom : Number(spec.settings.startPosition)) === -1

/** Groups by stream, streams in the order their first group was created, groups in creation order. */
const listOrder = (definitions: ReadonlyArray<GroupDefinition>): ReadonlyArray<GroupDefinition> => {
  const byStream = new Map<string, Array<GroupDefinition>>()
  for (const d of definitions) {
    const list = byStream.get(d.stream) ?? []
    list.push(d)
    byStream.set(d.stream, list)
  }
  return [...byStream.values()].flat()
}
