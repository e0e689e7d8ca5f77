/**
 * .NET's `int.TryParse` and `bool.TryParse`, exactly, for query parameters (the admin routes, the stats flags):
 * a client that scripts `threads= 2` or `syncOnly=TRUE` against the reference must get the same answer here.
 *
 * `int.TryParse(s)` uses `NumberStyles.Integer` (leading/trailing white space, a leading sign) with the
 * server's culture (invariant signs `+`/`-` assumed). White space there is only U+0009..U+000D and U+0020,
 * digits only ASCII `0`-`9`, and trailing U+0000 characters are ignored. `bool.TryParse(s)` compares
 * `True`/`False` ignoring case, then again after trimming `char.IsWhiteSpace` characters and U+0000 from
 * both ends.
 */

const INT32_MAX = 2147483647
const INT32_MIN_MAGNITUDE = 2147483648

/** The white space of .NET's number parser (`Number.IsWhite`). */
const isNumberWhite = (code: number): boolean => code === 0x20 || (code >= 0x09 && code <= 0x0d)

/** `int.TryParse(text, out value)`: the value, or undefined where .NET returns false. */
export const tryParseInt32 = (text: string): number | undefined => {
  const length = text.length
  let i = 0
  while (i < length && isNumberWhite(text.charCodeAt(i))) i++
  let negative = false
  if (i < length && (text[i] === "+" || text[i] === "-")) {
    negative = text[i] === "-"
    i++
  }
  const digitsStart = i
  let magnitude = 0
  while (i < length) {
    const code = text.charCodeAt(i)
    if (code < 0x30 || code > 0x39) break
    // Past the Int32 range the exact value no longer matters: keep it just over the limit.
    magnitude = Math.min(magnitude * 10 + (code - 0x30), INT32_MIN_MAGNITUDE + 1)
    i++
  }
  if (i === digitsStart) return undefined
  while (i < length && isNumberWhite(text.charCodeAt(i))) i++
  // .NET accepts a tail made only of NUL characters (`Number.TrailingZeros`).
  for (; i < length; i++) if (text.charCodeAt(i) !== 0) return undefined
  if (magnitude > (negative ? INT32_MIN_MAGNITUDE : INT32_MAX)) return undefined
  return negative && magnitude !== 0 ? -magnitude : magnitude
}

/** `char.IsWhiteSpace`: the Unicode separators (Zs, Zl, Zp) plus U+0009..U+000D, U+0085 and U+00A0. */
const isCharWhiteSpace = (code: number): boolean =>
  code === 0x20 ||
  (code >= 0x09 && code <= 0x0d) ||
  code === 0x85 ||
  code === 0xa0 ||
  code === 0x1680 ||
  (code >= 0x2000 && code <= 0x200a) ||
  code === 0x2028 ||
  code === 0x2029 ||
  code === 0x202f ||
  code === 0x205f ||
  code === 0x3000

const isBoolTrimmed = (code: number): boolean => code === 0 || isCharWhiteSpace(code)

/**
 * `bool.TryParse(text, out value)`: the value, or undefined where .NET returns false (as it does for null, so
 * an absent query parameter can be passed straight in).
 */
export const tryParseBoolean = (text: string | null): boolean | undefined => {
  if (text === null) return undefined
  let start = 0
  let end = text.length
  while (start < end && isBoolTrimmed(text.charCodeAt(start))) start++
  while (end > start && isBoolTrimmed(text.charCodeAt(end - 1))) end--
  // OrdinalIgnoreCase on ASCII letters (non-ASCII case folds such as U+017F are not worth mirroring).
  const word = text.slice(start, end).replace(/[A-Z]/g, (c) => c.toLowerCase())
  return word === "true" ? true : word === "false" ? false : undefined
}
