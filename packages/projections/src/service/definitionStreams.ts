/**
 * The records the management service keeps in the log, in the reference's formats: the registry
 * `$projections-$all` (which projections exist, and their ids), each projection's definition stream, and the
 * deletion of a projection's streams. Writes go through the leader-only store with expected versions, so a
 * node that lost the lead, or a definition changed behind this node's back, writes nothing.
 */
import { Effect } from "effect"
import {
  ExpectedVersion,
  randomUuid,
  type AppendError,
  type AppendResult,
  type EventStoreService,
  type ProposedEvent,
  type ReadFailure
} from "@vellum/storage"
import {
  decodeDefinition,
  encodeDefinitionEvent,
  projectionIdOf,
  type DefinitionRecord
} from "../persisted/definitionRecord.js"
import type { PersistedEvent } from "../persisted/PersistedEvent.js"
import type { DeleteOptions } from "./Projections.js"
import {
  checkpointStream,
  definitionStream,
  emittedStreamsCheckpointStream,
  emittedStreamsStream,
  orderStream,
  projectionEventTypes,
  registryStream
} from "../persisted/streamNames.js"

const proposed = (event: PersistedEvent): Effect.Effect<ProposedEvent> =>
  Effect.map(randomUuid, (eventId) => ({
    eventId,
    eventType: event.eventType,
    isJson: event.isJson,
    data: Buffer.from(event.data, "utf8"),
    metadata: Buffer.from(event.metadata, "utf8")
  }))

export const appendEvents = (
  writer: EventStoreService,
  stream: string,
  expectedVersion: number,
  events: ReadonlyArray<PersistedEvent>
): Effect.Effect<AppendResult, AppendError> =>
  Effect.flatMap(Effect.forEach(events, proposed), (batch) => writer.append(stream, expectedVersion, batch))

const pageSize = 500

/** Every event of a stream, oldest first (none when it does not exist or was deleted). */
const readWhole = <A>(
  store: EventStoreService,
  stream: string,
  visit: (eventType: string, data: string, eventNumber: number) => A | undefined
): Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly lastEventNumber: number }, ReadFailure> =>
  Effect.gen(function* () {
    const items: Array<A> = []
    let from = 0
    for (;;) {
      const read = yield* store.readStreamForward(stream, from, pageSize)
      if (read._tag !== "Success") return { items, lastEventNumber: -1 }
      for (const resolved of read.events) {
        const record = resolved.event!
        const item = visit(record.eventType, record.data.toString("utf8"), record.eventNumber)
        if (item !== undefined) items.push(item)
      }
      if (read.isEndOfStream) return { items, lastEventNumber: read.lastEventNumber }
      from = read.nextEventNumber
    }
  })

export interface Registry {
  /** The registry's last event number (-1: empty), the expected version of its next write. */
  readonly version: number
  /** Registered projections in creation order, with their ids. */
  readonly projections: ReadonlyMap<string, number>
}

/** The registry replayed: created minus deleted; a name created twice keeps its latest id, as the reference does. */
export const loadRegistry = (store: EventStoreService): Effect.Effect<Registry, ReadFailure> =>
  Effect.map(
    readWhole(store, registryStream, (eventType, data, eventNumber) => ({ eventType, data, eventNumber })),
    ({ items, lastEventNumber }) => {
      const projections = new Map<string, number>()
      for (const { eventType, data, eventNumber } of items) {
        if (data === "") continue
        if (eventType === projectionEventTypes.created) projections.set(data, projectionIdOf(eventNumber))
        else if (eventType === projectionEventTypes.deleted) projections.delete(data)
      }
      return { version: lastEventNumber, projections }
    }
  )

export interface StoredDefinition {
  readonly record: DefinitionRecord
  /** The event number it was read at (the version the next write follows). */
  readonly eventNumber: number
}

