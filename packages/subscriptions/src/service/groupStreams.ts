/**
 * The streams the service keeps beside each group, read and written in the reference's formats
 * (`persisted/`): the definitions record, a group's checkpoint, and its parked messages. Writes go through
 * the leader-only store, so a node that lost the lead never writes through the new leader.
 */
import { Effect } from "effect"
import {
  ExpectedVersion,
  randomUuid,
  SystemLinkAccess,
  type AppendError,
  type AppendResult,
  type EventStoreService,
  type ProposedEvent,
  type ReadFailure,
  type ResolvedEvent
} from "@vellum/storage"
import { decodeCheckpoint, encodeCheckpoint, checkpointStreamMetadata } from "../persisted/checkpoint.js"
import {
  AllStream,
  currentVersion,
  decodeGroupDefinitions,
  definitionsStreamMetadata,
  encodeGroupDefinitions,
  type GroupDefinition
} from "../persisted/groupDefinitions.js"
import { dotNetDate } from "../persisted/dotNetJson.js"
import { encodeParkedMessage, linkData, parkedStreamMetadata } from "../persisted/parkedMessages.js"
import type { PersistedEvent } from "../persisted/PersistedEvent.js"
import { checkpointStream, definitionsStream, parkedStream } from "../persisted/streamNames.js"

const utf8 = (text: string): Uint8Array => Buffer.from(text, "utf8")

const proposed = (event: PersistedEvent): Effect.Effect<ProposedEvent> =>
  Effect.map(randomUuid, (eventId) => ({
    eventId,
    eventType: event.eventType,
    isJson: event.isJson,
    data: utf8(event.data),
    metadata: utf8(event.metadata)
  }))

/** The last event of a stream, if it has one. */
const lastEvent = (store: EventStoreService, stream: string) =>
  Effect.map(store.readStreamBackward(stream, -1, 1), (read) =>
    read._tag === "Success" && read.events.length > 0 ? read.events[0]!.event : undefined
  )

/** A write that created its stream also sets the stream's metadata. */
const appendWithMetadata = (
  writer: EventStoreService,
  stream: string,
  expectedVersion: number,
  events: ReadonlyArray<PersistedEvent>,
  metadataOnCreate: string
): Effect.Effect<AppendResult, AppendError> =>
  Effect.gen(function* () {
    const written = yield* writer.append(stream, expectedVersion, yield* Effect.forEach(events, proposed))
    if (written.firstEventNumber === 0 && !written.idempotent)
      yield* writer.setStreamMetadata(stream, ExpectedVersion.Any, utf8(metadataOnCreate))
    return written
  })

// ---- definitions --------------------------------------------------------------------------------------

export interface LoadedDefinitions {
  readonly entries: ReadonlyArray<GroupDefinition>
  /** The definitions stream's last event number (-1: none yet), for the next write's expected version. */
  readonly version: number
  /** Why entries of the record were left out. */
  readonly skipped: ReadonlyArray<string>
}

export const loadDefinitions = (store: EventStoreService): Effect.Effect<LoadedDefinitions, ReadFailure> =>
  Effect.map(lastEvent(store, definitionsStream), (event) => {
    if (event === undefined) return { entries: [], version: -1, skipped: [] }
    const decoded = decodeGroupDefinitions(event.data.toString("utf8"))
    if (decoded._tag === "Left") return { entries: [], version: event.eventNumber, skipped: [decoded.left] }
    return { entries: decoded.right.definitions.entries, version: event.eventNumber, skipped: decoded.right.skipped }
  })

export const saveDefinitions = (
  writer: EventStoreService,
  entries: ReadonlyArray<GroupDefinition>,
  expectedVersion: number,
  by: string | undefined,
  nowMillis: number
): Effect.Effect<number, AppendError> =>
  Effect.map(
    appendWithMetadata(
      writer,
      definitionsStream,
      expectedVersion,
      [encodeGroupDefinitions({ version: currentVersion, updated: dotNetDate(nowMillis), updatedBy: by, entries })],
      definitionsStreamMetadata
    ),
    (written) => written.lastEventNumber
  )

// ---- checkpoints --------------------------------------------------------------------------------------

/** How a group's position is written in its checkpoint: an event number, or `C:{p}/P:{p}` for `$all`. */
export interface PositionText {
  readonly write: (position: number) => string
  readonly read: (text: string) => number | undefined
}

export const eventNumberText: PositionText = {
  write: (n) => String(n),
  read: (text) => (/^-?\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined)
}

export const logPositionText: PositionText = {
  write: (p) => `C:${p}/P:${p}`,
  read: (text) => {
    const match = /^C:(-?\d+)\/P:(-?\d+)$/.exec(text.trim())
    if (match === null) return undefined
    const prepare = Number(match[2])
    return Number.isSafeInteger(prepare) ? prepare : undefined
  }
}

