/**
 * Finding, after a restart, the number of an event written before it: a result link points at the event the
 * same item wrote last into another stream, and when that write is skipped (it was made before the restart)
 * its number is read back from the stream — the last event stamped with the item's position. The stamps read
 * are remembered, newest first: lookups come in the order of the items, so one backward scan serves them all.
 */
import { Effect } from "effect"
import { originalEvent, type EventStoreService } from "@vellum/storage"
import { compareCheckpointTags, decodeCheckpointTag, type CheckpointTag } from "../../persisted/checkpointTag.js"
import type { OutputFault } from "../OutputWriter.js"
import { withStorageRetry } from "./storageFailures.js"

const pageSize = 100

export interface WrittenStamps {
  /** Each position read and the number of the last event stamped with it, newest first. */
  readonly found: Array<readonly [CheckpointTag, number]>
  /** Where the backward scan goes on; -1 once it reached the stream's (visible) start. */
  next: number
}

/** A scan of the stream whose last event is `head`. */
export const writtenStamps = (head: number): WrittenStamps => ({ found: [], next: head })

/** The number of the last event stamped with `tag` in `stream`; undefined when there is none. */
export const lastNumberStamped = (
  store: EventStoreService,
  stream: string,
  stamps: WrittenStamps,
  tag: CheckpointTag
): Effect.Effect<number | undefined, OutputFault> =>
  Effect.gen(function* () {
    for (;;) {
      for (const [stamped, number] of stamps.found) if (compareCheckpointTags(stamped, tag) === 0) return number
      const oldest = stamps.found[stamps.found.length - 1]
      if (stamps.next < 0 || (oldest !== undefined && compareCheckpointTags(oldest[0], tag) === -1)) return undefined
      const page = yield* withStorageRetry(stream, store.readStreamBackward(stream, stamps.next, pageSize))
      if (page._tag !== "Success") {
        stamps.next = -1
        continue
      }
      for (const resolved of page.events) {
        const event = originalEvent(resolved)
        const decoded = decodeCheckpointTag(event.metadata.toString("utf8"))
        if (decoded === undefined) {
          // Not a projection's event: nothing older is this run's.
          stamps.next = -1
          break
        }
        const newest = stamps.found[stamps.found.length - 1]
        if (newest === undefined || compareCheckpointTags(newest[0], decoded.tag) !== 0)
          stamps.found.push([decoded.tag, event.eventNumber])
      }
      if (stamps.next >= 0) stamps.next = page.isEndOfStream ? -1 : page.nextEventNumber
    }
  })
