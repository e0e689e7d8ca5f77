/**
 * Stream metadata (`$$stream`'s last event): parsing with the reference server's leniency, and the
 * rewrites the writer makes when a soft-deleted stream is recreated.
 *
 * Metadata counts only when its record is flagged JSON and parses as an object; otherwise (or when a
 * number is malformed) the metadata is empty — everything ignored, as upstream.
 */
import { DeletedStreamNumber } from "./names.js"
import { parseJsonObject, utf8Text } from "../codec/json.js"

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

/**
 * One member of a JSON object, with its value as the literal text. JSON.parse cannot tell `2.0` from `2`
 * and rounds integers past 2^53, but the reference reads metadata token by token
 * (StreamMetadata.FromJsonReader) and gives up — empty metadata — on a system key whose token is not an
 * Integer or whose value does not fit a long, so system keys are judged on their literal text.
 */
interface Member {
  readonly key: string
  readonly value: string
}

const isWs = (c: string): boolean => c === " " || c === "\t" || c === "\n" || c === "\r"

const skipWs = (text: string, i: number): number => {
  while (i < text.length && isWs(text[i]!)) i++
  return i
}

/** Index just past the string literal starting at `i` (a `"`). */
const skipString = (text: string, i: number): number => {
  for (i++; i < text.length; i++) {
    if (text[i] === "\\") i++
    else if (text[i] === '"') return i + 1
  }
  return i
}

