/**
 * Execution: the chunk executor's per-record rule applied to the chunks whose
 * weight passes the threshold, and the index executor's rule, which ignores the threshold.
 * The model treats every logical chunk as its own physical chunk (no merged chunks).
 */
import { isMetastream, type EventRecord, type LogRecord } from "@vellum/storage"
import { KeepAll, shouldDiscard } from "./discardPoint.js"
import { chunkOf, isEvent, keyOf } from "./logView.js"
import type { MetastreamState, ModelState, OriginalStreamState, ScavengePointSpec } from "./types.js"

export interface StreamStates {
  readonly originals: ReadonlyMap<string, OriginalStreamState>
  readonly metastreams: ReadonlyMap<string, MetastreamState>
}

export interface RunSettings {
  readonly sp: ScavengePointSpec
  readonly unsafeIgnoreHardDeletes: boolean
}

/** What the chunk executor knows about a record's stream. */
interface StreamInfo {
  readonly tombstoned: boolean
  readonly discardPoint: number
  readonly maybeDiscardPoint: number
  readonly maxAge: number | undefined
  readonly isMetastream: boolean
}

const KeepAllInfo = (metastream: boolean): StreamInfo => ({
  tombstoned: false,
  discardPoint: KeepAll,
  maybeDiscardPoint: KeepAll,
  maxAge: undefined,
  isMetastream: metastream
})

/** A metastream has a fixed max-count-1 behaviour and no maxAge; a stream with no row keeps all. */
const streamInfo = (streams: StreamStates, stream: string): StreamInfo => {
  if (isMetastream(stream)) {
    const meta = streams.metastreams.get(stream)
    return meta === undefined
      ? KeepAllInfo(true)
      : {
          tombstoned: meta.tombstoned,
          discardPoint: meta.discardPoint,
          maybeDiscardPoint: KeepAll,
          maxAge: undefined,
          isMetastream: true
        }
  }
  const data = streams.originals.get(stream)
  return data === undefined
    ? KeepAllInfo(false)
    : {
        tombstoned: data.tombstoned,
        discardPoint: data.discardPoint,
        maybeDiscardPoint: data.maybeDiscardPoint,
        maxAge: data.limits.maxAge,
        isMetastream: false
      }
}

/**
 * The reference's ChunkExecutor.ShouldDiscard for an event record in an executed chunk. (Step 3, explicit-transaction
 * prepares, has no counterpart: Vellum's writer commits every append implicitly.)
 */
export const discardFromChunk = (record: EventRecord, streams: StreamStates, run: RunSettings): boolean => {
  if (record.logPosition >= run.sp.position) return false
  const info = streamInfo(streams, record.stream)
  if (info.tombstoned && run.unsafeIgnoreHardDeletes) return true
  // The metastream of a tombstoned stream goes entirely, its last metadata record included.
  if (info.isMetastream && info.tombstoned) return true
  if (shouldDiscard(info.discardPoint, record.eventNumber)) return true
  if (record.eventNumber >= info.maybeDiscardPoint) return false
  if (info.maxAge === undefined) return false
  // Strictly less-than: a record exactly at the cutoff is kept.
  return record.createdMicros < run.sp.effectiveNowMicros - info.maxAge * 1_000_000
}

/** The reference's IndexExecutor.GenShouldKeep: only the DEFINITE discard point; maybe-expired entries stay. */
export const keepInIndex = (record: EventRecord, streams: StreamStates, run: RunSettings): boolean => {
  if (record.logPosition >= run.sp.position) return true
  const meta = isMetastream(record.stream)
  const data = meta ? streams.metastreams.get(record.stream) : streams.originals.get(record.stream)
  if (data === undefined) return true
  if (data.tombstoned && run.unsafeIgnoreHardDeletes) return false
  if (data.tombstoned && meta) return false
  return !shouldDiscard(data.discardPoint, record.eventNumber)
}

export interface IndexExecution {
  readonly keptInIndex: ReadonlySet<string>
  readonly removedFromIndex: ReadonlySet<string>
}

/** Runs the index executor over every event record (entries removed earlier stay removed). */
export const executeIndex = (
  records: ReadonlyArray<LogRecord>,
  streams: StreamStates,
  run: RunSettings,
  prior: ModelState | undefined
): IndexExecution => {
  const keptInIndex = new Set<string>()
  const removedFromIndex = new Set(prior?.removedFromIndex)
  for (const record of records) {
    if (!isEvent(record)) continue
    const key = keyOf(record)
    if (removedFromIndex.has(key)) continue
    if (keepInIndex(record, streams, run)) keptInIndex.add(key)
    else removedFromIndex.add(key)
  }
  return { keptInIndex, removedFromIndex }
}

export interface ChunkExecution {
  readonly keptInLog: ReadonlySet<number>
  readonly removedFromLog: ReadonlySet<number>
  /** Weights of the chunks left unexecuted (executed chunks are reset). */
  readonly pendingWeights: ReadonlyMap<number, number>
}

/**
 * Executes every chunk before the SP whose weight (carried + this run's) is strictly greater than
 * `threshold` — every chunk with `unsafeIgnoreHardDeletes` — and reports what stays in the log.
 */
export const executeChunks = (
  records: ReadonlyArray<LogRecord>,
  chunkSize: number,
  streams: StreamStates,
  run: RunSettings,
  runWeights: ReadonlyMap<number, number>,
  prior: ModelState | undefined,
  threshold: number
): ChunkExecution => {
  const weights = new Map(prior?.pendingWeights)
  for (const [chunk, weight] of runWeights) weights.set(chunk, (weights.get(chunk) ?? 0) + weight)
  // Chunks whose start lies before the SP are the ones the executor walks.
  const walked = (chunk: number): boolean => chunk * chunkSize < run.sp.position
  const executed = (chunk: number): boolean =>
    walked(chunk) && (run.unsafeIgnoreHardDeletes || (weights.get(chunk) ?? 0) > threshold)

  const keptInLog = new Set<number>()
  const removedFromLog = new Set(prior?.removedFromLog)
  for (const record of records) {
    if (removedFromLog.has(record.logPosition)) continue
    // Non-event records (commits, epochs, scavenge points) always survive.
    const discard =
      isEvent(record) && executed(chunkOf(record.logPosition, chunkSize)) && discardFromChunk(record, streams, run)
    if (discard) removedFromLog.add(record.logPosition)
    else keptInLog.add(record.logPosition)
  }
  const pendingWeights = new Map([...weights].filter(([chunk, weight]) => !executed(chunk) && weight !== 0))
  return { keptInLog, removedFromLog, pendingWeights }
}
