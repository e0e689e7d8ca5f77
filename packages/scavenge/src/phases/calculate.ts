/**
 * Calculation (spec/scavenge.md §2.3): for every original stream the state marks Active, walk its index
 * entries before the scavenge point and move its discard points forward (never back), adding the weight
 * of each removable event to its chunk. Streams go in name order, committed in batches with the last name
 * done as the checkpoint, so a resumed run continues after it.
 */
import { Effect } from "effect"
import { DeletedStreamNumber, RecordKind } from "@vellum/storage"
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

/** `hi:lo` of every hash two or more streams with state share (their entries need their records to tell). */
const sharedHashes = <E>(ctx: RunContext<E>): ReadonlySet<string> => {
  const seen = new Set<string>()
  const shared = new Set<string>()
  for (const stream of ctx.state.streamsWithData()) {
    const { hi, lo } = ctx.engine.index.hashOf(stream)
    const key = `${hi}:${lo}`
    if (seen.has(key)) shared.add(key)
    seen.add(key)
  }
  return shared
}

/**
 * The stream's index entries, ascending, one per event number (lowest position first), as the reference's
 * calculator sees them (§2.3): an entry whose record a `$maxAge` execution removed is still the stream's,
 * so it is judged (and weighed, §4.1) again and again until its discard point passes it (§3.5). Only an
 * entry of a hash other streams with state share needs its record to tell whose it is; with the record
 * gone it is not counted (upstream does the same for a colliding stream). A stream without state never
 * loses a record, so it cannot own an entry whose record is gone.
 */
const calculationEntries = <E>(ctx: RunContext<E>, stream: string, shared: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const { index, log, readIndex } = ctx.engine
    const { hi, lo } = index.hashOf(stream)
    const hashShared = shared.has(`${hi}:${lo}`)
    const raw = yield* index.range(stream, 0, DeletedStreamNumber)
    const out: Array<{ readonly eventNumber: number; readonly position: number }> = []
    let lastNumber = -1
    for (const entry of raw) {
      if (entry.eventNumber === lastNumber) continue
      if (!entry.exact) {
        const record = yield* log.readRecord(entry.position, readIndex.committed())
        const ours = record === undefined ? !hashShared : record.kind === RecordKind.Event && record.stream === stream
        if (!ours) continue
      }
      out.push({ eventNumber: entry.eventNumber, position: entry.position })
      lastNumber = entry.eventNumber
    }
    return out
  })

export const calculate = <E>(ctx: RunContext<E>, afterStream: string | undefined) =>
  Effect.gen(function*() {
    const { log } = ctx.engine
    const chunkSize = log.config.chunkSize
    const context: CalculationContext = {
      spPosition: ctx.sp.position,
      effectiveNowMicros: ctx.sp.effectiveNowMicros,
      timeRangeAt: (position) => ctx.state.chunkTimeRange(Math.floor(position / chunkSize))
    }
    const shared = sharedHashes(ctx)
    let after = afterStream
    let done = 0
    let sinceRest = 0
    while (true) {
      const batch = ctx.state.activeStreams(after, CALCULATION_BATCH)
      if (batch.length === 0) break
      for (const stream of batch) {
        const data = ctx.state.originalStream(stream)
        if (data === undefined) continue
        const entries = yield* calculationEntries(ctx, stream, shared)
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
