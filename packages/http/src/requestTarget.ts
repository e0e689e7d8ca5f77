/**
 * The request target split for routing: the raw path, its segments percent-decoded one
 * by one (so `%2F` stays inside its segment and `%24all` is `$all`), and the query.
 *
 * Two kinds of path are refused, because they would let one URL mean something else: a segment whose
 * escapes do not decode (a `%` without two hex digits, escaped bytes that are not UTF-8) would decode to
 * the same name as its escaped spelling (`%FF%FE` and `%25FF%25FE` would be one stream), and a `.` or `..`
 * segment (also spelt `%2e`) names a stream that no URL can address, since clients resolve it away.
 */

export interface RequestTarget {
  readonly _tag: "Target"
  /** The path as sent, still escaped (`/streams/a%2Fb`). */
  readonly rawPath: string
  /** The raw query without `?` ("" when none). */
  readonly rawQuery: string
  /** Percent-decoded segments; a trailing slash gives a final empty segment. */
  readonly segments: ReadonlyArray<string>
  readonly query: URLSearchParams
}

/** A target the pipeline answers 400 with `reason`. */
export interface InvalidTarget {
  readonly _tag: "Invalid"
  readonly reason: string
}

const ABSOLUTE = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/

const invalid = (reason: string): InvalidTarget => ({ _tag: "Invalid", reason })

/** Splits origin-form or absolute-form targets; Invalid for anything else (`*`, garbage, see above). */
export const parseTarget = (url: string): RequestTarget | InvalidTarget => {
  let rest = url
  if (!rest.startsWith("/")) {
    const absolute = ABSOLUTE.exec(rest)
    if (absolute === null) return invalid(`Invalid request target '${url}'`)
    rest = rest.slice(absolute[0].length)
    if (!rest.startsWith("/")) rest = `/${rest}`
  }
  const hash = rest.indexOf("#")
  if (hash >= 0) rest = rest.slice(0, hash)
  const mark = rest.indexOf("?")
  const rawPath = mark < 0 ? rest : rest.slice(0, mark)
  const rawQuery = mark < 0 ? "" : rest.slice(mark + 1)
  const segments: Array<string> = []
  for (const raw of rawPath.slice(1).split("/")) {
    const segment = decodeSegment(raw)
    if (segment === undefined)
      return invalid(`Invalid request target: the path segment '${raw}' has percent-escapes that are not UTF-8`)
    if (segment === "." || segment === "..")
      return invalid(`Invalid request target: the dot segment '${raw}' cannot name a resource`)
    segments.push(segment)
  }
  return { _tag: "Target", rawPath, rawQuery, segments, query: new URLSearchParams(rawQuery) }
}

const HEX = /^[0-9a-fA-F]{2}$/
const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Percent-decodes a path segment; undefined when a `%` is not followed by two hex digits or a run of
 * escaped bytes is not UTF-8 (the reference keeps such text as written, which aliases its escaped form).
 */
export const decodeSegment = (segment: string): string | undefined => {
  if (!segment.includes("%")) return segment
  let out = ""
  let i = 0
  while (i < segment.length) {
    if (segment[i] !== "%") {
      out += segment[i]
      i++
      continue
    }
    // A run of %XX escapes is decoded as one UTF-8 byte sequence.
    const bytes: Array<number> = []
    while (segment[i] === "%") {
      if (!HEX.test(segment.slice(i + 1, i + 3))) return undefined
      bytes.push(parseInt(segment.slice(i + 1, i + 3), 16))
      i += 3
    }
    try {
      out += utf8.decode(new Uint8Array(bytes))
    } catch {
      return undefined
    }
  }
  return out
}
