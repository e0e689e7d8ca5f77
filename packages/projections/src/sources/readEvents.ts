/**
 * `POST /projections/read-events`, the debugger's helper: the events a projection with this source definition
 * would be given after a position, read with a projection's filters (content validation on), each with the
 * position it leads to. A definition, position or count that cannot be read is a fault with its reason.
 */
import { Effect } from "effect"
import type { DiskError } from "@vellum/platform"
import { EventFlags, utf8Text, type EventStoreService, type StorageCorrupt } from "@vellum/storage"
import { validateSourceDefinition } from "../language/validateSourceDefinition.js"
import type { SourceDefinition } from "../language/SourceDefinition.js"
import { decodeCheckpointTag, type CheckpointTag } from "../persisted/checkpointTag.js"
import type { ReadEventsItem, ReadEventsRequest, ReadEventsResult } from "../service/Projections.js"
import type { PrepareFault } from "../service/RunnerFactory.js"
import { makeSourceReader } from "./makeSourceReader.js"
import type { SourceItem, SourceReader } from "./SourceReader.js"
import { parseSourceDefinitionJson } from "./sourceDefinitionJson.js"

/** Reads per request: a source that filters out nearly everything answers with what it found so far. */
const MAX_READS = 64

const fault = (reason: string): PrepareFault => ({ _tag: "PrepareFault", reason })

const positionText = (position: unknown): string | undefined =>
  typeof position === "string" ? position : typeof position === "object" ? JSON.stringify(position) : undefined

/**
 * The posted position as a position of this source. No position (or `{}`) is the start; a `$all` source
 * takes `$c`/`$p` (event-type positions too, by their `$all` part); a stream source takes streams it reads.
 */
const startingTag = (
  definition: SourceDefinition,
  reader: SourceReader,
  position: unknown
): CheckpointTag | PrepareFault => {
  if (position === undefined || position === null) return reader.startTag
  const text = positionText(position)
  const decoded = text === undefined ? undefined : decodeCheckpointTag(text)
  if (decoded === undefined) return fault("the position is not a position")
  const tag = decoded.tag
  if (tag.phase !== 0) return fault("the position is not in the source's phase")
  if (tag.kind === "phase" && !tag.completed) return reader.startTag
  if (definition.allStreams) {
    if (tag.kind === "position") return tag
    if (tag.kind === "eventTypes") return { kind: "position", phase: 0, commit: tag.commit, prepare: tag.prepare }
    return fault("a fromAll source reads from a $all position ($c and $p)")
  }
  const sourceStreams = reader.startTag.kind === "streams" ? reader.startTag.streams.map(([stream]) => stream) : []
  if (tag.kind === "streams" && tag.streams.every(([stream]) => sourceStreams.includes(stream))) return tag
  return fault(`the position must give event numbers of the source's streams (${sourceStreams.join(", ")})`)
}

const itemOf = (item: SourceItem): ReadEventsItem => ({
  eventStreamId: item.event.stream,
  eventNumber: item.event.eventNumber,
  eventType: item.event.eventType,
  data: utf8Text(item.event.data),
  metadata: utf8Text(item.event.metadata),
  linkMetadata: item.link === undefined ? "" : utf8Text(item.link.metadata),
  isJson: (item.event.flags & EventFlags.Json) !== 0,
  readerPosition: item.tag
})

export const readEvents = (
  store: EventStoreService,
  request: ReadEventsRequest
): Effect.Effect<ReadEventsResult, PrepareFault | StorageCorrupt | DiskError> =>
  Effect.gen(function* () {
    const parsed = parseSourceDefinitionJson(request.query)
    if ("reason" in parsed) return yield* Effect.fail(fault(parsed.reason))
    const validated = validateSourceDefinition(parsed.definition)
    if (validated._tag === "Left") return yield* Effect.fail(fault(validated.left.message))
    const definition = validated.right
    // At most a store page of events per request: the debugger pages on with the position it is given.
    const maxEvents = Math.min(request.maxEvents, store.config.maxReadCount)
    if (!Number.isSafeInteger(maxEvents) || maxEvents < 1)
      return yield* Effect.fail(fault("maxEvents must be at least 1"))
    const reader = makeSourceReader(store, definition, { validateContent: true, deletions: false })
    const start = startingTag(definition, reader, request.position)
    if ("_tag" in start) return yield* Effect.fail(start)
    const items: Array<SourceItem> = []
    let tag = start
    for (let reads = 0; reads < MAX_READS && items.length < maxEvents; reads++) {
      const batch = yield* Effect.catchTag(reader.read(tag, maxEvents - items.length), "InvalidRequest", (error) =>
        Effect.fail(fault(`the position cannot be read: ${error.message}`))
      )
      items.push(...batch.items)
      tag = batch.next
      if (batch.atEnd) break
    }
    return { readerPosition: tag, events: items.map(itemOf) }
  })