/** Index just past the JSON value starting at `i`. */
const skipValue = (text: string, i: number): number => {
  const c = text[i]
  if (c === '"') return skipString(text, i)
  if (c === "{" || c === "[") {
    let depth = 0
    while (i < text.length) {
      const d = text[i]!
      if (d === '"') {
        i = skipString(text, i)
        continue
      }
      if (d === "{" || d === "[") depth++
      else if (d === "}" || d === "]") {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return i
  }
  while (i < text.length && !isWs(text[i]!) && text[i] !== "," && text[i] !== "}" && text[i] !== "]") i++
  return i
}

/** The members of a JSON object text in order, duplicates included (the text is valid JSON). */
const objectMembers = (text: string): Array<Member> => {
  const members: Array<Member> = []
  let i = skipWs(text, 0)
  if (text[i] !== "{") return members
  i = skipWs(text, i + 1)
  while (i < text.length && text[i] === '"') {
    const keyEnd = skipString(text, i)
    const key = JSON.parse(text.slice(i, keyEnd)) as string
    i = skipWs(text, skipWs(text, keyEnd) + 1) // past ':'
    const valueEnd = skipValue(text, i)
    members.push({ key, value: text.slice(i, valueEnd) })
    i = skipWs(text, valueEnd)
    if (text[i] === ",") i = skipWs(text, i + 1)
  }
  return members
}

const LongMax = 9223372036854775807n
const LongMin = -9223372036854775808n
/** TimeSpan.FromSeconds overflows past this many seconds (TimeSpan.MaxValue ≈ 922337203685.48 s). */
const TimeSpanMaxSeconds = 922337203685n

/** A JSON Integer token that fits a long, as a BigInt; "bad" otherwise (null, floats, strings, overflow). */
const longLiteral = (literal: string): bigint | "bad" => {
  if (!/^-?(0|[1-9][0-9]*)$/.test(literal)) return "bad"
  const value = BigInt(literal)
  return value > LongMax || value < LongMin ? "bad" : value
}

/** A long as a safe number, saturating at `max` (numbers here are JS numbers, so at most 2^53 − 1). */
const saturate = (value: bigint, max: number = DeletedStreamNumber): number =>
  value >= BigInt(max) ? max : Number(value)

/** Roles: a string or an array of strings. */
const roles = (literal: string): ReadonlyArray<string> | "bad" => {
  const value: unknown = JSON.parse(literal)
  if (typeof value === "string") return [value]
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value as Array<string>
  return "bad"
}

const AclKeys = { $r: "read", $w: "write", $d: "delete", $mr: "metaRead", $mw: "metaWrite" } as const

/** `$acl`: an object of the five role keys; any other key makes the reference's ReadAcl throw. */
const parseAcl = (literal: string): Acl | "bad" => {
  if (!literal.startsWith("{")) return "bad"
  const acl: { -readonly [K in keyof Acl]: Acl[K] } = {
    read: undefined,
    write: undefined,
    delete: undefined,
    metaRead: undefined,
    metaWrite: undefined
  }
  for (const { key, value } of objectMembers(literal)) {
    if (!Object.hasOwn(AclKeys, key)) return "bad"
    const parsed = roles(value)
    if (parsed === "bad") return "bad"
    acl[AclKeys[key as keyof typeof AclKeys]] = parsed
  }
  return acl
}

/** Parses metadata bytes; `isJson` is the record's JSON flag. */
export const parseMetadata = (data: Uint8Array, isJson: boolean): StreamMetadata => {
  if (!isJson || data.length === 0) return EmptyMetadata
  const text = utf8Text(data)
  const parsed = parseJsonObject(text)
  if (parsed === undefined) return EmptyMetadata
  // Members in order, as the reference reads them: a later duplicate replaces an earlier value, but
  // every occurrence must be valid.
  let maxCount: bigint | undefined
  let maxAge: bigint | undefined
  let truncateBefore: bigint | undefined
  let cacheControl: bigint | undefined
  let tempStream: boolean | undefined
  let acl: Acl | undefined
  for (const { key, value } of objectMembers(text)) {
    switch (key) {
      case "$maxCount":
      case "$tb":
      case "$maxAge":
      case "$cacheControl": {
        const long = longLiteral(value)
        if (long === "bad") return EmptyMetadata
        const seconds = key === "$maxAge" || key === "$cacheControl"
        if (seconds && (long > TimeSpanMaxSeconds || long < -TimeSpanMaxSeconds)) return EmptyMetadata
        if (key === "$maxCount") maxCount = long
        else if (key === "$tb") truncateBefore = long
        else if (key === "$maxAge") maxAge = long
        else cacheControl = long
        break
      }
      case "$tmp":
        if (value !== "true" && value !== "false") return EmptyMetadata
        tempStream = value === "true"
        break
      case "$acl": {
        const parsedAcl = parseAcl(value)
        if (parsedAcl === "bad") return EmptyMetadata
        acl = parsedAcl
        break
      }
    }
  }
  return {
    maxAge: maxAge !== undefined && maxAge > 0n ? saturate(maxAge) : undefined,
    maxCount: maxCount !== undefined && maxCount > 0n ? saturate(maxCount) : undefined,
    // Only long.MaxValue itself means soft-deleted; other huge values just hide every event.
    truncateBefore:
      truncateBefore === undefined || truncateBefore < 0n
        ? undefined
        : truncateBefore === LongMax
          ? DeletedStreamNumber
          : saturate(truncateBefore, DeletedStreamNumber - 1),
    cacheControl: cacheControl !== undefined && cacheControl > 0n ? saturate(cacheControl) : undefined,
    tempStream: tempStream === true ? true : undefined,
    acl,
    raw: parsed as Record<string, unknown>
  }
}

export const isSoftDeleted = (metadata: StreamMetadata): boolean => metadata.truncateBefore === DeletedStreamNumber

/** The metadata body of a soft delete: only `$tb` = long.MaxValue (earlier metadata is replaced). */
export const softDeleteMetadata = (): Buffer => Buffer.from(`{"$tb":9223372036854775807}`)

/** A JSON value without the whitespace outside its strings. */
const compact = (literal: string): string => {
  let out = ""
  for (let i = 0; i < literal.length;) {
    if (literal[i] === '"') {
      const end = skipString(literal, i)
      out += literal.slice(i, end)
      i = end
    } else {
      if (!isWs(literal[i]!)) out += literal[i]
      i++
    }
  }
  return out
}

/**
 * The raw metadata with `$tb` set to `recreateFrom` (other keys kept), or undefined when the raw
 * metadata is not a JSON object (then the reference server leaves it alone). Built from the members'
 * literal text, so numbers past 2^53 (custom keys included) are kept exactly, as the reference's JObject
 * does; a duplicate key keeps its first place and its last value.
 */
export const withTruncateBefore = (raw: Uint8Array, recreateFrom: number): Buffer | undefined => {
  const text = utf8Text(raw)
  if (parseJsonObject(text) === undefined) return undefined
  const members = new Map<string, string>()
  for (const { key, value } of objectMembers(text)) members.set(key, compact(value))
  members.set("$tb", String(recreateFrom))
  return Buffer.from(`{${[...members].map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`, "utf8")
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
