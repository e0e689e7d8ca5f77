/**
 * `fromStream`, `fromStreams` and a single `fromCategory` (its `$ce-` stream): source streams read with links
 * resolved, merged by the log position of what lies in them, so several streams come in the order `$all`
 * holds those records. One stream is the same merge with a single input: stream order.
 *
 * The merge is safe only up to a position every stream has been read to: a stream whose page was full may
 * hold more records before another stream's next one. Everything is read below the committed position taken
 * once per read, so each round delivers exactly the records of all streams up to the smallest position a
 * full page reached, in position order: the same sequence whatever the batch sizes. `reorderEvents` needs
 * nothing more: the log commits in order, so this merge is already the order the reordering restores.
 *
 * A position lists every source stream with the number of the last record taken from it (-1: none).
 */
import { Effect } from "effect"
import { assert } from "@vellum/platform"
import {
  SystemLinkAccess,
  originalEvent,
  type EventStoreService,
  type ReadFailure,
  type ResolvedEvent
} from "@vellum/storage"
import type { CheckpointTag } from "../persisted/checkpointTag.js"
import { BatchBuilder, pageSize, scanBudget } from "./sourceBatch.js"
import type { SourceBatch, SourceReader } from "./SourceReader.js"
import { classifyStreamRecord, type SourceRules } from "./sourceRecords.js"

export interface StreamsSource {
  /** In the definition's order, without repeats. */
  readonly streams: ReadonlyArray<string>
  /** A single category's name (its stream is `$ce-{category}`), else null. */
  readonly category: string | null
}

const streamsTag = (streams: ReadonlyArray<string>, last: ReadonlyMap<string, number>): CheckpointTag => ({
  kind: "streams",
  phase: 0,
  streams: streams.map((stream) => [stream, last.get(stream) ?? -1] as const)
})

/** The last number taken from each source stream: a stream the tag does not name has had none. */
export const lastTakenNumbers = (tag: CheckpointTag, streams: ReadonlyArray<string>): Map<string, number> => {
  assert(tag.kind === "streams", "a stream source reads after a streams position")
  const named = new Map((tag as { readonly streams: ReadonlyArray<readonly [string, number]> }).streams)
  return new Map(streams.map((stream) => [stream, named.get(stream) ?? -1]))
}

interface Pending {
  readonly stream: string
  readonly resolved: ResolvedEvent
  readonly position: number
}

/** One round: the records of every stream up to the safe position, in log order; `complete` when none remain. */
const readRound = (
  store: EventStoreService,
  streams: ReadonlyArray<string>,
  last: ReadonlyMap<string, number>,
  count: number,
  committed: number
): Effect.Effect<{ readonly pending: ReadonlyArray<Pending>; readonly complete: boolean }, ReadFailure> =>
  Effect.gen(function* () {
    const pending: Array<Pending> = []
    let safe = committed
    let complete = true
    for (const stream of streams) {
      const read = yield* store.readStreamForward(stream, last.get(stream)! + 1, count, {
        resolveLinks: SystemLinkAccess
      })
      if (read._tag !== "Success") continue
      const below = read.events.filter((resolved) => originalEvent(resolved).logPosition < committed)
      for (const resolved of below) pending.push({ stream, resolved, position: originalEvent(resolved).logPosition })
      const exhausted = read.isEndOfStream || below.length < read.events.length || read.events.length < count
      if (!exhausted) {
        complete = false
        safe = Math.min(safe, originalEvent(below[below.length - 1]!).logPosition)
      }
    }
    const ready = pending.filter((record) => record.position <= safe).sort((a, b) => a.position - b.position)
    return { pending: ready, complete }
  })

export const makeStreamsSourceReader = (
  store: EventStoreService,
  rules: SourceRules,
  source: StreamsSource
): SourceReader => {
  const streamSet = new Set(source.streams)
  const linksOnly = source.category !== null
  return {
    startTag: streamsTag(source.streams, new Map()),
    touches: (streams) => streams.some((stream) => streamSet.has(stream)),
    read: (after, maxItems) =>
      Effect.gen(function* () {
        const last = lastTakenNumbers(after, source.streams)
        const committed = yield* store.committedPosition
        const count = pageSize(maxItems, store.config.maxReadCount)
        const budget = scanBudget(maxItems, store.config.maxReadCount)
        const builder = new BatchBuilder(after, 0, maxItems, source.category)
        for (;;) {
          const round = yield* readRound(store, source.streams, last, count, committed)
          let consumedAll = true
          for (const { stream, resolved } of round.pending) {
            if (builder.done(budget)) {
              consumedAll = false
              break
            }
            const record = originalEvent(resolved)
            last.set(stream, record.eventNumber)
            builder.take(record, classifyStreamRecord(rules, resolved, linksOnly), streamsTag(source.streams, last))
          }
          if (consumedAll && round.complete) return builder.batch(true, committed) satisfies SourceBatch
          if (!consumedAll || builder.done(budget)) return builder.batch(false, builder.reached)
        }
      })
  }
}
