/**
 * A stand-in for the node's projections service, for proving the projections workload and its end checks
 * before the real service is wired into the node: the four projections the workload uses, each a fiber that
 * reads `$all` from its checkpoint, writes what the real system handlers (or the user projections' rules)
 * ask for, stamped with the causing position, and checkpoints every few records. A write is skipped when its
 * stream already ends at or past the causing position, so records processed again after a crash are written
 * once — unless `dedupe` is off (a planted bug the checks must catch). `replayLast` resumes from a checkpoint
 * one record early, so the record it names is processed again after every start (`countTwice`: and counted
 * again, a planted bug).
 */
import { Effect, Either, Fiber, Scope } from "effect"
import {
  byCategory,
  byEventType,
  extraMetadataJson,
  fromEventRecord,
  noFigures,
  readsEvent,
  type ProjectionStatistics,
  type ProjectionsOutcome,
  type ProjectionsService,
  type RunnerStatistics,
  type SystemWrite
} from "@vellum/projections"
import {
  EventFlags,
  ExpectedVersion,
  originalEvent,
  randomUuid,
  type EventRecord,
  type EventStoreService
} from "@vellum/storage"
import { categoryOf, causingPosition, fedToSystem, type ScannedRecord } from "../src/projections/projectionsChecks.js"
import {
  CopiesPrefix,
  CopiesProjection,
  CountsProjection,
  handledByUser,
  type Counts
} from "../src/projections/userProjections.js"

interface Checkpoint {
  readonly next: number
  readonly last: number
  readonly counts: Counts
  /** The counts before the record at `last`. */
  readonly before: Counts
}

const emptyCounts: Counts = { events: 0, byCategory: {}, byType: {} }

const scanned = (r: EventRecord): ScannedRecord => ({
  stream: r.stream,
  eventNumber: r.eventNumber,
  eventType: r.eventType,
  data: r.data,
  isJson: (r.flags & EventFlags.Json) !== 0,
  logPosition: r.logPosition
})

const systemHandler = (definition: typeof byCategory) => {
  const handler = Either.getOrThrow(definition.configure(definition.defaultQuery))
  return (r: EventRecord): ReadonlyArray<SystemWrite> => {
    const event = fromEventRecord(r)
    return readsEvent(event, definition.includeLinks) ? handler(event) : []
  }
}

const handlers: Record<string, (r: EventRecord) => ReadonlyArray<SystemWrite>> = {
  $by_category: systemHandler(byCategory),
  $by_event_type: systemHandler(byEventType),
  [CountsProjection]: () => [],
  [CopiesProjection]: (r) => {
    const category = categoryOf(r.stream)
    return category === undefined || !handledByUser(scanned(r))
      ? []
      : [
          {
            stream: `${CopiesPrefix}${category}`,
            eventType: "$>",
            data: `${r.eventNumber}@${r.stream}`,
            extraMetadata: []
          }
        ]
  }
}

const count = (counts: Counts, r: EventRecord): Counts => {
  if (!handledByUser(scanned(r))) return counts
  const category = categoryOf(r.stream) ?? "-"
  return {
    events: counts.events + 1,
    byCategory: { ...counts.byCategory, [category]: (counts.byCategory[category] ?? 0) + 1 },
    byType: { ...counts.byType, [r.eventType]: (counts.byType[r.eventType] ?? 0) + 1 }
  }
}

const idleRunner: RunnerStatistics = { ...noFigures, status: "Running" }

const json = (value: unknown) => Buffer.from(JSON.stringify(value))

const lastEvent = (store: EventStoreService, stream: string) =>
  Effect.map(store.readStreamBackward(stream, -1, 1), (read) =>
    read._tag === "Success" && read.events[0] !== undefined ? originalEvent(read.events[0]) : undefined
  )

/** Appends one JSON event with a fresh id. */
const appendJson = (store: EventStoreService, stream: string, eventType: string, value: unknown) =>
  Effect.flatMap(randomUuid, (eventId) =>
    store.append(stream, ExpectedVersion.Any, [
      { eventId, eventType, isJson: true, data: json(value), metadata: Buffer.alloc(0) }
    ])
  )

/** Retries a store call until it succeeds (disk faults run while the stand-in works). */
const persist = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A> =>
  Effect.catchAll(effect, () =>
    Effect.zipRight(
      Effect.sleep(100),
      Effect.suspend(() => persist(effect))
    )
  )