/** A projection's latest definition; undefined when it has none readable. */
export const readDefinition = (
  store: EventStoreService,
  name: string
): Effect.Effect<StoredDefinition | undefined, ReadFailure> =>
  Effect.map(store.readStreamBackward(definitionStream(name), -1, 1), (read) => {
    const event = read._tag === "Success" ? read.events[0]?.event : undefined
    if (event === undefined) return undefined
    const record = decodeDefinition(event.data.toString("utf8"))
    return record === undefined ? undefined : { record, eventNumber: event.eventNumber }
  })

/** The version a new projection's first definition takes: after whatever a deleted namesake left. */
export const nextDefinitionVersion = (store: EventStoreService, name: string): Effect.Effect<number, ReadFailure> =>
  Effect.map(store.lastEventNumber(definitionStream(name)), (last) => (last < 0 ? 0 : last + 1))

/** Writes a definition at its version (the event number it must get). */
export const writeDefinition = (
  writer: EventStoreService,
  name: string,
  record: DefinitionRecord
): Effect.Effect<AppendResult, AppendError> =>
  appendEvents(writer, definitionStream(name), (record.version ?? 0) - 1, [encodeDefinitionEvent(record)])

/** A soft delete that finds nothing to delete has nothing to do. */
const softDelete = (writer: EventStoreService, stream: string): Effect.Effect<void, AppendError> =>
  Effect.catchIf(
    Effect.asVoid(writer.deleteStream(stream, ExpectedVersion.Any, false)),
    (error) => error._tag === "WrongExpectedVersion" || error._tag === "StreamDeleted",
    () => Effect.void
  )

/** What a deletion removes, as the definition being deleted says. */
export interface StreamsToDelete {
  readonly checkpoint: boolean
  readonly emitted: boolean
  readonly order: boolean
}

export const streamsToDelete = (record: DefinitionRecord, multiStream: boolean): StreamsToDelete => {
  const emitted = record.deleteEmittedStreams && record.emitEnabled === true
  return {
    checkpoint: record.deleteCheckpointStream && record.checkpointsDisabled !== true,
    emitted,
    order: emitted && multiStream
  }
}

/** Several source streams (a projection that emits then records their order in `-order`). */
export const isMultiStream = (m: { readonly definition: { readonly streams: ReadonlyArray<string> } | undefined }) =>
  (m.definition?.streams.length ?? 0) > 1

/**
 * The definition a deletion writes first (before its version is raised): disabled, deleting, the options, and
 * the count of removals it waits for, as the reference counts them (tracked emitted streams only when tracked).
 */
export const deletingDefinition = (
  record: DefinitionRecord,
  options: DeleteOptions,
  multiStream: boolean
): DefinitionRecord => {
  const flags = { ...record, ...options }
  const what = streamsToDelete(flags, multiStream)
  const prerequisites = [what.checkpoint, what.emitted && record.trackEmittedStreams === true, what.order]
  return {
    ...flags,
    enabled: false,
    deleted: false,
    deleting: true,
    numberOfPrequisitesMetForDeletion: record.numberOfPrequisitesMetForDeletion + prerequisites.filter(Boolean).length
  }
}

/** Soft-deletes what a deletion asks for: the order stream, the checkpoint stream, every tracked stream. */
export const deleteProjectionStreams = (
  store: EventStoreService,
  writer: EventStoreService,
  name: string,
  what: StreamsToDelete
): Effect.Effect<void, AppendError | ReadFailure> =>
  Effect.gen(function* () {
    if (what.order) yield* softDelete(writer, orderStream(name))
    if (what.checkpoint) yield* softDelete(writer, checkpointStream(name))
    if (!what.emitted) return
    const tracked = yield* readWhole(store, emittedStreamsStream(name), (eventType, data) =>
      eventType === projectionEventTypes.streamTracked && data !== "" ? data : undefined
    )
    for (const stream of new Set(tracked.items)) yield* softDelete(writer, stream)
    yield* softDelete(writer, emittedStreamsStream(name))
    yield* softDelete(writer, emittedStreamsCheckpointStream(name))
  })
