/**
 * The scavenge history streams: each run's detail events in `$scavenges-{id}`, links
 * to its start and completion in `$scavenges`, `$maxAge` + `$ops` metadata on all of them, and the start-up
 * repair that closes runs a restart cut short.
 *
 * Every write uses expected version Any and is retried up to 5 times when it fails for a reason that may
 * pass (a write timeout, a storage failure); a retry re-sends the same event id, so a write that did land
 * the first time is not duplicated. A history write never stops a scavenge: callers get a typed
 * `ScavengeHistoryFailed` and decide whether to log it.
 */
import { Effect, Schema } from "effect"
import {
  EventStore,
  ExpectedVersion,
  metastreamOf,
  randomUuid,
  EventTypes,
  SystemLinkAccess,
  type AppendError,
  type AppendResult,
  type ReadFailure
} from "@vellum/storage"
import {
  HistoryEventTypes,
  HistoryReadRole,
  ScavengesStream,
  chunksCompletedPayload,
  completedPayload,
  historyMetadataText,
  indexCompletedPayload,
  linkText,
  mergeCompletedPayload,
  runStreamOf,
  startedPayload,
  type ChunksCompleted,
  type Completed,
  type IndexCompleted,
  type MergeCompleted,
  type RunIdentity
} from "./payloads.js"
import { HistoryIndexScan, NoTotals, addToTotals, type RunTotals } from "./scan.js"
import { TicksPerMillisecond } from "./timeSpan.js"

export class ScavengeHistoryFailed extends Schema.TaggedError<ScavengeHistoryFailed>()("ScavengeHistoryFailed", {
  stream: Schema.String,
  message: Schema.String,
  /** The store's error. */
  cause: Schema.Defect
}) {}

export interface HistorySettings {
  /** `"<advertised http host>:<port>"` of this node. */
  readonly nodeEndpoint: string
  /** ScavengeHistoryMaxAge (default 30): the history streams' `$maxAge`, in days. */
  readonly historyMaxAgeDays: number
}

export const WriteRetries = 5
const IndexScanPage = 20
const RunScanPage = 50

const historyFailed = (stream: string) => (error: AppendError | ReadFailure) =>
  new ScavengeHistoryFailed({ stream, message: `scavenge history: ${stream}: ${error.message}`, cause: error })

/** Failures that can go away on their own; the others (bad request, deleted stream) would fail again. */
const mayPass = (error: AppendError): boolean =>
  error._tag !== "InvalidRequest" && error._tag !== "StreamDeleted" && error._tag !== "WrongExpectedVersion"

const retried = <A>(stream: string, write: Effect.Effect<A, AppendError>): Effect.Effect<A, ScavengeHistoryFailed> =>
  write.pipe(Effect.retry({ times: WriteRetries, while: mayPass }), Effect.mapError(historyFailed(stream)))

const appendOne = (
  stream: string,
  eventType: string,
  isJson: boolean,
  text: string
): Effect.Effect<AppendResult, ScavengeHistoryFailed, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const event = {
      eventId: yield* randomUuid,
      eventType,
      isJson,
      data: Buffer.from(text, "utf8"),
      metadata: new Uint8Array(0)
    }
    return yield* retried(stream, store.append(stream, ExpectedVersion.Any, [event]))
  })

/** A start or completion: the detail event, then (only once it is written) its link in `$scavenges`. */
const appendLinked = (
  scavengeId: string,
  eventType: string,
  payload: string
): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  Effect.gen(function* () {
    const written = yield* appendOne(runStreamOf(scavengeId), eventType, true, payload)
    yield* appendOne(ScavengesStream, EventTypes.LinkTo, false, linkText(written.firstEventNumber, scavengeId))
  })

const writeHistoryMetadata = (
  stream: string,
  historyMaxAgeDays: number
): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const eventId = yield* randomUuid
    const data = Buffer.from(historyMetadataText(historyMaxAgeDays), "utf8")
    yield* retried(
      metastreamOf(stream),
      store.setStreamMetadata(stream, ExpectedVersion.Any, data, { eventId, isJson: true })
    )
  })

/** Runs every write even when an earlier one failed (they are independent), then fails with the first failure. */
const attemptAll = (
  writes: ReadonlyArray<Effect.Effect<void, ScavengeHistoryFailed, EventStore>>
): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  Effect.flatMap(Effect.forEach(writes, Effect.either), (outcomes) => {
    const failed = outcomes.find((o) => o._tag === "Left")
    return failed === undefined ? Effect.void : Effect.fail(failed.left)
  })

/** A run begins: its stream's metadata, then `$scavengeStarted` and its link. */
export const startRun = (
  run: RunIdentity & { readonly historyMaxAgeDays: number }
): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  attemptAll([
    writeHistoryMetadata(runStreamOf(run.scavengeId), run.historyMaxAgeDays),
    appendLinked(run.scavengeId, HistoryEventTypes.Started, startedPayload(run))
  ])

