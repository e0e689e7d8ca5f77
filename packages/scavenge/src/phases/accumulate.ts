/**
 * Accumulation: the one pass over the log a scavenge point adds. Every logical
 * chunk after the previous point's chunk up to the one holding this point is read once, ever; what it
 * says about streams (metadata, tombstones), about which metadata records newer ones replaced (weight),
 * and the range of its record timestamps (for `$maxAge`) goes into the state, committed with a checkpoint
 * per chunk, so a stop or crash re-reads at most one chunk.
 */
import { Effect } from "effect"
import {
  EventFlags,
  RecordKind,
  StorageCorrupt,
  isMetastream,
  metastreamOf,
  originalStreamOf,
  parseMetadata,
  scanRecords,
  type EventRecord
} from "@vellum/storage"
import { REST_PERIOD, type RunContext } from "./RunContext.js"
import { emptyOriginal, lookupMetastream, lookupOriginal } from "./StateAccess.js"
import { ScavengeFailed } from "./errors.js"

/** Accumulates logical chunks `fromChunk` up to the one holding the scavenge point. */
export const accumulate = <E>(ctx: RunContext<E>, fromChunk: number) =>
  Effect.gen(function* () {
    const chunkSize = ctx.engine.log.config.chunkSize
    const lastChunk = Math.floor(ctx.sp.position / chunkSize)
    const rest = { since: 0 }
    for (let n = fromChunk; n <= lastChunk; n++) {
      ctx.progress("Accumulating", n - fromChunk, lastChunk - fromChunk + 1)
      // A chunk is checked by its file checksum when the scan leaves it, after its records were accumulated:
      // on a mismatch this chunk's changes are dropped and it is read once more (the bytes may have been
      // damaged on their way from the disk); damage found twice fails the run.
      yield* Effect.catchIf(
        accumulateChunk(ctx, n, rest),
        (e) => e instanceof StorageCorrupt,
        () =>
          Effect.suspend(() => {
            ctx.state.rollback()
            return accumulateChunk(ctx, n, rest)
          })
      )
    }
    ctx.progress("Accumulating", lastChunk - fromChunk + 1, lastChunk - fromChunk + 1)
  })

/** One logical chunk: its records scanned, what they say put in the state, committed with the checkpoint. */
const accumulateChunk = <E>(ctx: RunContext<E>, n: number, rest: { since: number }) =>
  Effect.gen(function* () {
    const { log } = ctx.engine
    const chunkSize = log.config.chunkSize
    const limit = Math.min((n + 1) * chunkSize, ctx.sp.position + 1)
    let min = Infinity
    let max = -Infinity
    // The raw scan: per record only its kind, flags and time are read in place; tombstones and metastream
    // records (the only ones that change the state) are decoded.
    const scan = scanRecords(log, n * chunkSize, limit, { verifyFiles: true, pool: ctx.buffers })
    const pass = Effect.gen(function* () {
      while (yield* scan.nextPiece) {
        while (scan.next()) {
          if (scan.logPosition > ctx.sp.position) {
            return yield* Effect.fail(
              new ScavengeFailed({ message: "Accumulator expected to find the scavenge point before now" })
            )
          }
          const kind = scan.kind
          if (kind === RecordKind.Event) {
            const created = scan.createdMicros
            if (created < min) min = created
            if (created > max) max = created
            if ((scan.flags & EventFlags.Tombstone) !== 0 || scan.isMetastreamEvent) {
              const record = scan.decode()
              if (record.kind === RecordKind.Event) yield* accumulateEvent(ctx, record)
            }
          } else if (kind === RecordKind.ScavengePoint) {
            // The reference stores a scavenge point as an ordinary prepare, so its time counts in its chunk's
            // range (that chunk then never counts as wholly expired under `$maxAge`).
            const time = scan.scavengePointTimeMicros
            if (time < min) min = time
            if (time > max) max = time
          }
          if (++rest.since >= REST_PERIOD) {
            rest.since = 0
            yield* ctx.throttle.rest
          }
        }
      }
    })
    // The scan's read buffers serve the next chunk (or the run's rewrites), whichever way this pass ends.
    yield* Effect.ensuring(
      pass,
      Effect.sync(() => scan.release())
    )
    if (min <= max) ctx.state.setChunkTimeRange(n, { minMicros: min, maxMicros: max })
    yield* ctx.state.commit({ stage: "Accumulating", sp: ctx.sp, doneLogicalChunk: n })
  })

