/**
 * Which records a chunk execution removes and which index entries an index
 * execution drops, from the discard points the calculation stored. Pure functions over what the
 * state says of a stream; the phases look the state up.
 */

/** What the state says of an original stream (undefined: no metadata, no tombstone: keep everything). */
export interface OriginalInfo {
  readonly isTombstoned: boolean
  readonly discardPoint: number
  readonly maybeDiscardPoint: number
  readonly maxAgeSeconds: number | undefined
}

/** What the state says of a metastream `$$x` (its tombstone flag is x's). */
export interface MetastreamInfo {
  readonly isTombstoned: boolean
  readonly discardPoint: number
}

export interface DiscardContext {
  readonly spPosition: number
  readonly effectiveNowMicros: number
  readonly unsafeIgnoreHardDeletes: boolean
}

/** The chunk executor's rule for an event of an original stream: true when the chunk execution leaves it out. */
export const discardsOriginalEvent = (
  info: OriginalInfo | undefined,
  eventNumber: number,
  position: number,
  createdMicros: number,
  context: DiscardContext
): boolean => {
  if (position >= context.spPosition || info === undefined) return false
  if (info.isTombstoned && context.unsafeIgnoreHardDeletes) return true
  if (eventNumber < info.discardPoint) return true
  if (eventNumber >= info.maybeDiscardPoint) return false
  if (info.maxAgeSeconds === undefined) return false
  // Strictly before the cutoff: a record exactly at it is kept.
  return createdMicros < context.effectiveNowMicros - info.maxAgeSeconds * 1_000_000
}

/** The chunk executor's rule for an event of a metastream: only its latest metadata survives, none once its stream is tombstoned. */
export const discardsMetastreamEvent = (
  info: MetastreamInfo | undefined,
  eventNumber: number,
  position: number,
  context: DiscardContext
): boolean => {
  if (position >= context.spPosition || info === undefined) return false
  if (info.isTombstoned) return true
  return eventNumber < info.discardPoint
}

/** True when the index entry of an original stream's event is dropped (definite point only). */
export const dropsOriginalEntry = (
  info: OriginalInfo | undefined,
  eventNumber: number,
  position: number,
  context: DiscardContext
): boolean => {
  if (position >= context.spPosition || info === undefined) return false
  if (info.isTombstoned && context.unsafeIgnoreHardDeletes) return true
  return eventNumber < info.discardPoint
}

/** The index executor's rule for a metastream's entry: dropped when its stream is tombstoned or below its discard point. */
export const dropsMetastreamEntry = (
  info: MetastreamInfo | undefined,
  eventNumber: number,
  position: number,
  context: DiscardContext
): boolean => discardsMetastreamEvent(info, eventNumber, position, context)
