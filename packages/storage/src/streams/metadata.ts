/**
 * Stream metadata (`$$stream`'s last event): parsing with the reference server's leniency, and the
 * rewrites the writer makes when a soft-deleted stream is recreated.
 *
 * Metadata counts only when its record is flagged JSON and parses as an object; otherwise (or when a
 * number is malformed) the metadata is empty — everything ignored, as upstream (§3.5).
 */
import { DeletedStreamNumber } from "./names.js"

export interface Acl {
  readonly read?: ReadonlyArray<string>
  readonly write?: ReadonlyArray<string>
  readonly delete?: ReadonlyArray<string>
  readonly metaRead?: ReadonlyArray<string>
  readonly metaWrite?: ReadonlyArray<string>
}

export interface StreamMetadata {
  readonly maxAge?: number
  readonly maxCount?: number
  /** Events below it are hidden; DeletedStreamNumber (long.MaxValue on the wire) means soft-deleted. */
  readonly truncateBefore?: number
  readonly cacheControl?: number
  readonly tempStream?: boolean
  readonly acl?: Acl
  /** The parsed JSON object, custom keys included (undefined when the metadata is empty). */
  readonly raw?: Record<string, unknown>
}

export const EmptyMetadata: StreamMetadata = {}

/** Values ≥ 2^53 (long.MaxValue and friends, which JSON.parse rounds) all mean "the maximum". */
const asLong = (value: unknown): number | undefined | "bad" => {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "number" || !Number.isFinite(value) || !Number.isInteger(value)) return "bad"
  if (value > 2 ** 63) return "bad"
  return value >= DeletedStreamNumber ? DeletedStreamNumber : value
}

const roles = (value: unknown): ReadonlyArray<string> | undefined | "bad" => {
  if (value === undefined || value === null) return undefined
  if (typeof value === "string") return [value]
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value as Array<string>
  return "bad"
}

const parseAcl = (value: unknown): Acl | undefined | "bad" => {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "object" || Array.isArray(value)) return "bad"
  const o = value as Record<string, unknown>
  const read = roles(o["$r"])
  const write = roles(o["$w"])
  const del = roles(o["$d"])
  const metaRead = roles(o["$mr"])
  const metaWrite = roles(o["$mw"])
  if (read === "bad" || write === "bad" || del === "bad" || metaRead === "bad" || metaWrite === "bad") return "bad"
  return { read, write, delete: del, metaRead, metaWrite }
}

/** Parses metadata bytes; `isJson` is the record's JSON flag. */
export const parseMetadata = (data: Uint8Array, isJson: boolean): StreamMetadata => {
  if (!isJson || data.length === 0) return EmptyMetadata
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.length).toString("utf8"))
  } catch {
    return EmptyMetadata
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return EmptyMetadata
  const o = parsed as Record<string, unknown>
  const maxAge = asLong(o["$maxAge"])
  const maxCount = asLong(o["$maxCount"])
  const truncateBefore = asLong(o["$tb"])
  const cacheControl = asLong(o["$cacheControl"])
  const acl = parseAcl(o["$acl"])
  const tmp = o["$tmp"]
  if (maxAge === "bad" || maxCount === "bad" || truncateBefore === "bad" || cacheControl === "bad" || acl === "bad") return EmptyMetadata
  if (tmp !== undefined && tmp !== null && typeof tmp !== "boolean") return EmptyMetadata
  return {
    maxAge: maxAge !== undefined && maxAge > 0 ? maxAge : undefined,
    maxCount: maxCount !== undefined && maxCount > 0 ? maxCount : undefined,
    truncateBefore: truncateBefore !== undefined && truncateBefore >= 0 ? truncateBefore : undefined,
    cacheControl: cacheControl !== undefined && cacheControl > 0 ? cacheControl : undefined,
    tempStream: tmp === true ? true : undefined,
    acl,
    raw: o
  }
}

export const isSoftDeleted = (metadata: StreamMetadata): boolean => metadata.truncateBefore === DeletedStreamNumber

/** The metadata body of a soft delete: only `$tb` = long.MaxValue (earlier metadata is replaced). */
export const softDeleteMetadata = (): Buffer => Buffer.from(`{"$tb":9223372036854775807}`)

/**
 * The raw metadata with `$tb` set to `recreateFrom` (other keys kept), or undefined when the raw
 * metadata is not a JSON object (then the reference server leaves it alone).
 */
export const withTruncateBefore = (raw: Uint8Array, recreateFrom: number): Buffer | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString("utf8"))
  } catch {
    return undefined
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return undefined
  const text = JSON.stringify({ ...(parsed as Record<string, unknown>), $tb: recreateFrom })
  return Buffer.from(text, "utf8")
}

/** The lowest event number a read may return: max(0, last − maxCount + 1, $tb). */
export const readLowerBound = (metadata: StreamMetadata, lastEventNumber: number): number => {
  let min = 0
  if (metadata.maxCount !== undefined) min = Math.max(min, lastEventNumber - metadata.maxCount + 1)
  if (metadata.truncateBefore !== undefined) min = Math.max(min, metadata.truncateBefore)
  return min
}

/** Whether an event created at `createdMicros` has expired under `$maxAge` at `nowMicros`. */
export const isExpired = (metadata: StreamMetadata, createdMicros: number, nowMicros: number): boolean =>
  metadata.maxAge !== undefined && createdMicros < nowMicros - metadata.maxAge * 1_000_000
