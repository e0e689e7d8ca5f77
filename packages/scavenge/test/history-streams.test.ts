/**
 * The scavenge history streams on a real store over a MemoryDisk: what each write
 * puts where (metadata, detail events, `$>` links), the `$$$scavenges` metadata rule, the start-up repair
 * of interrupted runs, and the retries of failed writes.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Ref, Scope } from "effect"
import { Disk, MemoryDisk } from "@vellum/platform"
import {
  EventStore,
  EventFlags,
  ExpectedVersion,
  StreamDeleted,
  SystemLinkAccess,
  WriteTimeout,
  defaultStorageConfig,
  make,
  type EventRecord,
  type EventStoreService
} from "@vellum/storage"
import {
  chunksCompleted,
  completeInterruptedRuns,
  completed,
  ensureIndexStreamMetadata,
  historyMetadataText,
  indexCompleted,
  mergeCompleted,
  startRun,
  startedPayload
} from "../src/history/index.js"

const node = "127.0.0.1:2113"
const otherNode = "10.0.0.2:2113"
const days = 30
const metadataText = historyMetadataText(days)
const runId = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

/** A store on a fresh in-memory disk, closed with the test's scope. */
const openStore: Effect.Effect<EventStoreService, unknown, Scope.Scope> = Effect.suspend(() =>
  make({ ...defaultStorageConfig("/db"), chunkSize: 64 * 1024, preallocateChunks: false, memtableMaxEntries: 64 }).pipe(
    Effect.provideService(Disk, new MemoryDisk().service)
  )
)

/** Every event of a stream, oldest first (none when it does not exist). */
const eventsOf = (store: EventStoreService, stream: string) =>
  Effect.map(store.readStreamForward(stream, 0, 4096), (read): ReadonlyArray<EventRecord> =>
    read._tag === "Success" ? read.events.map((e) => e.event!) : []
  )

/** How many `$metadata` events a run stream has had (a metastream shows only its last: implicit $maxCount 1). */
const metadataWrites = (store: EventStoreService, scavengeId: string) =>
  Effect.map(store.lastEventNumber(`$$$scavenges-${scavengeId}`), (last) => last + 1)

const textOf = (event: EventRecord): string => event.data.toString("utf8")
const isJson = (event: EventRecord): boolean => (event.flags & EventFlags.Json) !== 0

const runHistory = (scavengeId: string, endpoint: string, chunkEvents: number, complete: boolean) =>
  Effect.gen(function* () {
    yield* startRun({ scavengeId, nodeEndpoint: endpoint, historyMaxAgeDays: days })
    for (let i = 0; i < chunkEvents; i++) {
      yield* chunksCompleted({
        scavengeId,
        nodeEndpoint: endpoint,
        chunkStartNumber: i,
        chunkEndNumber: i,
        timeTakenMillis: 1000,
        wasScavenged: true,
        spaceSaved: 10,
        errorMessage: ""
      })
    }
    if (complete) {
      yield* completed({
        scavengeId,
        nodeEndpoint: endpoint,
        result: "Success",
        error: null,
        timeTakenMillis: 5000,
        spaceSaved: 10 * chunkEvents,
        maxChunkScavenged: chunkEvents - 1
      })
    }
  })

