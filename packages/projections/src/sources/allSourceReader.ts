/**
 * `fromAll`: the log in order, links as they lie. A position is the log position of the last record taken
 * (commit = prepare: one position per record); the start is `C:0/P:-1`, before the first record.
 */
import { Effect } from "effect"
import { assert } from "@vellum/platform"
import type { AllRead, EventStoreService, ReadFailure } from "@vellum/storage"
import type { CheckpointTag } from "../persisted/checkpointTag.js"
import { BatchBuilder, pageSize, scanBudget } from "./sourceBatch.js"
import type { SourceBatch, SourceReader } from "./SourceReader.js"
import { classifyAllRecord, type SourceRules } from "./sourceRecords.js"

export const allStartTag: CheckpointTag = { kind: "position", phase: 0, commit: 0, prepare: -1 }

const positionTag = (position: number): CheckpointTag => ({
  kind: "position",
  phase: 0,
  commit: position,
  prepare: position
})

/** The last record position a `$all` tag has taken (-1: none). */
export const lastTakenPosition = (tag: CheckpointTag): number => {
  assert(tag.kind === "position" || tag.kind === "eventTypes", "a $all source reads after a $all position")
  return (tag as { readonly prepare: number }).prepare
}

/**
 * Reads from `position`, which should be a record's start. When that record is no longer there (a scavenge
 * removed it) the read restarts at its chunk's start, which is always a boundary; the caller skips what
 * precedes the position either way.
 */
const readFrom = (store: EventStoreService, position: number, count: number): Effect.Effect<AllRead, ReadFailure> =>
  Effect.catchTag(store.readAllForward(position, count), "InvalidRequest", (error) => {
    const chunkStart = position - (position % store.config.chunkSize)
    return chunkStart === position ? Effect.fail(error) : store.readAllForward(chunkStart, count)
  })

export const makeAllSourceReader = (store: EventStoreService, rules: SourceRules): SourceReader => ({
  startTag: allStartTag,
  touches: () => true,
  read: (after, maxItems) =>
    Effect.gen(function* () {
      let last = lastTakenPosition(after)
      let from = Math.max(0, last)
      const builder = new BatchBuilder(after, from, maxItems, null)
      const budget = scanBudget(maxItems, store.config.maxReadCount)
      for (;;) {
        const page = yield* readFrom(store, from, pageSize(maxItems, store.config.maxReadCount))
        let consumedAll = true
        for (const resolved of page.events) {
          const record = resolved.event!
          if (record.logPosition <= last) continue
          if (builder.done(budget)) {
            consumedAll = false
            break
          }
          builder.take(record, classifyAllRecord(rules, record), positionTag(record.logPosition))
          last = record.logPosition
        }
        if (consumedAll && page.isEnd) return builder.batch(true, page.nextPosition) satisfies SourceBatch
        if (!consumedAll || builder.done(budget)) return builder.batch(false, builder.reached)
        from = page.nextPosition
      }
    })
})
