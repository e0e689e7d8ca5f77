/**
 * Conditional-GET and caching rules of reads as pure decisions: which pages are
 * immutable (cached for a year), which carry an ETag, the ETag's value, and the If-None-Match check.
 *
 * An ETag is `<position>;<hash of the negotiated Content-Type>`: the same page in another media type is a
 * different representation, so its ETag must differ. Upstream hashes with .NET's per-process string hash;
 * any stable hash is wire-compatible (ETags are opaque), so this one uses 32-bit FNV-1a, as a signed int
 * like .NET's GetHashCode prints.
 */

export const ImmutableMaxAge = 31_536_000
export const ImmutableCacheControl = `max-age=${ImmutableMaxAge}, private`
export const NoCacheControl = "max-age=0, no-cache, must-revalidate"

/** Stable signed 32-bit hash of a media type string (FNV-1a over UTF-16 code units). */
export const contentTypeHash = (contentType: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < contentType.length; i++) {
    h ^= contentType.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h | 0
}

/** The ETag value without quotes, as written into the feed's `eTag` property. */
export const positionETag = (position: number, contentType: string): string =>
  `${position};${contentTypeHash(contentType)}`

/**
 * The position named by an If-None-Match header, when the header is an ETag of this media type:
 * surrounding quotes stripped, exactly two `;`-separated parts, the hash part equal to this type's hash,
 * the position an integer. Undefined otherwise (the header is then ignored).
 */
export const ifNoneMatchPosition = (header: string | undefined, contentType: string): number | undefined => {
  if (header === undefined) return undefined
  let value = header.trim()
  if (value.startsWith('"')) value = value.slice(1)
  if (value.endsWith('"')) value = value.slice(0, -1)
  const parts = value.split(";")
  if (parts.length !== 2) return undefined
  if (parts[1] !== String(contentTypeHash(contentType))) return undefined
  if (!/^-?[0-9]+$/.test(parts[0]!)) return undefined
  const position = Number(parts[0])
  return Number.isSafeInteger(position) ? position : undefined
}

/** What a read's response says about caching. */
export interface CacheDecision {
  /** Immutable: `max-age=31536000, private` and no ETag. */
  readonly immutable: boolean
  /** The position the ETag is built from when not immutable (undefined: no ETag header). */
  readonly eTagPosition: number | undefined
}

const Immutable: CacheDecision = { immutable: true, eTagPosition: undefined }

/**
 * A stream feed page. `from` is the requested event number, -1 for `head` (backward only).
 * Backward pages are immutable unless they are the head or start past the last event; forward pages
 * once they are full (`last + 1 ≥ from + count`).
 */
export const streamFeedCache = (
  direction: "forward" | "backward",
  from: number,
  count: number,
  lastEventNumber: number
): CacheDecision => {
  const immutable =
    direction === "backward" ? from >= 0 && lastEventNumber >= from : lastEventNumber + 1 >= from + count
  return immutable ? Immutable : { immutable: false, eTagPosition: lastEventNumber }
}

/**
 * A `$all` page. Backward: immutable unless it is the head read or starts past `lastCommitPosition` (the
 * end of the log when the read ran). Forward: immutable when the page is full. The ETag carries
 * `lastCommitPosition`.
 */
export const allFeedCache = (
  direction: "forward" | "backward",
  isHead: boolean,
  from: number,
  eventsReturned: number,
  count: number,
  lastCommitPosition: number
): CacheDecision => {
  const immutable =
    direction === "backward" ? !isHead && from <= lastCommitPosition : !isHead && eventsReturned === count
  return immutable ? Immutable : { immutable: false, eTagPosition: lastCommitPosition }
}

/**
 * A single event. By number: immutable. `head` (or the latest metadata): never; the ETag carries the
 * event number of the record read (the link's own number for a link), none when nothing was read.
 */
export const singleEventCache = (isHead: boolean, originalEventNumber: number | undefined): CacheDecision =>
  isHead ? { immutable: false, eTagPosition: originalEventNumber } : Immutable

export interface CacheHeaderOptions {
  /** The negotiated response media type (without charset). */
  readonly contentType: string
  /** The stream's `$cacheControl` (seconds), if its metadata has one. */
  readonly cacheControlSeconds?: number | undefined
  /** `DisableHttpCaching=true`: every read says no-cache (ETags stay). */
  readonly disableHttpCaching?: boolean | undefined
}

/** Cache-Control, Vary and (when due) ETag headers of a successful read. */
export const cacheHeaders = (decision: CacheDecision, options: CacheHeaderOptions): Record<string, string> => {
  const cacheControl =
    options.disableHttpCaching === true
      ? NoCacheControl
      : decision.immutable
        ? ImmutableCacheControl
        : options.cacheControlSeconds !== undefined
          ? `max-age=${options.cacheControlSeconds}, private`
          : NoCacheControl
  const headers: Record<string, string> = { "Cache-Control": cacheControl, Vary: "Accept" }
  if (!decision.immutable && decision.eTagPosition !== undefined) {
    headers["ETag"] = `"${positionETag(decision.eTagPosition, options.contentType)}"`
  }
  return headers
}