describe("a run's history", () => {
  it.scoped("startRun writes the run stream's metadata, then $scavengeStarted, then its link, in that order", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const id = runId(1)
      yield* startRun({ scavengeId: id, nodeEndpoint: node, historyMaxAgeDays: days }).pipe(
        Effect.provideService(EventStore, store)
      )

      const [meta] = yield* eventsOf(store, `$$$scavenges-${id}`)
      assert.strictEqual(yield* metadataWrites(store, id), 1)
      assert.strictEqual(meta!.eventType, "$metadata")
      assert.isTrue(isJson(meta!))
      assert.strictEqual(textOf(meta!), `{"$maxAge":2592000,"$acl":{"$r":"$ops","$w":[],"$d":[],"$mr":[],"$mw":[]}}`)
      const metadata = yield* store.getStreamMetadata(`$scavenges-${id}`)
      assert.strictEqual(metadata.metadata.maxAge, 2_592_000)
      assert.deepStrictEqual(metadata.metadata.acl?.read, ["$ops"])

      const [started, ...moreRun] = yield* eventsOf(store, `$scavenges-${id}`)
      assert.lengthOf(moreRun, 0)
      assert.strictEqual(started!.eventType, "$scavengeStarted")
      assert.isTrue(isJson(started!))
      assert.strictEqual(textOf(started!), `{\n  "scavengeId": "${id}",\n  "nodeEndpoint": "${node}"\n}`)

      const [link, ...moreLinks] = yield* eventsOf(store, "$scavenges")
      assert.lengthOf(moreLinks, 0)
      assert.strictEqual(link!.eventType, "$>")
      assert.isFalse(isJson(link!))
      assert.strictEqual(textOf(link!), `0@$scavenges-${id}`)
      assert.strictEqual(link!.metadata.length, 0)

      assert.isBelow(meta!.logPosition, started!.logPosition)
      assert.isBelow(started!.logPosition, link!.logPosition)
    })
  )

  it.scoped("chunk, merge and index events go to the run stream only; the completion is linked with its number", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const id = runId(2)
      const run = { scavengeId: id, nodeEndpoint: node }
      yield* Effect.gen(function* () {
        yield* startRun({ ...run, historyMaxAgeDays: days })
        yield* chunksCompleted({
          ...run,
          chunkStartNumber: 0,
          chunkEndNumber: 1,
          timeTakenMillis: 1500,
          wasScavenged: true,
          spaceSaved: 4096,
          errorMessage: ""
        })
        yield* mergeCompleted({
          ...run,
          chunkStartNumber: 0,
          chunkEndNumber: 1,
          timeTakenMillis: 20,
          spaceSaved: 100,
          wasMerged: true,
          errorMessage: ""
        })
        yield* indexCompleted({
          ...run,
          level: 0,
          index: 0,
          timeTakenMillis: 3,
          entriesDeleted: 5,
          entriesKept: 6,
          spaceSaved: 160,
          wasScavenged: true,
          errorMessage: ""
        })
        yield* completed({
          ...run,
          result: "Success",
          error: null,
          timeTakenMillis: 93_600_000,
          spaceSaved: 4356,
          maxChunkScavenged: 1
        })
      }).pipe(Effect.provideService(EventStore, store))

      const events = yield* eventsOf(store, `$scavenges-${id}`)
      assert.deepStrictEqual(
        events.map((e) => e.eventType),
        [
          "$scavengeStarted",
          "$scavengeChunksCompleted",
          "$scavengeMergeCompleted",
          "$scavengeIndexCompleted",
          "$scavengeCompleted"
        ]
      )
      assert.isTrue(events.every(isJson))
      assert.include(
        textOf(events[1]!),
        `  "chunkEndNumber": 1,\n  "timeTaken": "00:00:01.5000000",\n  "wasScavenged": true,\n  "spaceSaved": 4096,`
      )
      assert.include(
        textOf(events[2]!),
        `  "timeTaken": "00:00:00.0200000",\n  "spaceSaved": 100,\n  "wasMerged": true,`
      )
      assert.include(textOf(events[3]!), `  "entriesDeleted": 5,\n  "entriesKept": 6,\n  "spaceSaved": 160,`)
      assert.strictEqual(
        textOf(events[4]!),
        [
          "{",
          `  "scavengeId": "${id}",`,
          `  "nodeEndpoint": "${node}",`,
          `  "result": "Success",`,
          `  "error": null,`,
          `  "timeTaken": "1.02:00:00",`,
          `  "spaceSaved": 4356,`,
          `  "maxChunkScavenged": 1`,
          "}"
        ].join("\n")
      )

      const links = yield* eventsOf(store, "$scavenges")
      assert.deepStrictEqual(links.map(textOf), [`0@$scavenges-${id}`, `4@$scavenges-${id}`])
      assert.isTrue(links.every((l) => l.eventType === "$>" && !isJson(l)))
      const resolved = yield* store.readStreamForward("$scavenges", 0, 10, { resolveLinks: SystemLinkAccess })
      assert.strictEqual(resolved._tag, "Success")
      if (resolved._tag === "Success")
        assert.deepStrictEqual(
          resolved.events.map((e) => e.event?.eventType),
          ["$scavengeStarted", "$scavengeCompleted"]
        )
    })
  )
})

