/**
 * Cutting the log into slices by its framing alone: a record's length prefix says where the next one starts,
 * its kind and flags whether it ends a write unit, and nothing else of it is decoded (decoding every record
 * to cut a slice was most of a leader's work while a follower caught up). The record's checksum is left to
 * the follower, which checks every record before it writes a byte.
 */
import { readU32Unchecked, readU64 } from "../codec/bytes.js"
import { FRAME_OVERHEAD, MAX_RECORD_BODY, endsUnitAt, isWellFramed } from "../log/records.js"

/** Offsets in a framed record: its body starts after the length and checksum; flags follow the header. */
const BODY = 8
const POSITION = BODY + 2
/** A body holds at least its kind, version and position. */
const MIN_BODY = 10

/**
 * How many bytes of `bytes` (framed records, the first at log position `from`) are whole write units,
 * taken in order while they stay within `maxBytes` (the first unit always, whatever its size): 0 when no
 * unit ends in `bytes`, "damaged" when a record is not well framed or does not carry the position it lies at.
 */
export const wholeUnitsLength = (bytes: Buffer, from: number, maxBytes: number): number | "damaged" => {
  let end = 0
  for (let at = 0; at + BODY <= bytes.length;) {
    const body = readU32Unchecked(bytes, at)
    // Checked before reading on for the rest of a record: a wrong length would have it read far for nothing.
    if (body < MIN_BODY || body > MAX_RECORD_BODY) return "damaged"
    if (at + POSITION + 8 <= bytes.length && readU64(bytes, at + POSITION) !== from + at) return "damaged"
    const next = at + body + FRAME_OVERHEAD
    if (next > bytes.length) break
    if (!isWellFramed(bytes, at, body, false)) return "damaged"
    const endsUnit = endsUnitAt(bytes, at)
    at = next
    if (!endsUnit) continue
    if (at > maxBytes && end > 0) break
    end = at
    if (end >= maxBytes) break
  }
  return end
}
