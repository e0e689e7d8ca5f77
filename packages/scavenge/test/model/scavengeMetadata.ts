/**
 * Stream metadata as SCAVENGING reads it (upstream StreamMetadata.TryFromJsonBytes).
 * Stricter than the read path's parser in @vellum/storage: the data is parsed whatever the record's JSON
 * flag or event type says, and any parse error (bad JSON, not an object, a wrong token type, overflow)
 * gives EMPTY limits — which clears the stream's earlier limits.
 */
import { DeletedStreamNumber } from "@vellum/storage"
import { readJson, type JsonValue } from "./strictJson.js"
import type { ScavengeLimits } from "./types.js"

export const NoLimits: ScavengeLimits = {}

const LongMax = 9223372036854775807n
const LongMin = -9223372036854775808n
/** TimeSpan.FromSeconds overflows past this many seconds (seconds keys are TimeSpans upstream). */
const TimeSpanMaxSeconds = 922337203685n

class MetadataError extends Error {}

/** An Integer token that fits a long; anything else (floats, strings, null, overflow) is a parse error. */
const long = (value: JsonValue): bigint => {
  if (value.type !== "number" || !/^-?(0|[1-9][0-9]*)$/.test(value.literal)) throw new MetadataError("not an integer")
  const n = BigInt(value.literal)
  if (n > LongMax || n < LongMin) throw new MetadataError("overflow")
  return n
}

const seconds = (value: JsonValue): bigint => {
  const n = long(value)
  if (n > TimeSpanMaxSeconds || n < -TimeSpanMaxSeconds) throw new MetadataError("TimeSpan overflow")
  return n
}

const AclKeys = new Set(["$r", "$w", "$d", "$mr", "$mw"])

/** `$acl`: an object of role keys, each a string or an array of strings; anything else fails the parse. */
const checkAcl = (value: JsonValue): void => {
  if (value.type !== "object") throw new MetadataError("$acl is not an object")
  for (const [key, roles] of value.members) {
    if (!AclKeys.has(key)) throw new MetadataError(`unknown $acl key ${key}`)
    const ok = roles.type === "string" || (roles.type === "array" && roles.items.every((r) => r.type === "string"))
    if (!ok) throw new MetadataError("bad roles")
  }
}

/** A long as a JS number no larger than `max` (numbers here are safe integers). */
const clamp = (n: bigint, max: number): number => (n >= BigInt(max) ? max : Number(n))

/** Reads every member in order (a later duplicate wins, every occurrence must be valid). */
const readLimits = (members: ReadonlyArray<readonly [string, JsonValue]>): ScavengeLimits => {
  let maxCount: bigint | undefined
  let maxAge: bigint | undefined
  let tb: bigint | undefined
  for (const [key, value] of members) {
    switch (key) {
      case "$maxCount":
        maxCount = long(value)
        break
      case "$maxAge":
        maxAge = seconds(value)
        break
      case "$tb":
        tb = long(value)
        break
      case "$cacheControl":
        seconds(value)
        break
      case "$tmp":
        if (value.type !== "boolean") throw new MetadataError("$tmp is not a boolean")
        break
      case "$acl":
        checkAcl(value)
        break
    }
  }
  return {
    // $maxCount <= 0 and $maxAge <= 0 are unset, $tb < 0 is unset.
    ...(maxCount !== undefined && maxCount > 0n ? { maxCount: clamp(maxCount, Number.MAX_SAFE_INTEGER) } : {}),
    ...(maxAge !== undefined && maxAge > 0n ? { maxAge: Number(maxAge) } : {}),
    // Only long.MaxValue is the soft delete (DeletedStreamNumber); other huge values stay just below it.
    ...(tb !== undefined && tb >= 0n
      ? { truncateBefore: tb === LongMax ? DeletedStreamNumber : clamp(tb, DeletedStreamNumber - 1) }
      : {})
  }
}

/** The limits a metadata record's data sets; empty on any parse error. */
export const parseScavengeMetadata = (data: Uint8Array): ScavengeLimits => {
  const json = readJson(Buffer.from(data.buffer, data.byteOffset, data.length).toString("utf8"))
  if (json === undefined || json.type !== "object") return NoLimits
  try {
    return readLimits(json.members)
  } catch (error) {
    if (error instanceof MetadataError) return NoLimits
    throw error
  }
}