describe("$$$scavenges metadata", () => {
  const writeIndexMetadata = (store: EventStoreService, text: string) =>
    store.setStreamMetadata("$scavenges", ExpectedVersion.Any, Buffer.from(text))

  it.scoped("is written when missing, and not again when it is already right", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const ensure = ensureIndexStreamMetadata(days).pipe(Effect.provideService(EventStore, store))
      assert.isTrue(yield* ensure)
      const events = yield* eventsOf(store, "$$$scavenges")
      assert.deepStrictEqual(events.map(textOf), [metadataText])
      assert.isTrue(isJson(events[0]!))
      assert.isFalse(yield* ensure)
      assert.strictEqual(yield* store.lastEventNumber("$$$scavenges"), 0, "no second metadata event")
    })
  )

  it.scoped(
    "is rewritten when the maxAge differs or the read ACL lacks $ops; kept when $ops is among other roles",
    () =>
      Effect.gen(function* () {
        const store = yield* openStore
        const ensure = ensureIndexStreamMetadata(days).pipe(Effect.provideService(EventStore, store))
        const cases: ReadonlyArray<readonly [string, boolean]> = [
          [`{"$maxAge":86400,"$acl":{"$r":"$ops"}}`, true],
          [`{"$maxAge":2592000,"$acl":{"$r":"$admins"}}`, true],
          [`{"$maxAge":2592000}`, true],
          [`{"$maxAge":2592000,"$acl":{"$r":["$admins","$ops"]},"custom":1}`, false],
          [`{"$maxAge":2592000,"$acl":{"$r":"$ops","$w":"$admins"}}`, false]
        ]
        for (const [existing, rewrites] of cases) {
          yield* writeIndexMetadata(store, existing)
          assert.strictEqual(yield* ensure, rewrites, existing)
          const last = (yield* eventsOf(store, "$$$scavenges")).at(-1)!
          assert.strictEqual(textOf(last), rewrites ? metadataText : existing, existing)
        }
      })
  )
})