/** How positions of a group on `stream` are written: log positions for `$all`, event numbers otherwise. */
export const positionTextOf = (stream: string): PositionText =>
  stream === AllStream ? logPositionText : eventNumberText

export const loadCheckpoint = (
  store: EventStoreService,
  stream: string,
  group: string,
  text: PositionText
): Effect.Effect<number | undefined, ReadFailure> =>
  Effect.map(lastEvent(store, checkpointStream(stream, group)), (event) => {
    if (event === undefined) return undefined
    const decoded = decodeCheckpoint(event.eventType, event.data.toString("utf8"))
    return decoded === undefined ? undefined : text.read(decoded)
  })

export const writeCheckpoint = (
  writer: EventStoreService,
  stream: string,
  group: string,
  text: PositionText,
  position: number
): Effect.Effect<void, AppendError> =>
  Effect.asVoid(
    appendWithMetadata(
      writer,
      checkpointStream(stream, group),
      ExpectedVersion.Any,
      [encodeCheckpoint(text.write(position))],
      checkpointStreamMetadata
    )
  )

// ---- parked messages ----------------------------------------------------------------------------------

export interface ParkedExtent {
  /** The number the next parked message gets. */
  readonly next: number
  /** Messages before this number were replayed (the stream's `$tb`). */
  readonly truncateBefore: number
}

export const loadParkedExtent = (
  store: EventStoreService,
  stream: string,
  group: string
): Effect.Effect<ParkedExtent, ReadFailure> =>
  Effect.gen(function* () {
    const parked = parkedStream(stream, group)
    const last = yield* store.lastEventNumber(parked)
    const metadata = yield* store.getStreamMetadata(parked)
    const next = Math.max(0, last + 1)
    return { next, truncateBefore: Math.min(next, metadata.metadata.truncateBefore ?? 0) }
  })

export interface ToPark {
  readonly resolved: ResolvedEvent
  /** The event's position in the group's source (its number in the group's stream). */
  readonly position: number
  readonly reason: string
}

/** One write of links to the parked events; answers the number the first got. */
export const writeParked = (
  writer: EventStoreService,
  stream: string,
  group: string,
  items: ReadonlyArray<ToPark>,
  nowMillis: number
): Effect.Effect<AppendResult, AppendError> => {
  const events = items.map((item) => {
    const target = item.resolved.event
    const link = item.resolved.link
    // A link whose target is gone is parked as it was: its own data.
    const data =
      target !== undefined
        ? linkData(target.eventNumber, target.stream)
        : link !== undefined
          ? link.data.toString("utf8")
          : ""
    return encodeParkedMessage({
      linkData: data,
      addedMillis: nowMillis,
      reason: item.reason,
      subscriptionEventNumber: item.position
    })
  })
  return Effect.flatMap(Effect.forEach(events, proposed), (proposedEvents) =>
    writer.append(parkedStream(stream, group), ExpectedVersion.Any, proposedEvents)
  )
}

export interface ParkedPage {
  /** The parked events, resolved (`event` undefined where the target is gone). */
  readonly events: ReadonlyArray<ResolvedEvent>
  /** Each event's number in the parked stream. */
  readonly numbers: ReadonlyArray<number>
  readonly next: number
  readonly isEnd: boolean
}

export const readParked = (
  store: EventStoreService,
  stream: string,
  group: string,
  from: number,
  count: number
): Effect.Effect<ParkedPage, ReadFailure> =>
  Effect.map(
    store.readStreamForward(parkedStream(stream, group), from, count, { resolveLinks: SystemLinkAccess }),
    (read) =>
      read._tag !== "Success"
        ? { events: [], numbers: [], next: from, isEnd: true }
        : {
            events: read.events,
            numbers: read.events.map((e) => (e.link ?? e.event)!.eventNumber),
            next: read.nextEventNumber,
            isEnd: read.isEndOfStream
          }
  )

/** Replayed messages before `before` leave the parked stream. */
export const truncateParked = (
  writer: EventStoreService,
  stream: string,
  group: string,
  before: number
): Effect.Effect<void, AppendError> =>
  Effect.asVoid(
    writer.setStreamMetadata(parkedStream(stream, group), ExpectedVersion.Any, utf8(parkedStreamMetadata(before)))
  )

/** A group's checkpoint and parked streams, deleted with the group (one never written needs no delete). */
export const deleteGroupStreams = (
  writer: EventStoreService,
  stream: string,
  group: string
): Effect.Effect<void, AppendError> =>
  Effect.forEach(
    [checkpointStream(stream, group), parkedStream(stream, group)],
    (name) =>
      writer.deleteStream(name, ExpectedVersion.Any, false).pipe(
        Effect.catchTag("WrongExpectedVersion", () => Effect.void),
        Effect.asVoid
      ),
    { discard: true }
  )
