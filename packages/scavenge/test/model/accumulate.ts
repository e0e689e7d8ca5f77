/**
 * Accumulation: one pass over the records written since the previous scavenge
 * point, up to and including this one. It records metadata, tombstones and chunk timestamp ranges, sets
 * the metastream discard points, and adds the metadata weights.
 */
import {
  isMetastream,
  metastreamOf,
  originalStreamOf,
  RecordKind,
  type EventRecord,
  type LogRecord
} from "@vellum/storage"
import { discardBefore, KeepAll } from "./discardPoint.js"
import { addWeight, chunkOf, isTombstone } from "./logView.js"
import { parseScavengeMetadata } from "./scavengeMetadata.js"
import type { ChunkTimeRange, MetastreamState, ModelInput, OriginalStreamState } from "./types.js"

/** Weight of one removable record. */
export const DiscardWeight = 2

export interface Accumulated {
  readonly originals: Map<string, OriginalStreamState>
  readonly metastreams: Map<string, MetastreamState>
  readonly chunkTimeRanges: Map<number, ChunkTimeRange>
  readonly weights: Map<number, number>
}

interface Context {
  readonly input: ModelInput
  readonly index: ReadonlyMap<string, ReadonlyArray<EventRecord>>
  readonly acc: Accumulated
}

const freshOriginal: OriginalStreamState = {
  limits: {},
  tombstoned: false,
  discardPoint: KeepAll,
  maybeDiscardPoint: KeepAll,
  status: "Active"
}

/** The accumulation range: after the previous SP (whose chunk it closed) up to and including this SP's record. */
const inAccumulationRange = (input: ModelInput, position: number): boolean =>
  position <= input.scavengePoint.position &&
  (input.prior === undefined || position > input.prior.scavengePointPosition)

/**
 * The timestamp accumulation tracks, or undefined for records it skips. Upstream looks at prepares only;
 * a scavenge point is a prepare there (an event of `$scavengePoints`), so its time counts too.
 */
const timestampOf = (record: LogRecord): number | undefined =>
  record.kind === RecordKind.Event
    ? record.createdMicros
    : record.kind === RecordKind.ScavengePoint
      ? record.timeMicros
      : undefined

/** Min/max timestamp per chunk; timestamps need not rise monotonically. */
const trackTimestamp = (ranges: Map<number, ChunkTimeRange>, chunk: number, micros: number): void => {
  const range = ranges.get(chunk)
  ranges.set(
    chunk,
    range === undefined
      ? { minMicros: micros, maxMicros: micros }
      : { minMicros: Math.min(range.minMicros, micros), maxMicros: Math.max(range.maxMicros, micros) }
  )
}

/** Index entries of a stream positioned before the SP (what upstream's index reads return). */
const entriesBeforeSp = (ctx: Context, stream: string): ReadonlyArray<EventRecord> =>
  (ctx.index.get(stream) ?? []).filter((e) => e.logPosition < ctx.input.scavengePoint.position)

/** The ordering check: an earlier record of the metastream with an equal or higher event number. */
const isOutOfOrder = (entries: ReadonlyArray<EventRecord>, record: EventRecord): boolean =>
  entries.some((e) => e.logPosition < record.logPosition && e.eventNumber >= record.eventNumber)

/**
 * The record this one replaces — the first index entry from `eventNumber − 1` on, when it has a
 * smaller number and an earlier position.
 */
const replacedRecord = (entries: ReadonlyArray<EventRecord>, record: EventRecord): EventRecord | undefined => {
  const first = entries.find((e) => e.eventNumber >= Math.max(record.eventNumber - 1, 0))
  return first !== undefined && first.eventNumber < record.eventNumber && first.logPosition < record.logPosition
    ? first
    : undefined
}

/** A metadata record of `$$x`. */
const accumulateMetadata = (ctx: Context, record: EventRecord): void => {
  const { acc, input } = ctx
  const entries = entriesBeforeSp(ctx, record.stream)
  if (isOutOfOrder(entries, record)) {
    // Ignored for metadata and discard points; its own chunk gets the weight.
    addWeight(acc.weights, chunkOf(record.logPosition, input.chunkSize), DiscardWeight)
    return
  }
  const replaced = replacedRecord(entries, record)
  if (replaced !== undefined) addWeight(acc.weights, chunkOf(replaced.logPosition, input.chunkSize), DiscardWeight)
  const original = originalStreamOf(record.stream)
  // Metadata of a metastream (`$$$$y`) sets nothing for `$$y`: metastreams have fixed behaviour.
  if (!isMetastream(original)) {
    const existing = acc.originals.get(original) ?? freshOriginal
    acc.originals.set(original, { ...existing, limits: parseScavengeMetadata(record.data), status: "Active" })
  }
  // Only the latest in-order metadata record survives.
  const meta = acc.metastreams.get(record.stream)
  acc.metastreams.set(record.stream, {
    tombstoned: meta?.tombstoned ?? false,
    discardPoint: Math.max(meta?.discardPoint ?? KeepAll, discardBefore(record.eventNumber))
  })
}

/** A tombstone of `x`; it takes effect even when out of order in the log. */
const accumulateTombstone = (ctx: Context, record: EventRecord): void => {
  const { acc, input } = ctx
  if (isMetastream(record.stream)) throw new Error(`Found Tombstone in metadata stream ${record.stream}`)
  const existing = acc.originals.get(record.stream) ?? freshOriginal
  acc.originals.set(record.stream, { ...existing, tombstoned: true, status: "Active" })
  const metastream = metastreamOf(record.stream)
  const meta = acc.metastreams.get(metastream)
  acc.metastreams.set(metastream, { tombstoned: true, discardPoint: meta?.discardPoint ?? KeepAll })
  // The last metadata record now goes too.
  const metaEntries = entriesBeforeSp(ctx, metastream)
  const lastMeta = metaEntries[metaEntries.length - 1]
  if (lastMeta !== undefined) addWeight(acc.weights, chunkOf(lastMeta.logPosition, input.chunkSize), DiscardWeight)
}

/** Runs accumulation; `index` is the index as it stands before this run (see `indexByStream`). */
export const accumulate = (input: ModelInput, index: ReadonlyMap<string, ReadonlyArray<EventRecord>>): Accumulated => {
  const acc: Accumulated = {
    originals: new Map(input.prior?.originals),
    metastreams: new Map(input.prior?.metastreams),
    chunkTimeRanges: new Map(input.prior?.chunkTimeRanges),
    weights: new Map()
  }
  const ctx: Context = { input, index, acc }
  for (const record of input.records) {
    if (!inAccumulationRange(input, record.logPosition)) continue
    const micros = timestampOf(record)
    if (micros !== undefined) trackTimestamp(acc.chunkTimeRanges, chunkOf(record.logPosition, input.chunkSize), micros)
    if (record.kind !== RecordKind.Event) continue
    // Classification order: tombstone, then metadata, then an original-stream record (nothing to do).
    if (isTombstone(record)) accumulateTombstone(ctx, record)
    else if (isMetastream(record.stream)) accumulateMetadata(ctx, record)
  }
  return acc
}
