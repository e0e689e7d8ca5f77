/**
 * The two name-keyed tables of the state (original streams, metastreams) described once, so the paged
 * machinery (pages, delta, cursor, compaction) is written once for both.
 *
 * Row codes: every value has a small code (an original stream's status, a metastream's presence). The
 * wholesale deletions are sets of codes (`hideMask`), so the delta can hide snapshot rows without reading
 * them, and row counts stay exact from per-code counts (DeltaTable.ts).
 *
 * Memory estimates (heap bytes, measured with `node --expose-gc` on Node 20 over 200,000 rows with 22-char
 * names, then rounded up): a name costs 24 + 2 × length (one-byte strings need 24 + length); an original
 * stream value 120, a metastream value 64; an array slot 8, a Map entry 40, a delta row record 32.
 * Measured: 168 bytes per decoded original row (estimate 204), 111 per metastream row (148), 189 per
 * original in a Map (estimate 260 with the delta record).
 */
import type { ByteReader, ByteWriter } from "./bytes.js"
import { readMetastream, readOriginal, writeMetastream, writeOriginal } from "./codec.js"
import type { CalculationStatus, MetastreamData, OriginalStreamData, SpentDeletion } from "./types.js"

export interface TableSpec<V> {
  /** Stored in every page of the table. */
  readonly id: 0 | 1
  readonly name: "originals" | "metastreams"
  readonly write: (w: ByteWriter, v: V) => void
  readonly read: (r: ByteReader) => V
  /** 1..codes: the value's code (see the header). */
  readonly codeOf: (v: V) => number
  readonly codes: number
  /** Estimated heap bytes of one decoded value. */
  readonly valueBytes: number
}

export const nameBytes = (name: string): number => 24 + 2 * name.length
export const SLOT_BYTES = 8
export const MAP_ENTRY_BYTES = 40
export const DELTA_ROW_BYTES = 32
/** A decoded page's own objects (the page record, its two arrays, its cache entry). */
export const PAGE_OVERHEAD_BYTES = 160

const STATUS_CODES: Readonly<Record<CalculationStatus, number>> = { Active: 1, Archived: 2, Spent: 3 }
export const ACTIVE_CODE = STATUS_CODES.Active

export const ORIGINALS: TableSpec<OriginalStreamData> = {
  id: 0,
  name: "originals",
  write: writeOriginal,
  read: readOriginal,
  codeOf: (v) => STATUS_CODES[v.status],
  codes: 3,
  valueBytes: 120
}

export const METASTREAMS: TableSpec<MetastreamData> = {
  id: 1,
  name: "metastreams",
  write: writeMetastream,
  read: readMetastream,
  codeOf: () => 1,
  codes: 1,
  valueBytes: 64
}

/** The codes of the original streams a wholesale Spent deletion removes. */
export const spentMask = (deletion: SpentDeletion): number =>
  deletion === "none"
    ? 0
    : deletion === "spent"
      ? 1 << STATUS_CODES.Spent
      : (1 << STATUS_CODES.Spent) | (1 << STATUS_CODES.Archived)

/** Every metastream code: "delete every metastream". */
export const ALL_METASTREAMS_MASK = 1 << 1

export const hiddenBy = <V>(spec: TableSpec<V>, mask: number, v: V): boolean =>
  mask !== 0 && (mask & (1 << spec.codeOf(v))) !== 0

/**
 * A layer of rows above the snapshot (the delta, a transaction's overlay). `row` answers undefined when the
 * layer says nothing about the name, null when the layer deleted it; `hideMask` hides rows BELOW the layer.
 */
export interface RowLayer<V> {
  readonly row: (name: string) => V | null | undefined
  readonly hideMask: number
  /** The names the layer has rows for (deleted ones included), ascending. */
  readonly sortedNames: () => ReadonlyArray<string>
}

export const BELOW: unique symbol = Symbol("below")

/** The value the layers (top first) decide for `name`, or BELOW when the answer is in the snapshot. */
export const decideAbove = <V>(
  spec: TableSpec<V>,
  layers: ReadonlyArray<RowLayer<V>>,
  name: string
): V | undefined | typeof BELOW => {
  for (let i = 0; i < layers.length; i++) {
    const row = layers[i]!.row(name)
    if (row === undefined) continue
    return row === null ? undefined : passUp(spec, layers, row, i)
  }
  return BELOW
}

/** A value from below layer `from` (all layers when omitted), as the layers above it let it through. */
export const passUp = <V>(
  spec: TableSpec<V>,
  layers: ReadonlyArray<RowLayer<V>>,
  value: V | undefined,
  from = layers.length
): V | undefined => {
  if (value === undefined) return undefined
  for (let i = from - 1; i >= 0; i--) if (hiddenBy(spec, layers[i]!.hideMask, value)) return undefined
  return value
}

/** Ascending, de-duplicated union of sorted name lists. */
export const mergeNames = (lists: ReadonlyArray<ReadonlyArray<string>>): Array<string> => {
  const nonEmpty = lists.filter((l) => l.length > 0)
  if (nonEmpty.length === 0) return []
  if (nonEmpty.length === 1) return [...nonEmpty[0]!]
  return [...new Set(nonEmpty.flat())].sort()
}
