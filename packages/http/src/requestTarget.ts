/**
 * The request target split for routing (spec/http.md §1.2): the raw path, its segments percent-decoded one
 * by one (so `%2F` stays inside its segment and `%24all` is `$all`), and the query.
 */

export interface RequestTarget {
  /** The path as sent, still escaped (`/streams/a%2Fb`). */
  readonly rawPath: string
  /** The raw query without `?` ("" when none). */
  readonly rawQuery: string
  /** Percent-decoded segments; a trailing slash gives a final empty segment. */
  readonly segments: ReadonlyArray<string>
  readonly query: URLSearchParams
}

const ABSOLUTE = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/

/** Splits origin-form or absolute-form targets; undefined for anything else (`*`, garbage). */
export const parseTarget = (url: string): RequestTarget | undefined => {
  let rest = url
  if (!rest.startsWith("/")) {
    const absolute = ABSOLUTE.exec(rest)
    if (absolute === null) return undefined
    rest = rest.slice(absolute[0].length)
    if (!rest.startsWith("/")) rest = `/${rest}`
  }
  const hash = rest.indexOf("#")
  if (hash >= 0) rest = rest.slice(0, hash)
  const mark = rest.indexOf("?")
  const rawPath = mark < 0 ? rest : rest.slice(0, mark)
  const rawQuery = mark < 0 ? "" : rest.slice(mark + 1)
  return {
    rawPath,
    rawQuery,
    segments: rawPath.slice(1).split("/").map(decodeSegment),
    query: new URLSearchParams(rawQuery)
  }
}

const HEX = /^[0-9a-fA-F]{2}$/
const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Percent-decodes leniently, like .NET's UnescapeDataString: a `%` not followed by two hex digits, or an
 * escaped byte run that is not valid UTF-8, is kept as written (never an exception, never U+FFFD).
 */
export const decodeSegment = (segment: string): string => {
  if (!segment.includes("%")) return segment
  let out = ""
  let i = 0
  while (i < segment.length) {
    if (segment[i] !== "%" || !HEX.test(segment.slice(i + 1, i + 3))) {
      out += segment[i]
      i++
      continue
    }
    // A run of %XX escapes is decoded as one UTF-8 byte sequence.
    const start = i
    const bytes: Array<number> = []
    while (segment[i] === "%" && HEX.test(segment.slice(i + 1, i + 3))) {
      bytes.push(parseInt(segment.slice(i + 1, i + 3), 16))
      i += 3
    }
    try {
      out += utf8.decode(new Uint8Array(bytes))
    } catch {
      out += segment.slice(start, i)
    }
  }
  return out
}
