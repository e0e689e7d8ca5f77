/**
 * Committing records that are already in the log (a follower's received records, a new leader's tail from
 * earlier terms): taken as the follower decoded them when it received them (ReceivedRecords.ts), or else
 * read back from the committed position, indexed, their ids cached for idempotent
 * retries, and announced as every commit is. Only whole write units, never past `target`: readers never
 * see part of an append, even when `target` (or a page of the scan) ends inside one.
 */
import { Effect } from "effect"
import type { ReadError, TransactionLog } from "../log/TransactionLog.js"
import type { LogRecord } from "../log/records.js"
import type { ReadIndex } from "../streams/ReadIndex.js"
import type { EventIdCache } from "../cache/EventIdCache.js"
import { isCacheable } from "../cache/RecentEventIds.js"
import { endsUnit } from "./rawSlices.js"
import type { ReceivedRecords } from "./ReceivedRecords.js"

const PAGE = 1024

export const makeLogCommitter =
  (
    log: TransactionLog,
    readIndex: ReadIndex,
    ids: EventIdCache,
    onCommitted: (records: ReadonlyArray<LogRecord>, endPosition: number) => Effect.Effect<void>,
    received: ReceivedRecords
  ) =>
  (target: number): Effect.Effect<void, ReadError> =>
    Effect.gen(function* () {
      let pageSize = PAGE
      while (readIndex.committed() < target) {
        const from = readIndex.committed()
        const page = received.scan(from, target, pageSize) ?? (yield* log.scanForward(from, target, pageSize))
        const records = page.records
        // The end of the last whole unit in the page (a record's end is where the next one starts).
        let units = 0
        let end = from
        for (let i = 0; i < records.length; i++) {
          const recordEnd = i + 1 < records.length ? records[i + 1]!.logPosition : page.next
          if (recordEnd > target) break
          if (endsUnit(records[i]!)) {
            units = i + 1
            end = recordEnd
          }
        }
        if (records.length === 0 && page.next > from && page.next <= target) end = page.next // a chunk's end
        if (end <= from) {
          // A unit longer than the page: read it whole; a unit not whole below `target` stays uncommitted.
          if (page.reachedEnd || records.length < pageSize) return
          pageSize *= 2
          continue
        }
        const committed = units === records.length ? records : records.slice(0, units)
        for (const record of committed)
          if (isCacheable(record)) ids.put(record.eventId, { stream: record.stream, eventNumber: record.eventNumber })
        readIndex.applyCommitted(committed, end)
        yield* onCommitted(committed, end)
        yield* Effect.ignore(readIndex.index.awaitCapacity)
      }
    })