describe("interrupted runs", () => {
  it.scoped("a started run with no completion gets exactly one Interrupted completion with its summed figures", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const interrupted = runId(10)
      const finished = runId(11)
      const foreign = runId(12)
      const run = { scavengeId: interrupted, nodeEndpoint: node }
      const closed = yield* Effect.gen(function* () {
        yield* startRun({ ...run, historyMaxAgeDays: days })
        yield* chunksCompleted({
          ...run,
          chunkStartNumber: 0,
          chunkEndNumber: 1,
          timeTakenMillis: 1500,
          wasScavenged: true,
          spaceSaved: 100,
          errorMessage: ""
        })
        yield* chunksCompleted({
          ...run,
          chunkStartNumber: 3,
          chunkEndNumber: 3,
          timeTakenMillis: 250,
          wasScavenged: true,
          spaceSaved: 50,
          errorMessage: ""
        })
        yield* chunksCompleted({
          ...run,
          chunkStartNumber: 2,
          chunkEndNumber: 2,
          timeTakenMillis: 0.1234,
          wasScavenged: true,
          spaceSaved: 0,
          errorMessage: ""
        })
        yield* mergeCompleted({
          ...run,
          chunkStartNumber: 0,
          chunkEndNumber: 7,
          timeTakenMillis: 1000,
          spaceSaved: 25,
          wasMerged: true,
          errorMessage: ""
        })
        yield* indexCompleted({
          ...run,
          level: 0,
          index: 0,
          timeTakenMillis: 100,
          entriesDeleted: 1,
          entriesKept: 1,
          spaceSaved: 10,
          wasScavenged: true,
          errorMessage: ""
        })
        yield* runHistory(finished, node, 2, true)
        yield* runHistory(foreign, otherNode, 2, false)
        return yield* completeInterruptedRuns({ nodeEndpoint: node, historyMaxAgeDays: days })
      }).pipe(Effect.provideService(EventStore, store))

      assert.deepStrictEqual(closed, [interrupted])
      const last = (yield* eventsOf(store, `$scavenges-${interrupted}`)).at(-1)!
      assert.strictEqual(last.eventType, "$scavengeCompleted")
      assert.strictEqual(
        textOf(last),
        [
          "{",
          `  "scavengeId": "${interrupted}",`,
          `  "nodeEndpoint": "${node}",`,
          `  "result": "Interrupted",`,
          `  "error": "The node was restarted.",`,
          `  "timeTaken": "00:00:02.8501234",`,
          `  "spaceSaved": 185,`,
          `  "maxChunkScavenged": 3`,
          "}"
        ].join("\n")
      )
      const links = (yield* eventsOf(store, "$scavenges")).map(textOf)
      assert.strictEqual(links.at(-1), `6@$scavenges-${interrupted}`)

      // The completed run and the other node's run get no completion.
      assert.strictEqual(
        (yield* eventsOf(store, `$scavenges-${finished}`)).filter((e) => e.eventType === "$scavengeCompleted").length,
        1
      )
      assert.isTrue(
        (yield* eventsOf(store, `$scavenges-${foreign}`)).every((e) => e.eventType !== "$scavengeCompleted")
      )

      // This node's run streams get their metadata again; the other node's do not.
      assert.strictEqual(yield* metadataWrites(store, interrupted), 2)
      assert.strictEqual(yield* metadataWrites(store, finished), 2)
      assert.strictEqual(yield* metadataWrites(store, foreign), 1)

      // Once closed, a run is not closed again.
      const again = yield* completeInterruptedRuns({ nodeEndpoint: node, historyMaxAgeDays: days }).pipe(
        Effect.provideService(EventStore, store)
      )
      assert.deepStrictEqual(again, [])
      assert.strictEqual(
        (yield* eventsOf(store, `$scavenges-${interrupted}`)).filter((e) => e.eventType === "$scavengeCompleted")
          .length,
        1
      )
    })
  )

  it.scoped("a run with no chunk events is closed with zeros; an empty history closes nothing", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const provide = Effect.provideService(EventStore, store)
      assert.deepStrictEqual(
        yield* provide(completeInterruptedRuns({ nodeEndpoint: node, historyMaxAgeDays: days })),
        []
      )
      const id = runId(20)
      yield* provide(startRun({ scavengeId: id, nodeEndpoint: node, historyMaxAgeDays: days }))
      assert.deepStrictEqual(yield* provide(completeInterruptedRuns({ nodeEndpoint: node, historyMaxAgeDays: days })), [
        id
      ])
      const last = (yield* eventsOf(store, `$scavenges-${id}`)).at(-1)!
      assert.include(textOf(last), `  "timeTaken": "00:00:00",\n  "spaceSaved": 0,\n  "maxChunkScavenged": 0\n}`)
    })
  )

  it.scoped(
    "the scan pages through $scavenges to its oldest run, and refreshes only the 30 newest runs' metadata",
    () =>
      Effect.gen(function* () {
        const store = yield* openStore
        const oldest = runId(100)
        const closed = yield* Effect.gen(function* () {
          yield* runHistory(oldest, node, 1, false)
          for (let i = 1; i <= 32; i++) yield* runHistory(runId(100 + i), node, 0, true)
          return yield* completeInterruptedRuns({ nodeEndpoint: node, historyMaxAgeDays: days })
        }).pipe(Effect.provideService(EventStore, store))
        assert.deepStrictEqual(closed, [oldest])
        const metadataEvents = (n: number) => metadataWrites(store, runId(100 + n))
        for (let i = 3; i <= 32; i++) assert.strictEqual(yield* metadataEvents(i), 2, `run ${i}`)
        for (let i = 0; i <= 2; i++) assert.strictEqual(yield* metadataEvents(i), 1, `run ${i}`)
        const last = (yield* eventsOf(store, `$scavenges-${oldest}`)).at(-1)!
        assert.include(textOf(last), `"result": "Interrupted"`)
        assert.include(textOf(last), `"maxChunkScavenged": 0\n`)
      })
  )
})

