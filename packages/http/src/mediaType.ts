/**
 * Content negotiation: media-type parsing, the response codec choice from
 * `?format=` or `Accept` (q-ordered, wildcards, the route's first codec as default), and the request codec
 * check (exact type, UTF-8 charset only).
 */

export interface MediaRange {
  /** `type/subtype` as written (trimmed). */
  readonly range: string
  readonly type: string
  readonly subtype: string
  /** The `q` parameter (1 when absent or unparsable). */
  readonly q: number
  /** The `charset` parameter, lower-cased, when present. */
  readonly charset: string | undefined
}

/** Parses `type/subtype;param=value…`; undefined when there is no `/`. */
export const parseMediaType = (text: string): MediaRange | undefined => {
  const parts = text.split(";")
  const range = parts[0]!.trim()
  const slash = range.indexOf("/")
  if (slash < 0) return undefined
  let q = 1
  let charset: string | undefined
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!.trim().toLowerCase()
    if (part.startsWith("q=")) {
      const value = Number(part.slice(2))
      if (part.length > 2 && Number.isFinite(value)) q = value
    } else if (part.startsWith("charset=")) {
      charset = part.slice(8).replace(/^"(.*)"$/, "$1")
    }
  }
  return { range, type: range.slice(0, slash), subtype: range.slice(slash + 1), q, charset }
}

/** The ranges of an Accept header, best first (a stable sort on q: equal q keeps the header's order). */
export const parseAccept = (header: string): ReadonlyArray<MediaRange> => {
  const ranges: Array<MediaRange> = []
  for (const item of header.split(",")) {
    const parsed = item.trim() === "" ? undefined : parseMediaType(item)
    if (parsed !== undefined) ranges.push(parsed)
  }
  return ranges.sort((a, b) => b.q - a.q)
}

const sameText = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** Can a codec producing `codecType` answer a request for `range`? (`*` type matches anything.) */
export const suitableForResponse = (range: MediaRange, codecType: string): boolean => {
  if (range.type === "*") return true
  const slash = codecType.indexOf("/")
  return (
    sameText(range.type, codecType.slice(0, slash)) &&
    (range.subtype === "*" || sameText(range.subtype, codecType.slice(slash + 1)))
  )
}

/** `?format=` values (case-insensitive) and the type each stands for. */
const FormatTypes: Readonly<Record<string, string>> = {
  json: "application/json",
  text: "text/plain",
  xml: "text/xml",
  atom: "application/atom+xml",
  atomxj: "application/vnd.kurrent.atom+json",
  atomsvc: "application/atomsvc+xml",
  atomsvcxj: "application/vnd.kurrent.atomsvc+json"
}

export type ResponseChoice =
  | { readonly _tag: "Chosen"; readonly type: string }
  | { readonly _tag: "NotAcceptable" }
  | { readonly _tag: "UnknownFormat"; readonly format: string }

/**
 * The response codec: `?format=` wins over Accept; no Accept → the route's first codec; otherwise each
 * range in q order takes the first suitable codec, and the first range with one wins.
 */
export const selectResponseType = (
  codecs: ReadonlyArray<string>,
  format: string | null,
  accept: string | undefined
): ResponseChoice => {
  if (format !== null && format !== "") {
    const type = FormatTypes[format.toLowerCase()]
    if (type === undefined) return { _tag: "UnknownFormat", format }
    const range = parseMediaType(type)!
    const hit = codecs.find((c) => suitableForResponse(range, c))
    return hit === undefined ? { _tag: "NotAcceptable" } : { _tag: "Chosen", type: hit }
  }
  if (accept === undefined || accept.trim() === "") {
    return codecs.length === 0 ? { _tag: "NotAcceptable" } : { _tag: "Chosen", type: codecs[0]! }
  }
  for (const range of parseAccept(accept)) {
    const hit = codecs.find((c) => suitableForResponse(range, c))
    if (hit !== undefined) return { _tag: "Chosen", type: hit }
  }
  return { _tag: "NotAcceptable" }
}

/** True when the Accept header is absent or lists the any-type range itself (the description-document rule). */
export const acceptsAnything = (accept: string | undefined): boolean =>
  accept === undefined || accept.trim() === "" || accept.split(",").some((item) => item.trim() === "*/*")

/** Types whose codec has no text encoding: a charset parameter on them is refused. */
const BinaryTypes = new Set(["application/octet-stream"])

/**
 * The request codec for a Content-Type: its `type/subtype` must equal one of the route's types exactly
 * (case-sensitive); a charset is allowed only when it is UTF-8 and the type is textual. Undefined → 415.
 */
export const selectRequestType = (
  codecs: ReadonlyArray<string>,
  contentType: string | undefined
): string | undefined => {
  if (contentType === undefined || contentType.trim() === "") return undefined
  const parsed = parseMediaType(contentType)
  if (parsed === undefined) return undefined
  const hit = codecs.find((c) => c === parsed.range)
  if (hit === undefined) return undefined
  if (parsed.charset !== undefined && (parsed.charset !== "utf-8" || BinaryTypes.has(hit))) return undefined
  return hit
}
