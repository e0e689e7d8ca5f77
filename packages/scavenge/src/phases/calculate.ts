/**
 * Calculation: for every original stream the state marks Active, walk its index
 * entries before the scavenge point and move its discard points forward (never back), adding the weight
 * of each removable event to its chunk. Streams go in name order, committed in batches with the last name
 * done as the checkpoint, so a resumed run continues after it.
 */
import { Effect } from "effect"
import { DeletedStreamNumber, RecordKind } from "@vellum/storage"
import { StreamWalk, type CalculationContext } from "../rules/calculateStream.js"
import { REST_PERIOD, UNCACHED, type RunContext } from "./RunContext.js"
import { StreamsByHash } from "./streamHashes.js"
import { lookupOriginal, type OriginalStreamData, type StreamStatus } from "./StateAccess.js"

/** Streams per committed batch (the reference's calculator batch). */
export const CALCULATION_BATCH = 32_768

/** Whether a later run can still find something to remove in the stream (upstream `CalculateStatus`). */
export const statusAfterCalculation = (data: OriginalStreamData, last: number): StreamStatus => {
  if (data.isTombstoned) return "Archived"
  if (data.maxAgeSeconds !== undefined || data.maxCount !== undefined) return "Active"
  if (data.truncateBefore !== undefined && data.truncateBefore !== DeletedStreamNumber && last < data.truncateBefore)
    return "Active"
  return "Spent"
}

/** Event numbers per index read while walking a stream (the reference's calculator slice). */
const SLICE = 8192

/**
 * Whether an index entry is the stream's (as the reference's calculator sees it): a memtable entry is
 * exact; a table entry is checked against its record. An entry whose record a `$maxAge` execution removed is
 * still the stream's, so it is judged (and weighed) again and again until its discard point passes it
 * — unless other streams with state share its hash, when nobody can tell whose it was (upstream skips
 * it too). A stream without state never loses a record, so it cannot own an entry whose record is gone.
 */
const isOurs = <E>(
  ctx: RunContext<E>,
  stream: string,
  hashShared: boolean,
  entry: { readonly exact: boolean; readonly position: number }
) =>
  entry.exact
    ? Effect.succeed(true)
    : Effect.map(ctx.engine.log.readRecord(entry.position, ctx.engine.readIndex.committed(), UNCACHED), (record) =>
        record === undefined ? !hashShared : record.kind === RecordKind.Event && record.stream === stream
      )

const NO_EVENT = { eventNumber: -1, position: undefined } as const

/** The stream's last event before the scavenge point (number -1 if none), from its newest entries. */
const lastBeforePoint = <E>(ctx: RunContext<E>, stream: string, hashShared: boolean) =>
  Effect.gen(function* () {
    for (const limit of [64, Number.MAX_SAFE_INTEGER]) {
      const newest = yield* ctx.engine.index.latest(stream, limit)
      for (const entry of newest) {
        if (entry.position < ctx.sp.position && (yield* isOurs(ctx, stream, hashShared, entry))) {
          return { eventNumber: entry.eventNumber, position: entry.position }
        }
      }
      if (newest.length < limit) return NO_EVENT
    }
    return NO_EVENT
  })

/**
 * Whether the stream gained no event since it was last calculated. The newest index entry of its hash
 * still being the one at the remembered position says so without reading a record (any later event of the
 * stream would have a newer entry of the same hash); otherwise its last event number is asked for.
 */
const unchangedSinceCalculated = <E>(ctx: RunContext<E>, stream: string, data: OriginalStreamData) =>
  Effect.gen(function* () {
    if (data.calculatedLastPosition !== undefined) {
      const [newest] = yield* ctx.engine.index.latest(stream, 1)
      if (
        newest !== undefined &&
        newest.position === data.calculatedLastPosition &&
        newest.eventNumber === data.calculatedLast
      )
        return true
    }
    return (yield* ctx.engine.readIndex.lastEventNumber(stream)) === data.calculatedLast
  })

