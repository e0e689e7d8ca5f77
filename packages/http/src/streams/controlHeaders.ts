/**
 * The stream routes' control headers: each read under its `Kurrent-*`
 * name first, then the legacy `ES-*` name. A malformed value yields the reference's 400 message, which
 * always names the `Kurrent-` header.
 */
import { firstHeader, type NormalizedHeaders } from "../HttpRequest.js"

export type Parsed<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly message: string }

const ok = <A>(value: A): Parsed<A> => ({ ok: true, value })
const wrongFormat = (header: string): Parsed<never> => ({ ok: false, message: `${header} header in wrong format.` })

/** C# long.TryParse (invariant culture, integer style): optional surrounding whitespace and sign. */
const LONG = /^\s*[+-]?\d+\s*$/
const INT_MAX = 2147483647

export const parseLong = (text: string): number | undefined => {
  if (!LONG.test(text)) return undefined
  const value = BigInt(text.trim())
  if (value > 9223372036854775807n || value < -9223372036854775808n) return undefined
  return Number(value)
}

export const parseInt32 = (text: string): number | undefined => {
  const value = parseLong(text)
  return value !== undefined && value <= INT_MAX && value >= -INT_MAX - 1 ? value : undefined
}

/** `True`/`False` in any case; anything else is malformed. */
const parseBoolean = (text: string): boolean | undefined =>
  text.toLowerCase() === "true" ? true : text.toLowerCase() === "false" ? false : undefined

/** ExpectedVersion: an integer ≥ -4 (default -2, any). */
export const expectedVersion = (headers: NormalizedHeaders): Parsed<number> => {
  const value = firstHeader(headers, "kurrent-expectedversion", "es-expectedversion")
  if (value === undefined) return ok(-2)
  const parsed = parseLong(value)
  // Past 2^53 no stream can be at that version; such a number could only ever be a wrong version.
  return parsed !== undefined && parsed >= -4
    ? ok(Math.min(parsed, Number.MAX_SAFE_INTEGER - 1))
    : wrongFormat("Kurrent-ExpectedVersion")
}

/** The event type header (an empty value counts as absent). */
export const eventType = (headers: NormalizedHeaders): string | undefined =>
  firstHeader(headers, "kurrent-eventtype", "es-eventtype")

const CANONICAL_GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const GUID_FORMS = [
  /^[0-9a-f]{32}$/i,
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  /^\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}$/i,
  /^\([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\)$/i
]

/**
 * A GUID in any of .NET's usual textual forms (N, D, B, P), as the canonical lowercase dashed form;
 * undefined when unparsable.
 */
export const parseGuid = (text: string): string | undefined => {
  // Nearly every id arrives canonical already (every client library sends it so): one test, no rebuild.
  if (CANONICAL_GUID.test(text)) return text
  const trimmed = text.trim()
  if (!GUID_FORMS.some((form) => form.test(trimmed))) return undefined
  const hex = trimmed.replace(/[^0-9a-fA-F]/g, "").toLowerCase()
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export const EmptyGuid = "00000000-0000-0000-0000-000000000000"

/** EventId: absent → undefined; present → a non-zero GUID or malformed. */
export const eventId = (headers: NormalizedHeaders): Parsed<string | undefined> => {
  const value = firstHeader(headers, "kurrent-eventid", "es-eventid")
  if (value === undefined) return ok(undefined)
  const guid = parseGuid(value)
  return guid !== undefined && guid !== EmptyGuid ? ok(guid) : wrongFormat("Kurrent-EventId")
}

/**
 * RequireLeader from any of its three names: true if any says `True`; otherwise each present one must
 * say `False`. (The pipeline routes a requires-leader request to the leader before any handler runs:
 * leaderRouting.ts; handlers only validate the value.)
 */
export const requireLeader = (headers: NormalizedHeaders): Parsed<boolean> => {
  const values = ["kurrent-requireleader", "es-requireleader", "es-requiremaster"]
    .map((name) => headers[name])
    .filter((v): v is string => v !== undefined && v !== "")
  if (values.length === 0) return ok(false)
  if (values.some((v) => v.toLowerCase() === "true")) return ok(true)
  return values.some((v) => v.toLowerCase() === "false") ? ok(false) : wrongFormat("Kurrent-RequireLeader")
}

const booleanHeader = (
  headers: NormalizedHeaders,
  current: string,
  legacy: string,
  label: string,
  fallback: boolean
): Parsed<boolean> => {
  const value = firstHeader(headers, current, legacy)
  if (value === undefined) return ok(fallback)
  const parsed = parseBoolean(value)
  return parsed === undefined ? wrongFormat(label) : ok(parsed)
}

export const hardDelete = (headers: NormalizedHeaders): Parsed<boolean> =>
  booleanHeader(headers, "kurrent-harddelete", "es-harddelete", "Kurrent-HardDelete", false)

/** ResolveLinkTos with the route's default (true for stream reads, false for `$all` and metastreams). */
export const resolveLinkTos = (headers: NormalizedHeaders, fallback: boolean): Parsed<boolean> =>
  booleanHeader(headers, "kurrent-resolvelinktos", "es-resolvelinktos", "Kurrent-ResolveLinkTos", fallback)

/** LongPoll: a positive 32-bit number of seconds, or absent. */
export const longPoll = (headers: NormalizedHeaders): Parsed<number | undefined> => {
  const value = firstHeader(headers, "kurrent-longpoll", "es-longpoll")
  if (value === undefined) return ok(undefined)
  const seconds = parseInt32(value)
  return seconds !== undefined && seconds > 0 ? ok(seconds) : wrongFormat("Kurrent-LongPoll")
}
