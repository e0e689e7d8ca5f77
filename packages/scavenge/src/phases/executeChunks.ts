/**
 * Chunk execution: every completed physical chunk before the scavenge point whose
 * weight is above the threshold (every one at -1) is rewritten without the records the state says to
 * remove, and its weights are reset. With several threads, chunks are rewritten concurrently; the
 * checkpoint is the end of the longest run of finished chunks from the start, so a resumed run redoes at
 * most the chunks that were in flight (rewriting a chunk twice gives the same chunk).
 */
import { Clock, Effect } from "effect"
import { assert } from "@vellum/platform"
import { EventFlags, RecordKind, isMetastream, type ChunkFile, type KeepRecord } from "@vellum/storage"
import { discardsMetastreamEvent, discardsOriginalEvent, type DiscardContext } from "../rules/discardRules.js"
import type { RunContext } from "./RunContext.js"
import { NotResident } from "./StateAccess.js"
import { ScavengeFailed } from "./errors.js"

/**
 * The chunk executor's rule for one record: true to keep it. The state's row is peeked (no Effect
 * while it is in memory, which is every row when the state fits its cache); a row paged out is read, and
 * the rewrite waits for the answer.
 */
export const keepRecord =
  <E>(ctx: RunContext<E>, discard: DiscardContext): KeepRecord<E> =>
  (record) => {
    if (record.kind !== RecordKind.Event || record.logPosition >= discard.spPosition) return true
    const stream = record.stream
    const eventNumber = record.eventNumber
    const logPosition = record.logPosition
    if (isMetastream(stream) && (record.flags & EventFlags.Tombstone) === 0) {
      const meta = ctx.state.peekMetastream(stream)
      if (meta !== NotResident) return !discardsMetastreamEvent(meta, eventNumber, logPosition, discard)
      return Effect.map(
        ctx.state.metastream(stream),
        (read) => !discardsMetastreamEvent(read, eventNumber, logPosition, discard)
      )
    }
    const createdMicros = record.createdMicros
    const original = ctx.state.peekOriginalStream(stream)
    if (original !== NotResident)
      return !discardsOriginalEvent(original, eventNumber, logPosition, createdMicros, discard)
    return Effect.map(
      ctx.state.originalStream(stream),
      (read) => !discardsOriginalEvent(read, eventNumber, logPosition, createdMicros, discard)
    )
  }

export const discardContextOf = <E>(ctx: RunContext<E>): DiscardContext => ({
  spPosition: ctx.sp.position,
  effectiveNowMicros: ctx.sp.effectiveNowMicros,
  unsafeIgnoreHardDeletes: ctx.options.unsafeIgnoreHardDeletes
})

const weightOf = <E>(ctx: RunContext<E>, chunk: ChunkFile): number => {
  let weight = 0
  for (let n = chunk.header.startNumber; n <= chunk.header.endNumber; n++) weight += ctx.state.chunkWeight(n)
  return weight
}

export const executeChunks = <E>(ctx: RunContext<E>, afterLogicalChunk: number | undefined) =>
  Effect.gen(function* () {
    const { log } = ctx.engine
    const from = afterLogicalChunk === undefined ? 0 : afterLogicalChunk + 1
    const targets = log.chunks().filter((c) => c.header.startNumber >= from && c.startPosition < ctx.sp.position)
    const open = targets.find((c) => c.footer === undefined)
    if (open !== undefined)
      return yield* Effect.fail(new ScavengeFailed({ message: "Reached open chunk before scavenge point" }))
    const keep = keepRecord(ctx, discardContextOf(ctx))
    const threshold = ctx.sp.threshold
    const finished = new Set<number>()
    let checkpointed = from - 1
    let done = 0
    const commitLock = yield* Effect.makeSemaphore(1)

    const executeOne = (chunk: ChunkFile) =>
      Effect.gen(function* () {
        const { startNumber, endNumber } = chunk.header
        const weight = weightOf(ctx, chunk)
        let executed = false
        if (weight > threshold || ctx.options.unsafeIgnoreHardDeletes) {
          // Past the scavenge point the state knows nothing: a rewrite there would drop records blindly.
          assert(chunk.startPosition < ctx.sp.position, "Scavenger: never past its scavenge point")
          yield* Effect.logInfo(
            `Scavenging physical chunk ${startNumber}-${endNumber} with weight ${weight}. The threshold is ${threshold}`
          )
          const started = yield* Clock.currentTimeMillis
          const replaced = yield* log.replaceChunks(startNumber, endNumber, keep, { pool: ctx.buffers })
          const timeTakenMillis = (yield* Clock.currentTimeMillis) - started
          const spaceSaved = replaced.oldBytes - replaced.newBytes
          executed = true
          ctx.totals.spaceSaved += spaceSaved
          ctx.totals.maxChunkScavenged = Math.max(ctx.totals.maxChunkScavenged, endNumber)
          yield* ctx.events.chunkExecuted({ startNumber, endNumber, timeTakenMillis, spaceSaved })
        } else {
          yield* Effect.logInfo(
            `Skipped physical chunk ${startNumber}-${endNumber} with weight ${weight}. The threshold is ${threshold}`
          )
        }
        // Commit the longest finished prefix (chunks finish out of order with several threads).
        // State changes happen under the lock too: another thread's commit must not take half of them.
        yield* commitLock.withPermits(1)(
          Effect.gen(function* () {
            if (executed) ctx.state.deleteChunkWeights(startNumber, endNumber)
            for (let n = startNumber; n <= endNumber; n++) finished.add(n)
            let end = checkpointed
            while (finished.has(end + 1)) end++
            ctx.progress("ExecutingChunks", ++done, targets.length)
            // A skipped chunk changes nothing, so it costs no commit (a sync each); the next executed chunk's
            // commit carries the checkpoint past it, and a resume at worst skips it again.
            if (end > checkpointed && executed) {
              checkpointed = end
              yield* ctx.state.commit({ stage: "ExecutingChunks", sp: ctx.sp, doneLogicalChunk: end })
            }
          })
        )
        // The throttle only applies to a single-threaded run (the reference never rests with threads).
        if (ctx.options.threads <= 1) yield* ctx.throttle.rest
      })

    ctx.progress("ExecutingChunks", 0, targets.length)
    yield* Effect.forEach(targets, executeOne, { concurrency: Math.max(1, ctx.options.threads), discard: true })
  })