/** Chunks executed (not linked from `$scavenges`). */
export const chunksCompleted = (event: ChunksCompleted): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  Effect.asVoid(
    appendOne(runStreamOf(event.scavengeId), HistoryEventTypes.ChunksCompleted, true, chunksCompletedPayload(event))
  )

/** Chunks merged (not linked). */
export const mergeCompleted = (event: MergeCompleted): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  Effect.asVoid(
    appendOne(runStreamOf(event.scavengeId), HistoryEventTypes.MergeCompleted, true, mergeCompletedPayload(event))
  )

/** An index table scavenged, or the index phase failed (not linked). */
export const indexCompleted = (event: IndexCompleted): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  Effect.asVoid(
    appendOne(runStreamOf(event.scavengeId), HistoryEventTypes.IndexCompleted, true, indexCompletedPayload(event))
  )

/** A run ended: `$scavengeCompleted` and its link. */
export const completed = (event: Completed): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  appendLinked(event.scavengeId, HistoryEventTypes.Completed, completedPayload(event))

/**
 * Gives `$scavenges` the history metadata unless it already has exactly this `$maxAge` and a read ACL that
 * includes `$ops`. True when it wrote.
 */
export const ensureIndexStreamMetadata = (
  historyMaxAgeDays: number
): Effect.Effect<boolean, ScavengeHistoryFailed, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const current = yield* Effect.mapError(
      store.getStreamMetadata(ScavengesStream),
      historyFailed(metastreamOf(ScavengesStream))
    )
    const maxAgeSeconds = Math.trunc(historyMaxAgeDays * 86_400)
    if (current.metadata.maxAge === maxAgeSeconds && current.metadata.acl?.read?.includes(HistoryReadRole) === true)
      return false
    yield* writeHistoryMetadata(ScavengesStream, historyMaxAgeDays)
    return true
  })

/** Reads a stream backwards from its end, a page at a time, handing each resolved event to `visit`. */
const scanBackward = (
  stream: string,
  pageSize: number,
  visit: (eventType: string, data: Uint8Array) => void
): Effect.Effect<void, ScavengeHistoryFailed, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    let from = -1
    while (true) {
      const page = yield* Effect.mapError(
        store.readStreamBackward(stream, from, pageSize, { resolveLinks: SystemLinkAccess }),
        historyFailed(stream)
      )
      if (page._tag !== "Success") return
      // A link whose target is gone (expired by $maxAge, deleted) has no event and is skipped.
      for (const resolved of page.events)
        if (resolved.event !== undefined) visit(resolved.event.eventType, resolved.event.data)
      if (page.isEndOfStream || page.events.length === 0) return
      from = page.nextEventNumber
    }
  })

const runTotals = (scavengeId: string): Effect.Effect<RunTotals, ScavengeHistoryFailed, EventStore> =>
  Effect.suspend(() => {
    let totals = NoTotals
    return Effect.map(
      scanBackward(runStreamOf(scavengeId), RunScanPage, (eventType, data) => {
        totals = addToTotals(totals, eventType, data)
      }),
      () => totals
    )
  })

export const InterruptedError = "The node was restarted."

/**
 * The start-up repair, run once on the first Leader/Follower transition: finds this node's runs that
 * started and never completed, refreshes the metadata of its 30 most recent run streams, and closes each
 * interrupted run with an `Interrupted` completion carrying what its events say it had done. Returns the
 * ids of the runs it closed, newest first.
 */
export const completeInterruptedRuns = (
  settings: HistorySettings
): Effect.Effect<ReadonlyArray<string>, ScavengeHistoryFailed, EventStore> =>
  Effect.gen(function* () {
    const scan = new HistoryIndexScan(settings.nodeEndpoint)
    yield* scanBackward(ScavengesStream, IndexScanPage, (eventType, data) => scan.observe(eventType, data))
    const refreshes = scan.recent.map((id) => writeHistoryMetadata(runStreamOf(id), settings.historyMaxAgeDays))
    const completions = scan.interrupted.map((scavengeId) =>
      Effect.flatMap(runTotals(scavengeId), (totals) =>
        completed({
          scavengeId,
          nodeEndpoint: settings.nodeEndpoint,
          result: "Interrupted",
          error: InterruptedError,
          timeTakenMillis: totals.timeTakenTicks / TicksPerMillisecond,
          spaceSaved: totals.spaceSaved,
          maxChunkScavenged: totals.maxChunkScavenged
        })
      )
    )
    yield* attemptAll([...refreshes, ...completions])
    return scan.interrupted
  })