describe("write retries", () => {
  /** The store, with appends to `stream` failing `failures` times first (after writing, when `landed`). */
  const flaky = (
    store: EventStoreService,
    stream: string,
    failures: number,
    error: WriteTimeout | StreamDeleted,
    landed: boolean
  ) =>
    Effect.gen(function* () {
      const attempts = yield* Ref.make(0)
      const service: EventStoreService = {
        ...store,
        append: (s, expectedVersion, events) =>
          s !== stream
            ? store.append(s, expectedVersion, events)
            : Effect.gen(function* () {
                const n = yield* Ref.getAndUpdate(attempts, (a) => a + 1)
                if (n >= failures) return yield* store.append(s, expectedVersion, events)
                if (landed) yield* store.append(s, expectedVersion, events)
                return yield* Effect.fail(error)
              })
      }
      return { service, attempts }
    })

  const timeout = new WriteTimeout({ timeoutMillis: 10 })

  it.scoped("a write that keeps failing is retried 5 times, and its link is not written", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const id = runId(30)
      const { service, attempts } = yield* flaky(store, `$scavenges-${id}`, 6, timeout, false)
      const failure = yield* Effect.flip(
        startRun({ scavengeId: id, nodeEndpoint: node, historyMaxAgeDays: days }).pipe(
          Effect.provideService(EventStore, service)
        )
      )
      assert.strictEqual(failure._tag, "ScavengeHistoryFailed")
      assert.strictEqual(failure.stream, `$scavenges-${id}`)
      assert.strictEqual(yield* Ref.get(attempts), 6)
      assert.lengthOf(yield* eventsOf(store, "$scavenges"), 0)
      // The metadata, an independent write, was still written.
      assert.strictEqual(yield* metadataWrites(store, id), 1)
    })
  )

  it.scoped("a write that succeeds on its 5th retry is written once, then linked", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const id = runId(31)
      const { service, attempts } = yield* flaky(store, `$scavenges-${id}`, 5, timeout, false)
      yield* startRun({ scavengeId: id, nodeEndpoint: node, historyMaxAgeDays: days }).pipe(
        Effect.provideService(EventStore, service)
      )
      assert.strictEqual(yield* Ref.get(attempts), 6)
      assert.deepStrictEqual((yield* eventsOf(store, `$scavenges-${id}`)).map(textOf), [
        startedPayload({ scavengeId: id, nodeEndpoint: node })
      ])
      assert.deepStrictEqual((yield* eventsOf(store, "$scavenges")).map(textOf), [`0@$scavenges-${id}`])
    })
  )

  it.scoped("a retry after a write that did land (timeout) re-sends the same event id, so nothing is duplicated", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const id = runId(32)
      const { service, attempts } = yield* flaky(store, "$scavenges", 2, timeout, true)
      yield* startRun({ scavengeId: id, nodeEndpoint: node, historyMaxAgeDays: days }).pipe(
        Effect.provideService(EventStore, service)
      )
      assert.strictEqual(yield* Ref.get(attempts), 3)
      assert.deepStrictEqual((yield* eventsOf(store, "$scavenges")).map(textOf), [`0@$scavenges-${id}`])
    })
  )

  it.scoped("a failure that cannot pass (deleted stream) is not retried", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const id = runId(33)
      const { service, attempts } = yield* flaky(
        store,
        `$scavenges-${id}`,
        10,
        new StreamDeleted({ stream: `$scavenges-${id}` }),
        false
      )
      const failure = yield* Effect.flip(
        chunksCompleted({
          scavengeId: id,
          nodeEndpoint: node,
          chunkStartNumber: 0,
          chunkEndNumber: 0,
          timeTakenMillis: 1,
          wasScavenged: true,
          spaceSaved: 0,
          errorMessage: ""
        }).pipe(Effect.provideService(EventStore, service))
      )
      assert.strictEqual(failure._tag, "ScavengeHistoryFailed")
      assert.strictEqual(yield* Ref.get(attempts), 1)
    })
  )
})