/**
 * Walks the stream's entries from its current discard point (entries below it are gone from the index) in
 * slices, stopping at the first kept event: a stream with nothing new to remove costs a few index reads,
 * not a read of every entry and its record.
 */
const calculateOne = <E>(
  ctx: RunContext<E>,
  stream: string,
  data: OriginalStreamData,
  hashes: StreamsByHash,
  context: CalculationContext
) =>
  Effect.gen(function* () {
    const { hi, lo } = ctx.engine.index.hashOf(stream)
    const hashShared = hashes.isShared(hi, lo)
    const last = yield* lastBeforePoint(ctx, stream, hashShared)
    const walk = new StreamWalk(data, last.eventNumber, context)
    let from = data.discardPoint
    let entries = 0
    // Slices grow from small (most walks stop at their first entry) to the reference's 8192.
    let size = 16
    while (!walk.done && from <= DeletedStreamNumber) {
      let to = Math.min(DeletedStreamNumber, from + size - 1)
      size = Math.min(SLICE, size * 4)
      let slice = yield* ctx.engine.index.range(stream, from, to)
      if (slice.length === 0 && to < DeletedStreamNumber) {
        // A gap (e.g. up to a tombstone's number): take the rest at once rather than walk empty slices.
        to = DeletedStreamNumber
        slice = yield* ctx.engine.index.range(stream, from, to)
      }
      let lastNumber = -1
      for (const entry of slice) {
        if (entry.eventNumber === lastNumber || !(yield* isOurs(ctx, stream, hashShared, entry))) continue
        lastNumber = entry.eventNumber
        entries++
        if (!walk.step(entry)) break
      }
      if (to === DeletedStreamNumber) break
      from = to + 1
    }
    return { result: walk.result(), last, entries }
  })

export const calculate = <E>(ctx: RunContext<E>, afterStream: string | undefined) =>
  Effect.gen(function* () {
    const { log } = ctx.engine
    const chunkSize = log.config.chunkSize
    const context: CalculationContext = {
      spPosition: ctx.sp.position,
      effectiveNowMicros: ctx.sp.effectiveNowMicros,
      timeRangeAt: (position) => ctx.state.chunkTimeRange(Math.floor(position / chunkSize))
    }
    const hashes = yield* StreamsByHash.build(ctx)
    let after = afterStream
    let done = 0
    let sinceRest = 0
    while (true) {
      const batch = yield* ctx.state.activeStreams(after, CALCULATION_BATCH)
      if (batch.length === 0) break
      for (const stream of batch) {
        const data = yield* lookupOriginal(ctx.state, stream)
        if (data === undefined) continue
        // Same limits (no `$maxAge`: time does not change the answer) and no event since the last
        // calculation: the answer is the one stored.
        if (
          data.maxAgeSeconds === undefined &&
          data.calculatedLast !== undefined &&
          (yield* unchangedSinceCalculated(ctx, stream, data))
        ) {
          ctx.progress("Calculating", ++done, done)
          continue
        }
        const { result, last, entries } = yield* calculateOne(ctx, stream, data, hashes, context)
        for (const w of result.weights) ctx.state.addChunkWeight(Math.floor(w.position / chunkSize), w.weight)
        const next: OriginalStreamData = {
          ...data,
          discardPoint: Math.max(data.discardPoint, result.discardPoint),
          maybeDiscardPoint: Math.max(data.maybeDiscardPoint, result.maybeDiscardPoint, result.discardPoint),
          status: statusAfterCalculation(data, last.eventNumber),
          calculatedLast: last.eventNumber,
          calculatedLastPosition: last.position
        }
        if (next.discardPoint !== data.discardPoint) ctx.totals.indexWork = true
        if (
          next.discardPoint !== data.discardPoint ||
          next.maybeDiscardPoint !== data.maybeDiscardPoint ||
          next.status !== data.status ||
          next.calculatedLast !== data.calculatedLast ||
          next.calculatedLastPosition !== data.calculatedLastPosition
        ) {
          ctx.state.setOriginalStream(stream, next)
        }
        ctx.progress("Calculating", ++done, done)
        sinceRest += Math.max(1, entries)
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