/** Only metadata records and tombstones change the state; ordinary events cost nothing here. */
const accumulateEvent = <E>(ctx: RunContext<E>, record: EventRecord) => {
  if ((record.flags & EventFlags.Tombstone) !== 0) return accumulateTombstone(ctx, record)
  if (isMetastream(record.stream)) return accumulateMetadata(ctx, record)
  return Effect.void
}

const chunkOf = <E>(ctx: RunContext<E>, position: number) => Math.floor(position / ctx.engine.log.config.chunkSize)

/** The metastream's index entries before the scavenge point whose records are still in the log. */
const metastreamEntries = <E>(ctx: RunContext<E>, metastream: string) =>
  Effect.map(ctx.engine.readIndex.liveEntries(metastream), (entries) =>
    entries.filter((e) => e.position < ctx.sp.position)
  )

const accumulateTombstone = <E>(ctx: RunContext<E>, record: EventRecord) =>
  Effect.gen(function* () {
    const stream = record.stream
    if (isMetastream(stream))
      return yield* Effect.fail(new ScavengeFailed({ message: `Found Tombstone in metadata stream ${stream}` }))
    const original = (yield* lookupOriginal(ctx.state, stream)) ?? emptyOriginal
    ctx.state.setOriginalStream(stream, {
      ...original,
      isTombstoned: true,
      status: "Active",
      calculatedLast: undefined,
      calculatedLastPosition: undefined
    })
    ctx.totals.indexWork = true
    const meta = metastreamOf(stream)
    const metaData = (yield* lookupMetastream(ctx.state, meta)) ?? { isTombstoned: false, discardPoint: 0 }
    ctx.state.setMetastream(meta, { ...metaData, isTombstoned: true })
    // The stream's last metadata record goes too (tombstones count even when out of order in the log).
    const entries = yield* metastreamEntries(ctx, meta)
    const last = entries[entries.length - 1]
    if (last !== undefined) ctx.state.addChunkWeight(chunkOf(ctx, last.position), 2)
  })

const accumulateMetadata = <E>(ctx: RunContext<E>, record: EventRecord) =>
  Effect.gen(function* () {
    const meta = record.stream
    const entries = yield* metastreamEntries(ctx, meta)
    // Out of order: an earlier record of this metastream already has this number or a later one.
    if (entries.some((e) => e.position < record.logPosition && e.eventNumber >= record.eventNumber)) {
      ctx.state.addChunkWeight(chunkOf(ctx, record.logPosition), 2)
      return
    }
    let replaced: { readonly eventNumber: number; readonly position: number } | undefined
    for (const e of entries) if (e.position < record.logPosition && e.eventNumber < record.eventNumber) replaced = e
    if (replaced !== undefined) ctx.state.addChunkWeight(chunkOf(ctx, replaced.position), 2)
    const stream = originalStreamOf(meta)
    // Metadata of a metastream (`$$$$x`) changes nothing for `$$x`: metastreams have fixed rules.
    if (!isMetastream(stream)) {
      // Parsed whatever the JSON flag says, as the reference's scavenger does (docs/decisions.md).
      const parsed = parseMetadata(record.data, true)
      const original = (yield* lookupOriginal(ctx.state, stream)) ?? emptyOriginal
      ctx.state.setOriginalStream(stream, {
        ...original,
        maxAgeSeconds: parsed.maxAge,
        maxCount: parsed.maxCount,
        truncateBefore: parsed.truncateBefore,
        status: "Active",
        calculatedLast: undefined,
        calculatedLastPosition: undefined
      })
    }
    const metaData = (yield* lookupMetastream(ctx.state, meta)) ?? { isTombstoned: false, discardPoint: 0 }
    const discardPoint = Math.max(metaData.discardPoint, record.eventNumber)
    ctx.state.setMetastream(meta, { ...metaData, discardPoint })
    // Only a point that moved leaves index entries to drop (a stream's first metadata event moves none).
    if (discardPoint !== metaData.discardPoint) ctx.totals.indexWork = true
  })
