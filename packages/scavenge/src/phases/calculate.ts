/**
 * Calculation (spec/scavenge.md §2.3): for every original stream the state marks Active, walk its index
 * entries before the scavenge point and move its discard points forward (never back), adding the weight
 * of each removable event to its chunk. Streams go in name order, committed in batches with the last name
 * done as the checkpoint, so a resumed run continues after it.
 */
import { Effect } from "effect"
import { DeletedStreamNumber } from "@vellum/storage"
import { calculateStream, type CalculationContext } from "../rules/calculateStream.js"
import { REST_PERIOD, type RunContext } from "./RunContext.js"
import type { OriginalStreamData, StreamStatus } from "./StateAccess.js"

/** Streams per committed batch (the reference's calculator batch). */
export const CALCULATION_BATCH = 32_768

/** Whether a later run can still find something to remove in the stream (§2.3 `CalculateStatus`). */
export const statusAfterCalculation = (data: OriginalStreamData, last: number): StreamStatus => {
  if (data.isTombstoned) return "Archived"
  if (data.maxAgeSeconds !== undefined || data.maxCount !== undefined) return "Active"
  if (data.truncateBefore !== undefined && data.truncateBefore !== DeletedStreamNumber && last < data.truncateBefore) return "Active"
  return "Spent"
}

export const calculate = <E>(ctx: RunContext<E>, afterStream: string | undefined) =>
  Effect.gen(function*() {
    const { readIndex, log } = ctx.engine
    const chunkSize = log.config.chunkSize
    const context: CalculationContext = {
      spPosition: ctx.sp.position,
      effectiveNowMicros: ctx.sp.effectiveNowMicros,
      timeRangeAt: (position) => ctx.state.chunkTimeRange(Math.floor(position / chunkSize))
    }
    let after = afterStream
    let done = 0
    let sinceRest = 0
    while (true) {
      const batch = ctx.state.activeStreams(after, CALCULATION_BATCH)
      if (batch.length === 0) break
      for (const stream of batch) {
        const data = ctx.state.originalStream(stream)
        if (data === undefined) continue
        const entries = yield* readIndex.liveEntries(stream)
        let last = -1
        for (const e of entries) if (e.position < ctx.sp.position) last = e.eventNumber
        const result = calculateStream(data, entries, last, context)
        for (const w of result.weights) ctx.state.addChunkWeight(Math.floor(w.position / chunkSize), w.weight)
        const next: OriginalStreamData = {
          ...data,
          discardPoint: Math.max(data.discardPoint, result.discardPoint),
          maybeDiscardPoint: Math.max(data.maybeDiscardPoint, result.maybeDiscardPoint, result.discardPoint),
          status: statusAfterCalculation(data, last)
        }
        if (next.discardPoint !== data.discardPoint || next.maybeDiscardPoint !== data.maybeDiscardPoint || next.status !== data.status) {
          ctx.state.setOriginalStream(stream, next)
        }
        ctx.progress("Calculating", ++done, done)
        sinceRest += Math.max(1, entries.length)
        if (sinceRest >= REST_PERIOD) {
          sinceRest = 0
          yield* ctx.throttle.rest
        }
      }
      after = batch[batch.length - 1]
      yield* ctx.state.commit({ stage: "Calculating", sp: ctx.sp, doneStream: after })
    }
    yield* ctx.throttle.rest
  })
