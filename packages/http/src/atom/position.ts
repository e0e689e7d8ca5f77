/**
 * `$all` positions in URLs: 32 hex digits, the commit position (16) then the prepare
 * position (16), uppercase when written, either case when read. Vellum's log has one position per record,
 * so both halves carry the same log position; a parsed token is read by its commit half.
 */

/** The start of the log: `00000000000000000000000000000000`. */
export const StartPosition = "0".repeat(32)

const HEX16 = /^[0-9A-Fa-f]{16}$/

const hex16 = (n: number): string => n.toString(16).toUpperCase().padStart(16, "0")

/** The URL token for a log position (commit = prepare = `position`). */
export const formatAllPosition = (position: number): string => {
  const h = hex16(position)
  return h + h
}

export interface AllPosition {
  readonly commit: number
  readonly prepare: number
}

/** Halves at or past 2^63 are negative longs upstream, hence rejected there. */
const LONG_LIMIT = 0x8000000000000000n

/**
 * Parses a 32-hex-digit token; undefined when malformed or negative (→ 400 `Invalid position argument`).
 * Values past 2^53 cannot name a record of this log; they are clamped to Number.MAX_SAFE_INTEGER, which
 * the store reads as "past the end".
 */
export const parseAllPosition = (text: string): AllPosition | undefined => {
  if (text.length !== 32) return undefined
  const commitText = text.slice(0, 16)
  const prepareText = text.slice(16)
  if (!HEX16.test(commitText) || !HEX16.test(prepareText)) return undefined
  const commit = BigInt("0x" + commitText)
  const prepare = BigInt("0x" + prepareText)
  if (commit >= LONG_LIMIT || prepare >= LONG_LIMIT) return undefined
  return { commit: toSafe(commit), prepare: toSafe(prepare) }
}

const toSafe = (n: bigint): number => (n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n))