export const projectionsStandIn =
  (options: {
    readonly dedupe: boolean
    readonly replayLast: boolean
    /** With `replayLast`, keep the checkpointed counts: the record processed again is counted twice. */
    readonly countTwice?: boolean
  }) =>
  (store: EventStoreService): Effect.Effect<ProjectionsService, never, Scope.Scope> =>
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      const names = Object.keys(handlers)
      const enabled = new Map<string, boolean>()
      const exists = new Set(["$by_category", "$by_event_type"])
      const position = new Map<string, number>()
      const counts = new Map<string, Counts>()
      const fibers = new Map<string, Fiber.RuntimeFiber<never>>()
      for (const name of names) {
        const definition = yield* persist(lastEvent(store, `$projections-${name}`))
        if (definition !== undefined) exists.add(name)
        enabled.set(name, definition !== undefined && JSON.parse(definition.data.toString()).enabled === true)
      }

      const writeOnce = (write: SystemWrite, causedAt: number) =>
        Effect.gen(function* () {
          const last = yield* persist(lastEvent(store, write.stream))
          if (options.dedupe && last !== undefined) {
            const at = causingPosition(last.metadata.toString())
            if (typeof at === "number" && at >= causedAt) return
          }
          const stamp = `{"$v":"1:0:0:4","$c":${causedAt},"$p":${causedAt}`
          const extra = extraMetadataJson(write).slice(1)
          const metadata = `${stamp}${extra === "}" ? "}" : `,${extra}`}`
          const event = { eventId: yield* randomUuid, eventType: write.eventType, isJson: false }
          yield* persist(
            store.append(write.stream, ExpectedVersion.Any, [
              { ...event, data: Buffer.from(write.data), metadata: Buffer.from(metadata) }
            ])
          )
        })

      const runner = (name: string): Effect.Effect<never> =>
        Effect.gen(function* () {
          const stored = yield* persist(lastEvent(store, `$projections-${name}-checkpoint`))
          const cp: Checkpoint =
            stored === undefined
              ? { next: 0, last: -1, counts: emptyCounts, before: emptyCounts }
              : JSON.parse(stored.data.toString())
          let { next, last, counts: state } = cp
          if (options.replayLast && last >= 0) {
            // Processed again: its writes (and, for the counting projection, its count: taken back here).
            last -= 1
            next = 0
            if (options.countTwice !== true) state = cp.before
          }
          let before = state
          let unsaved = 0
          const save = persist(
            Effect.suspend(() =>
              appendJson(store, `$projections-${name}-checkpoint`, "$ProjectionCheckpoint", {
                next,
                last,
                counts: state,
                before
              })
            )
          )
          position.set(name, last)
          counts.set(name, state)
          for (;;) {
            const page = yield* Effect.either(store.readAllForward(next, 50))
            if (page._tag === "Left") {
              next = 0 // a scavenge moved the boundary: read again from the start, skipping what was processed
              yield* Effect.sleep(100)
              continue
            }
            for (const item of page.right.events) {
              const r = originalEvent(item)
              if (r.logPosition <= last) continue
              for (const write of handlers[name]!(r)) yield* writeOnce(write, r.logPosition)
              before = state
              if (name === CountsProjection) state = count(state, r)
              last = r.logPosition
              position.set(name, last)
              counts.set(name, state)
              // Only records the projections are fed count towards a checkpoint: else each one's checkpoints would
              // be records the others checkpoint after, for ever.
              if (fedToSystem(scanned(r)) && ++unsaved >= 20) {
                yield* save
                unsaved = 0
              }
            }
            if (page.right.events.length > 0) next = page.right.nextPosition
            if (page.right.isEnd || page.right.events.length === 0) {
              if (unsaved > 0) yield* save
              unsaved = 0
              yield* Effect.sleep(100)
            }
          }
        })

      const start = (name: string) =>
        Effect.gen(function* () {
          if (fibers.has(name) || enabled.get(name) !== true) return
          fibers.set(name, yield* Effect.forkIn(runner(name), scope))
        })
      const stop = (name: string) =>
        Effect.gen(function* () {
          const fiber = fibers.get(name)
          fibers.delete(name)
          if (fiber !== undefined) yield* Fiber.interrupt(fiber)
        })
      const setEnabled = (name: string, on: boolean) =>
        Effect.gen(function* () {
          yield* persist(appendJson(store, `$projections-${name}`, "$ProjectionUpdated", { enabled: on }))
          enabled.set(name, on)
          exists.add(name)
          yield* on ? start(name) : stop(name)
        })
      for (const name of names) yield* start(name)

      const ok = <A>(value: A): ProjectionsOutcome<A> => ({ _tag: "Ok", value })
      const notFound = { _tag: "NotFound" } as const
      const statistics = (name: string): ProjectionStatistics => ({
        name,
        mode: "Continuous",
        status: fibers.has(name) ? "Running" : "Stopped",
        stateReason: "",
        enabled: enabled.get(name) === true,
        version: 1,
        epoch: 0,
        resultStreamName: null,
        runner: {
          ...idleRunner,
          position: { kind: "position", phase: 0, commit: position.get(name) ?? -1, prepare: position.get(name) ?? -1 }
        }
      })
      const unsupported = () => Effect.die(new Error("not part of the projections stand-in"))
      const service: ProjectionsService = {
        enabled: true,
        list: unsupported,
        statistics: (name) => Effect.sync(() => (exists.has(name) ? ok(statistics(name)) : notFound)),
        create: (request) => Effect.as(setEnabled(request.name, request.enabled), ok(request.name)),
        command: (name, command) =>
          exists.has(name) && (command === "enable" || command === "disable")
            ? Effect.as(setEnabled(name, command === "enable"), ok(name))
            : unsupported(),
        query: unsupported,
        updateQuery: unsupported,
        config: unsupported,
        updateConfig: unsupported,
        delete: unsupported,
        state: (name) =>
          Effect.sync(() => ok({ text: JSON.stringify(counts.get(name) ?? emptyCounts), position: undefined })),
        result: unsupported,
        readEvents: unsupported,
        restart: () =>
          Effect.gen(function* () {
            for (const name of names) yield* stop(name)
            for (const name of names) yield* start(name)
            return ok(undefined)
          }),
        snapshot: () => names.filter((n) => exists.has(n)).map(statistics)
      }
      return service
    })
