/**
 * Committing records that are already in the log (a follower's received records, a new leader's tail from
 * earlier terms): read back from the committed position, indexed, their ids cached for idempotent
 * retries, and announced as every commit is. Never past `target`, and never inside a record.
 */
import { Effect } from "effect"
import type { ReadError, TransactionLog } from "../log/TransactionLog.js"
import type { LogRecord } from "../log/records.js"
import type { ReadIndex } from "../streams/ReadIndex.js"
import type { EventIdCache } from "../cache/EventIdCache.js"
import { isCacheable } from "../cache/RecentEventIds.js"

const PAGE = 1024

export const makeLogCommitter =
  (
    log: TransactionLog,
    readIndex: ReadIndex,
    ids: EventIdCache,
    onCommitted: (records: ReadonlyArray<LogRecord>, endPosition: number) => Effect.Effect<void>
  ) =>
  (target: number): Effect.Effect<void, ReadError> =>
    Effect.gen(function* () {
      while (readIndex.committed() < target) {
        const from = readIndex.committed()
        const page = yield* log.scanForward(from, target, PAGE)
        let records = page.records
        let end = page.next
        if (end > target) {
          // The last record runs past `target` (not a boundary of this log): it stays uncommitted.
          end = records[records.length - 1]!.logPosition
          records = records.slice(0, -1)
        }
        if (end <= from) return
        for (const record of records)
          if (isCacheable(record)) ids.put(record.eventId, { stream: record.stream, eventNumber: record.eventNumber })
        readIndex.applyCommitted(records, end)
        yield* onCommitted(records, end)
        yield* Effect.ignore(readIndex.index.awaitCapacity)
      }
    })
