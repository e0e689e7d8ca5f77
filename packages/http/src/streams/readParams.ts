/**
 * Path parameters of the read routes with the reference's 400 messages:
 * event numbers (or `head`), counts, `$all` positions, and the read-size ceiling (a 500 upstream, a 400 here).
 */
import { parseAllPosition } from "../atom/index.js"
import type { Reply } from "../Reply.js"
import { statusReply } from "../replies.js"
import { parseInt32, parseLong, type Parsed } from "./controlHeaders.js"

/** Default page size of feeds without a count. */
export const FeedPageSize = 20

/** Event numbers past 2^53 cannot exist here; they read as "far past the end". */
const clampEventNumber = (n: number): number => Math.min(n, Number.MAX_SAFE_INTEGER - 1)

/** `{event}`: a non-negative long, or `head` (→ -1) where allowed. */
export const eventNumberParam = (text: string | undefined, allowHead: boolean): Parsed<number> => {
  if (text === undefined) return { ok: true, value: -1 }
  if (allowHead && text === "head") return { ok: true, value: -1 }
  const n = parseLong(text)
  return n !== undefined && n >= 0
    ? { ok: true, value: clampEventNumber(n) }
    : { ok: false, message: `'${text}' is not valid event number` }
}

/** `{count}` of stream feeds: a positive int (default 20 when the route has none). */
export const countParam = (text: string | undefined): Parsed<number> => {
  if (text === undefined || text === "") return { ok: true, value: FeedPageSize }
  const n = parseInt32(text)
  return n !== undefined && n > 0
    ? { ok: true, value: n }
    : { ok: false, message: `'${text}' is not valid count. Should be positive integer` }
}

/** `{count}` of `$all` feeds. */
export const allCountParam = (text: string | undefined): Parsed<number> => {
  if (text === undefined || text === "") return { ok: true, value: FeedPageSize }
  const n = parseInt32(text)
  return n !== undefined && n > 0 ? { ok: true, value: n } : { ok: false, message: `Invalid count argument: ${text}` }
}

/** `{position}` of `$all` feeds: 32 hex digits, or `head` (→ -1) where allowed. */
export const positionParam = (text: string | undefined, allowHead: boolean): Parsed<number> => {
  if (text === undefined || (allowHead && text === "head")) return { ok: true, value: -1 }
  const position = parseAllPosition(text)
  return position === undefined
    ? { ok: false, message: `Invalid position argument: ${text}` }
    : { ok: true, value: position.commit }
}

/** Counts above the store's ceiling: 400 with the reason (upstream answers 500; no crafted request should get a 5xx here). */
export const tooBigRead = (count: number, maxReadCount: number): Reply | undefined =>
  count > maxReadCount ? statusReply(400, `Read size too big, should be less than ${maxReadCount} items`) : undefined
