/**
 * Index entries: the shared types, the 24-byte binary form and the key order.
 *
 * An entry is (hashHi u32, hashLo u32, eventNumber, position), ordered ascending by all four fields.
 * Event numbers and positions are non-negative safe integers (< 2^53), so they live in doubles and are
 * written as u64 little-endian; the hard-delete tombstone is eventNumber = Number.MAX_SAFE_INTEGER.
 * Everything here is plain code over Buffers: it runs per entry inside one Effect per block or batch.
 */
import type { Effect } from "effect"
import { Schema } from "effect"
import { assert } from "@vellum/platform"
import type { StreamHash } from "./StreamHash.js"

/** What a lookup returns. `exact` is true for memtable hits (same stream name); table hits may collide. */
export interface IndexEntry {
  readonly eventNumber: number
  readonly position: number
  readonly exact: boolean
}

/**
 * An entry's full key as one value, for code off the hot paths (which pass the four numbers instead).
 * The hash is the two u32 halves the tables store: no BigInt conversion anywhere.
 */
export interface IndexEntryKey {
  readonly hash: StreamHash
  readonly eventNumber: number
  readonly position: number
}

/** One entry handed to `TableIndex.addBatch`. */
export interface NewIndexEntry {
  readonly stream: string
  readonly eventNumber: number
  readonly position: number
}

/** The index is unusable as stored (bad CRC, truncated table, unreadable manifest): rebuild it from the log. */
export class IndexCorrupt extends Schema.TaggedError<IndexCorrupt>()("IndexCorrupt", {
  path: Schema.String,
  message: Schema.String
}) {}

export const ENTRY_BYTES = 24
/** An entry is 6 little-endian u32 words: hashHi, hashLo, eventNumber lo/hi, position lo/hi. */
export const ENTRY_WORDS = 6
assert(ENTRY_BYTES === ENTRY_WORDS * 4, "Entry: an entry's bytes are its u32 words")

/** Copies entry `from` of `src` to slot `to` of `dst`, word by word (no view allocated per entry). */
export const copyEntry = (src: Uint32Array, from: number, dst: Uint32Array, to: number): void => {
  const s = from * ENTRY_WORDS
  const d = to * ENTRY_WORDS
  dst[d] = src[s]!
  dst[d + 1] = src[s + 1]!
  dst[d + 2] = src[s + 2]!
  dst[d + 3] = src[s + 3]!
  dst[d + 4] = src[s + 4]!
  dst[d + 5] = src[s + 5]!
}
const TWO_32 = 4294967296

/** Largest value of the high u32 of a safe integer. */
export const MAX_SAFE_HI = 0x1fffff

// Hot paths read entries through Uint32Array views (≈ 10× faster than Buffer.readUInt32LE on Node 20),
// which read in platform byte order: the file format is little-endian, so refuse big-endian hosts.
if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) throw new Error("the table index needs a little-endian host")

/** A u32 view of `buf` (copied first if its offset is not 4-aligned); `buf.length` is a multiple of 4. */
export const wordsOf = (buf: Uint8Array): Uint32Array => {
  const b = (buf.byteOffset & 3) === 0 ? buf : Uint8Array.from(buf)
  return new Uint32Array(b.buffer, b.byteOffset, b.byteLength >>> 2)
}

/** The bytes of the first `entries` entries of `w`, without copying. */
export const bytesOf = (w: Uint32Array, entries: number): Buffer =>
  Buffer.from(w.buffer, w.byteOffset, entries * ENTRY_BYTES)

/** A fresh word array for `entries` entries (own, aligned ArrayBuffer). */
export const allocEntries = (entries: number): Uint32Array => new Uint32Array(entries * ENTRY_WORDS)

export const writeEntry = (
  w: Uint32Array,
  i: number,
  hi: number,
  lo: number,
  eventNumber: number,
  position: number
): void => {
  const o = i * ENTRY_WORDS
  w[o] = hi
  w[o + 1] = lo
  // Assigning to a Uint32Array keeps the value modulo 2^32: the low word.
  w[o + 2] = eventNumber
  w[o + 3] = Math.floor(eventNumber / TWO_32)
  w[o + 4] = position
  w[o + 5] = Math.floor(position / TWO_32)
}

export const hiAt = (w: Uint32Array, i: number): number => w[i * ENTRY_WORDS]!
export const loAt = (w: Uint32Array, i: number): number => w[i * ENTRY_WORDS + 1]!
export const eventNumberAt = (w: Uint32Array, i: number): number =>
  w[i * ENTRY_WORDS + 3]! * TWO_32 + w[i * ENTRY_WORDS + 2]!
export const positionAt = (w: Uint32Array, i: number): number =>
  w[i * ENTRY_WORDS + 5]! * TWO_32 + w[i * ENTRY_WORDS + 4]!

/** Compares entry `i` with the key (hi, lo, eventNumber), ignoring the position. */
export const compareKeyAt = (w: Uint32Array, i: number, hi: number, lo: number, eventNumber: number): number => {
  const o = i * ENTRY_WORDS
  const h = w[o]!
  if (h !== hi) return h < hi ? -1 : 1
  const l = w[o + 1]!
  if (l !== lo) return l < lo ? -1 : 1
  const e = w[o + 3]! * TWO_32 + w[o + 2]!
  return e === eventNumber ? 0 : e < eventNumber ? -1 : 1
}

/** Full order of two keys; used by merges and the writer's order check. */
export const compareKeys = (
  aHi: number,
  aLo: number,
  aEn: number,
  aPos: number,
  bHi: number,
  bLo: number,
  bEn: number,
  bPos: number
): number => {
  if (aHi !== bHi) return aHi < bHi ? -1 : 1
  if (aLo !== bLo) return aLo < bLo ? -1 : 1
  if (aEn !== bEn) return aEn < bEn ? -1 : 1
  if (aPos !== bPos) return aPos < bPos ? -1 : 1
  return 0
}

/**
 * A sorted stream of entries, pulled in chunks: `pull(out)` writes up to out.length / 6 entries (ascending,
 * continuing the previous chunk) at the start of `out` and returns how many; 0 means the end.
 * The memtable flush and the k-way merge are sources; a scavenger can wrap one to filter entries.
 */
export interface EntrySource<E = never> {
  readonly pull: (out: Uint32Array) => Effect.Effect<number, E>
}

/** Ascending by (eventNumber, position); exact entries first on full ties (they are the cheap ones). */
export const compareAscending = (a: IndexEntry, b: IndexEntry): number =>
  a.eventNumber !== b.eventNumber
    ? a.eventNumber - b.eventNumber
    : a.position !== b.position
      ? a.position - b.position
      : a.exact === b.exact
        ? 0
        : a.exact
          ? -1
          : 1

/** Descending by eventNumber; ties: lowest position first, then exact first. */
export const compareLatest = (a: IndexEntry, b: IndexEntry): number =>
  a.eventNumber !== b.eventNumber
    ? b.eventNumber - a.eventNumber
    : a.position !== b.position
      ? a.position - b.position
      : a.exact === b.exact
        ? 0
        : a.exact
          ? -1
          : 1
