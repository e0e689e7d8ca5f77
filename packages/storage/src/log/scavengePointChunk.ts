/**
 * A scavenge point ends its chunk: the writer completes the chunk right after the point, so a scavenge run
 * to it can execute every chunk up to and including the point's, and the next run can start accumulating
 * at the chunk after it. A crash after the point was synced (and the checkpoint moved past it) but before
 * the chunk's completion was, leaves the point as the last record of the open chunk; opening the log then
 * does the completion the crash cut short.
 */
import { Effect } from "effect"
import { RecordKind } from "./records.js"
import type { TransactionLog } from "./TransactionLog.js"

export const completeChunkAfterScavengePoint = (log: TransactionLog) =>
  Effect.gen(function* () {
    const end = log.writerPosition()
    if (end % log.config.chunkSize === 0) return false
    const last = yield* log.scanBackward(end, end, 1)
    if (last.records[0]?.kind !== RecordKind.ScavengePoint) return false
    yield* log.write(log.prepare([{ records: [], completeChunkAfter: true }]))
    return true
  })
