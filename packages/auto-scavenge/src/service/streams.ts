/**
 * Auto-scavenge's two streams on the leader: recording a decision's events, and rebuilding the state when a
 * node becomes leader.
 *
 * - `$auto-scavenge-configuration` is written at any version; only its last event is ever read.
 * - `$auto-scavenges` is written at the revision this leader last saw, so two leaders never interleave a
 *   cycle. It gets a `$maxAge` on its first write, so it does not grow forever (the reference's does).
 * - A write that timed out, or found the disk or the quorum unavailable, is sent again with the same event
 *   ids at the same revision (a write that had landed is then answered as done), up to `WriteAttempts`.
 *   NotLeader ends the attempt (the caller answers "Not leader"); so does a revision that moved (another
 *   leader wrote since this one loaded: it loads again); anything else is fatal to auto-scavenge.
 * - Rebuilding: the last configuration event, then the events after the last completed cycle, oldest
 *   first, then `Initialized` (cycles due while no node led are skipped).
 */
import { Effect, Schema } from "effect"
import {
  ExpectedVersion,
  randomUuid,
  type AppendError,
  type EventStoreService,
  type ReadFailure
} from "@vellum/storage"
import { applyAll } from "../domain/apply.js"
import {
  ConfigurationStream,
  decodeEvent,
  encodeEvent,
  EventTypes,
  ScavengesStream,
  streamOf
} from "../domain/codec.js"
import type { AutoScavengeEvent } from "../domain/events.js"
import { initialState, type AutoScavengeState } from "../domain/State.js"

/** How long `$auto-scavenges` keeps its events. */
export const ScavengesMaxAgeSeconds = 30 * 24 * 3600
export const WriteAttempts = 50
const RetryPauseMillis = 1_000
const ReadPage = 20

export class NotLeaderAnyMore extends Schema.TaggedError<NotLeaderAnyMore>()("NotLeaderAnyMore", {
  message: Schema.String
}) {}

/** A write or read failed in a way retrying will not mend: auto-scavenge stops until the node restarts. */
export class AutoScavengeStoreFailed extends Schema.TaggedError<AutoScavengeStoreFailed>()("AutoScavengeStoreFailed", {
  stream: Schema.String,
  message: Schema.String,
  cause: Schema.Unknown
}) {}

export interface Persisted {
  readonly state: AutoScavengeState
  /** The last event number of `$auto-scavenges` (-1: no stream yet). */
  readonly revision: number
}

const transient = (e: AppendError): boolean =>
  e._tag === "WriteTimeout" || e._tag === "CommitTimeout" || e._tag === "DiskError" || e._tag === "StorageFailed"

const classify =
  (stream: string) =>
  (e: AppendError): NotLeaderAnyMore | AutoScavengeStoreFailed =>
    e._tag === "NotLeader"
      ? new NotLeaderAnyMore({ message: "Not leader" })
      : e._tag === "WrongExpectedVersion"
        ? new NotLeaderAnyMore({ message: `${stream} moved since this leader loaded it` })
        : new AutoScavengeStoreFailed({ stream, message: e.message, cause: e })

/** Sent again (same event ids, same revision) while the failure may pass, pausing between attempts. */
const retried = <A>(stream: string, write: Effect.Effect<A, AppendError>) =>
  Effect.tapError(write, (e) => (transient(e) ? Effect.sleep(RetryPauseMillis) : Effect.void)).pipe(
    Effect.retry({ times: WriteAttempts - 1, while: transient }),
    Effect.mapError(classify(stream))
  )

const toProposed = (event: Exclude<AutoScavengeEvent, { _tag: "Initialized" }>) =>
  Effect.map(randomUuid, (eventId) => {
    const encoded = encodeEvent(event)
    return {
      eventId,
      eventType: encoded.eventType,
      isJson: true,
      data: Buffer.from(encoded.data, "utf8"),
      metadata: new Uint8Array(0)
    }
  })

/**
 * Records a decision's events (in order, each stream's run in one append) and returns the new revision of
 * `$auto-scavenges`.
 */
export const record = (
  store: EventStoreService,
  revision: number,
  events: ReadonlyArray<AutoScavengeEvent>
): Effect.Effect<number, NotLeaderAnyMore | AutoScavengeStoreFailed> =>
  Effect.gen(function* () {
    let current = revision
    let i = 0
    while (i < events.length) {
      const stream = streamOf(events[i]!)
      let j = i
      while (j < events.length && streamOf(events[j]!) === stream) j++
      const run = events.slice(i, j).filter((e) => e._tag !== "Initialized")
      i = j
      if (stream === undefined || run.length === 0) continue
      const proposed = yield* Effect.forEach(run, (e) =>
        toProposed(e as Exclude<AutoScavengeEvent, { _tag: "Initialized" }>)
      )
      if (stream === ConfigurationStream) {
        yield* retried(stream, store.append(stream, ExpectedVersion.Any, proposed))
        continue
      }
      if (current === ExpectedVersion.NoStream) {
        const metadataId = yield* randomUuid
        const metadata = Buffer.from(JSON.stringify({ $maxAge: ScavengesMaxAgeSeconds }), "utf8")
        yield* retried(
          stream,
          store.setStreamMetadata(stream, ExpectedVersion.Any, metadata, { eventId: metadataId, isJson: true })
        )
      }
      const written = yield* retried(stream, store.append(stream, current, proposed))
      current = written.lastEventNumber
    }
    return current
  })

const readFailed = (stream: string) => (e: ReadFailure) =>
  new AutoScavengeStoreFailed({ stream, message: e.message, cause: e })

/** The state this node's copy of the streams holds, with `Initialized{now}` applied last. */
export const rehydrate = (store: EventStoreService, now: number): Effect.Effect<Persisted, AutoScavengeStoreFailed> =>
  Effect.gen(function* () {
    const events: Array<AutoScavengeEvent> = []
    const config = yield* Effect.mapError(store.readEvent(ConfigurationStream, -1), readFailed(ConfigurationStream))
    if (config._tag === "Success" && config.event.event !== undefined) {
      const e = config.event.event
      const decoded = decodeEvent(e.eventType, e.data.toString("utf8"))
      if (decoded !== undefined) events.push(decoded)
    }
    const cycle: Array<AutoScavengeEvent> = []
    let revision: number = ExpectedVersion.NoStream
    let from = -1
    for (;;) {
      const page = yield* Effect.mapError(
        store.readStreamBackward(ScavengesStream, from, ReadPage),
        readFailed(ScavengesStream)
      )
      if (page._tag !== "Success") break
      if (from === -1) revision = page.lastEventNumber
      let completed = false
      for (const resolved of page.events) {
        const e = resolved.event
        if (e === undefined) continue
        if (e.eventType === EventTypes.ClusterScavengeCompleted) {
          completed = true
          break
        }
        const decoded = decodeEvent(e.eventType, e.data.toString("utf8"))
        if (decoded !== undefined) cycle.push(decoded)
      }
      if (completed || page.isEndOfStream || page.nextEventNumber < 0) break
      from = page.nextEventNumber
    }
    const state = applyAll(initialState, [...events, ...cycle.reverse(), { _tag: "Initialized", at: now }])
    return { state, revision }
  })
