/**
 * The projections workload's reads of the store (the EventStore service, as the checkers read it, with
 * faults paused): one scan of `$all`, a link stream as it lies (links not resolved), and the position of the
 * last scavenge point (below which a scavenge may have removed records).
 */
import { Effect } from "effect"
import {
  EventFlags,
  ScavengePointsStream,
  originalEvent,
  type EventStoreService,
  type ReadFailure
} from "@vellum/storage"
import type { ScannedRecord, StoredLink } from "./projectionsChecks.js"

export const scanAll = (store: EventStoreService): Effect.Effect<Array<ScannedRecord>, ReadFailure> =>
  Effect.gen(function* () {
    const records: Array<ScannedRecord> = []
    for (let position = 0; ;) {
      const read = yield* store.readAllForward(position, 500)
      for (const resolved of read.events) {
        const e = originalEvent(resolved)
        records.push({
          stream: e.stream,
          eventNumber: e.eventNumber,
          eventType: e.eventType,
          data: e.data,
          isJson: (e.flags & EventFlags.Json) !== 0,
          logPosition: e.logPosition
        })
      }
      if (read.isEnd || read.events.length === 0) return records
      position = read.nextPosition
    }
  })

/** A stream's events, unresolved, in order (none when it does not exist). */
export const readLinks = (store: EventStoreService, stream: string): Effect.Effect<Array<StoredLink>, ReadFailure> =>
  Effect.gen(function* () {
    const links: Array<StoredLink> = []
    for (let from = 0; ;) {
      const read = yield* store.readStreamForward(stream, from, 500)
      if (read._tag !== "Success") return links
      for (const resolved of read.events) {
        const e = originalEvent(resolved)
        links.push({ eventType: e.eventType, data: e.data.toString("utf8"), metadata: e.metadata.toString("utf8") })
      }
      if (read.isEndOfStream || read.events.length === 0) return links
      from = read.nextEventNumber
    }
  })

/** The log position of the newest scavenge point, -1 when none was written (points are not events: the index). */
export const lastScavengePoint = (store: EventStoreService) =>
  Effect.map(store.engine.readIndex.liveEntries(ScavengePointsStream), (entries) =>
    entries.reduce((last, e) => Math.max(last, e.position), -1)
  )
