/** The reference model's reading of stream metadata, and the metadata bodies the server writes itself. */
import { LongMax, LongMaxText } from "./names.js"

// ---------------------------------------------------------------------------------------------------
// Metadata

export interface ModelMetadata {
  readonly maxCount?: number
  readonly truncateBefore?: number
  /** `$maxAge` in seconds (expiry.ts applies it: it depends on when events were created and read). */
  readonly maxAge?: number
}

const NUMERIC_KEYS = ["$maxCount", "$tb", "$maxAge", "$cacheControl"] as const

const toLong = (value: number): number => (value >= 2 ** 63 - 1 ? LongMax : value)

/** Parses JSON text as an object, or undefined. */
export const parseJsonObject = (bytes: Uint8Array): Record<string, unknown> | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString("utf8"))
  } catch {
    return undefined
  }
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined
}

const AclKeys = new Set(["$r", "$w", "$d", "$mr", "$mw"])
const isRoles = (value: unknown): boolean =>
  typeof value === "string" || (Array.isArray(value) && value.every((v) => typeof v === "string"))

/** An `$acl`-shaped value the reference reads: an object of role keys, each a string or an array of strings. */
export const isWellFormedAcl = (value: unknown): value is Record<string, string | ReadonlyArray<string>> =>
  value !== null &&
  typeof value === "object" &&
  !Array.isArray(value) &&
  Object.entries(value).every(([key, roles]) => AclKeys.has(key) && isRoles(roles))

/** A metadata object whose known keys make it read as empty metadata. */
export const isMalformedMetadata = (o: Record<string, unknown>): boolean =>
  NUMERIC_KEYS.some((key) => o[key] !== undefined && (typeof o[key] !== "number" || !Number.isInteger(o[key]))) ||
  (o["$acl"] !== undefined && !isWellFormedAcl(o["$acl"]))

export const parseModelMetadata = (isJson: boolean, bytes: Uint8Array): ModelMetadata => {
  if (!isJson) return {}
  const o = parseJsonObject(bytes)
  if (o === undefined || isMalformedMetadata(o)) return {}
  const maxCount = o["$maxCount"] as number | undefined
  const tb = o["$tb"] as number | undefined
  const maxAge = o["$maxAge"] as number | undefined
  return {
    ...(maxCount !== undefined && maxCount > 0 ? { maxCount: toLong(maxCount) } : {}),
    ...(tb !== undefined && tb >= 0 ? { truncateBefore: toLong(tb) } : {}),
    ...(maxAge !== undefined && maxAge > 0 ? { maxAge: toLong(maxAge) } : {})
  }
}

/**
 * JSON text of `object` with `$tb` set to `tb`, keeping the other keys (and their order; a new `$tb`
 * goes last). `LongMax` is written as the literal long.MaxValue.
 */
export const withTb = (object: Record<string, unknown>, tb: number): Uint8Array => {
  const marker = "__model_long_max__"
  const text = JSON.stringify({ ...object, $tb: tb === LongMax ? marker : tb }).replace(`"${marker}"`, LongMaxText)
  return Buffer.from(text, "utf8")
}

export const softDeleteBody = (): Uint8Array => Buffer.from(`{"$tb":${LongMaxText}}`, "utf8")
