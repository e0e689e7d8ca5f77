/**
 * Absolute URLs of the projection documents (`Location`, `statusUrl`, …): the request's base URL and a path
 * escaped as the reference's URL builder escapes a path. Unreserved and reserved characters stay (`$`, `/`,
 * `:`, `@`, `&`, `=`, …) except `?` and `#`, which are escaped, so `…/query?config=yes` comes out as
 * `…/query%3Fconfig=yes`; an existing `%XX` escape is kept; everything else (space, quotes, non-ASCII) is
 * percent-encoded as UTF-8.
 */

const KEPT = /[A-Za-z0-9\-._~:/[\]@!$&'()*+,;=]/
const ESCAPED_ALREADY = /^%[0-9A-Fa-f]{2}/

const utf8 = new TextEncoder()

const percentEncoded = (character: string): string => {
  let out = ""
  for (const byte of utf8.encode(character)) out += "%" + byte.toString(16).toUpperCase().padStart(2, "0")
  return out
}

/** The path as the reference's URL builder escapes it (a backslash is a slash there). */
export const escapeUrlPath = (path: string): string => {
  const text = path.replace(/\\/g, "/")
  let out = ""
  let i = 0
  while (i < text.length) {
    if (text[i] === "%" && ESCAPED_ALREADY.test(text.slice(i, i + 3))) {
      out += text.slice(i, i + 3)
      i += 3
      continue
    }
    const character = String.fromCodePoint(text.codePointAt(i)!)
    // A lone surrogate is encoded as U+FFFD, as .NET writes it.
    out += KEPT.test(character) ? character : percentEncoded(character)
    i += character.length
  }
  return out
}

/** `{base}/{escaped path}`: `path` starts with `/`. */
export const absoluteUrl = (baseUrl: string, path: string): string =>
  `${baseUrl.endsWith("/") ? baseUrl.slice(0, -1) : baseUrl}${escapeUrlPath(path)}`

/** `/projection/{name}` and what hangs under it. */
export const projectionPath = (name: string, rest = ""): string => `/projection/${name}${rest}`
