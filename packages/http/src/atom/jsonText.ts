/**
 * Stored JSON text (event data and metadata) read the way the reference server's Newtonsoft reader reads it,
 * and handed to an emitter: the indented JSON writer (`reindentJson`) or the XML converter (`jsonToXml`).
 * Streaming, no intermediate tree — this runs for every embedded event of a feed.
 *
 * Leniency, as Newtonsoft's reader: single-quoted strings, unquoted property names, raw control characters
 * inside strings and comments (dropped) are accepted. Not accepted (the text then counts as "not JSON" and
 * is shown as a string): NaN/Infinity/undefined literals, hex or octal numbers, trailing commas.
 * Number literals are kept as written (so integers past 2^53 survive), except that non-integers are printed
 * as .NET prints a double (`1.50` → `1.5`, `1e2` → `100.0`).
 */

/** Receives the parsed JSON, value by value. */
export interface JsonEmitter {
  beginObject(): void
  /** A property name inside the current object (decoded). */
  name(key: string): void
  endObject(): void
  beginArray(): void
  endArray(): void
  /** A string value (decoded). */
  string(value: string): void
  /** A number, boolean or null, as the literal text to print. */
  literal(text: string, kind: "number" | "boolean" | "null"): void
}

/** Thrown inside the parser only; `parseJson` turns it into `false`. */
class NotJson extends Error {}
const notJson = new NotJson("not JSON")

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\u0085\u2028\u2029]/
const HAS_NEWTONSOFT_EXTRA = /[\u0085\u2028\u2029]/
const NEWTONSOFT_EXTRA = /[\u0085\u2028\u2029]/g
const extraEscape = (c: string): string => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")

/**
 * A JSON string literal as Newtonsoft writes it: `"`, `\`, control characters escaped (short forms where they
 * exist), and also U+0085, U+2028, U+2029; everything else literal.
 */
export const quoteJson = (s: string): string => {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"'
  const quoted = JSON.stringify(s)
  return HAS_NEWTONSOFT_EXTRA.test(quoted) ? quoted.replace(NEWTONSOFT_EXTRA, extraEscape) : quoted
}

const isSpace = (c: number): boolean =>
  c === 32 || c === 10 || c === 13 || c === 9 || c === 11 || c === 12 || c === 0xa0 || c === 0xfeff

const isDigit = (c: number): boolean => c >= 48 && c <= 57

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y
const UNQUOTED_NAME = /[\p{L}\p{N}_$]+/uy

/**
 * Feeds `text` to `emitter`; false when it is not one JSON value (possibly surrounded by whitespace and
 * comments). The emitter may have received part of the value when false is returned.
 */
export const parseJson = (text: string, emitter: JsonEmitter): boolean => {
  try {
    const parser = new Parser(text, emitter)
    parser.skipSpace()
    parser.value()
    parser.skipSpace()
    return parser.pos === text.length
  } catch (e) {
    if (e instanceof NotJson || e instanceof RangeError) return false
    throw e
  }
}

class Parser {
  pos = 0
  constructor(
    readonly text: string,
    readonly out: JsonEmitter
  ) {}

  skipSpace(): void {
    const t = this.text
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos)
      if (isSpace(c)) this.pos++
      else if (c === 47 /* / */) this.comment()
      else return
    }
  }

  private comment(): void {
    const t = this.text
    const next = t.charCodeAt(this.pos + 1)
    if (next === 47) {
      const end = t.indexOf("\n", this.pos + 2)
      this.pos = end < 0 ? t.length : end + 1
    } else if (next === 42) {
      const end = t.indexOf("*/", this.pos + 2)
      if (end < 0) throw notJson
      this.pos = end + 2
    } else {
      throw notJson
    }
  }

  value(): void {
    const t = this.text
    const c = t.charCodeAt(this.pos)
    if (c === 123 /* { */) return this.object()
    if (c === 91 /* [ */) return this.array()
    if (c === 34 || c === 39) return this.out.string(this.stringToken())
    if (c === 45 || isDigit(c)) return this.number()
    if (t.startsWith("true", this.pos)) return this.word("true", "boolean")
    if (t.startsWith("false", this.pos)) return this.word("false", "boolean")
    if (t.startsWith("null", this.pos)) return this.word("null", "null")
    throw notJson
  }

  private word(w: string, kind: "boolean" | "null"): void {
    this.pos += w.length
    const c = this.text.charCodeAt(this.pos)
    // `nullx` or `true1` is not a literal.
    if (isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95) throw notJson
    this.out.literal(w, kind)
  }

  private object(): void {
    this.pos++
    this.out.beginObject()
    this.skipSpace()
    if (this.text.charCodeAt(this.pos) === 125 /* } */) {
      this.pos++
      return this.out.endObject()
    }
    while (true) {
      this.skipSpace()
      this.out.name(this.propertyName())
      this.skipSpace()
      if (this.text.charCodeAt(this.pos) !== 58 /* : */) throw notJson
      this.pos++
      this.skipSpace()
      this.value()
      this.skipSpace()
      const c = this.text.charCodeAt(this.pos++)
      if (c === 125) return this.out.endObject()
      if (c !== 44 /* , */) throw notJson
    }
  }

  private array(): void {
    this.pos++
    this.out.beginArray()
    this.skipSpace()
    if (this.text.charCodeAt(this.pos) === 93 /* ] */) {
      this.pos++
      return this.out.endArray()
    }
    while (true) {
      this.skipSpace()
      this.value()
      this.skipSpace()
      const c = this.text.charCodeAt(this.pos++)
      if (c === 93) return this.out.endArray()
      if (c !== 44) throw notJson
    }
  }

  private propertyName(): string {
    const c = this.text.charCodeAt(this.pos)
    if (c === 34 || c === 39) return this.stringToken()
    UNQUOTED_NAME.lastIndex = this.pos
    const m = UNQUOTED_NAME.exec(this.text)
    if (m === null) throw notJson
    this.pos += m[0].length
    return m[0]
  }

  /** A quoted string at `pos` (either quote), decoded. */
  private stringToken(): string {
    const t = this.text
    const quote = t.charCodeAt(this.pos)
    const start = this.pos + 1
    // Fast path: no escapes before the closing quote.
    const close = t.indexOf(quote === 34 ? '"' : "'", start)
    if (close < 0) throw notJson
    const raw = t.slice(start, close)
    const firstEscape = raw.indexOf("\\")
    if (firstEscape < 0) {
      this.pos = close + 1
      return raw
    }
    let i = start + firstEscape
    let s = raw.slice(0, firstEscape)
    while (i < t.length) {
      const c = t.charCodeAt(i)
      if (c === quote) {
        this.pos = i + 1
        return s
      }
      if (c !== 92) {
        s += t[i]
        i++
        continue
      }
      const e = t[i + 1]
      switch (e) {
        case '"':
        case "'":
        case "\\":
        case "/":
          s += e
          break
        case "b":
          s += "\b"
          break
        case "f":
          s += "\f"
          break
        case "n":
          s += "\n"
          break
        case "r":
          s += "\r"
          break
        case "t":
          s += "\t"
          break
        case "u": {
          const hex = t.slice(i + 2, i + 6)
          if (!/^[0-9A-Fa-f]{4}$/.test(hex)) throw notJson
          s += String.fromCharCode(parseInt(hex, 16))
          i += 4
          break
        }
        default:
          throw notJson
      }
      i += 2
    }
    throw notJson
  }

  private number(): void {
    NUMBER.lastIndex = this.pos
    const m = NUMBER.exec(this.text)
    if (m === null) throw notJson
    const token = m[0]
    this.pos += token.length
    const c = this.text.charCodeAt(this.pos)
    if (isDigit(c) || c === 46 || c === 101 || c === 69) throw notJson
    const isInteger = m[1] === undefined && m[2] === undefined
    this.out.literal(isInteger ? (token === "-0" ? "0" : token) : dotnetDouble(token), "number")
  }
}

/**
 * A non-integer number as Newtonsoft writes a double: shortest round-trip digits, scientific notation
 * (`1E+15`, `1E-05`) from 10^15 up or below 10^-4, and `.0` appended to whole numbers.
 */
export const dotnetDouble = (token: string): string => {
  if (isShortestPlainDecimal(token)) return token
  const v = Number(token)
  if (!Number.isFinite(v)) return token
  if (v === 0) return Object.is(v, -0) ? "-0.0" : "0.0"
  // Between 10^-4 and 10^15 both print the shortest round-trip digits in plain notation, which is what
  // JavaScript's own number-to-string gives there; .NET adds ".0" to whole numbers. (Most numbers in event
  // data; the general path below builds the same text from the exponent form.)
  const magnitude = Math.abs(v)
  if (magnitude >= 1e-4 && magnitude < 1e15) {
    const plain = String(v)
    return plain.includes(".") ? plain : plain + ".0"
  }
  return dotnetDoubleFromExponent(v)
}

/**
 * Whether a JSON number token is already the text `dotnetDouble` gives it: `-?(0|[1-9]d*).d*[1-9]` with at
 * most 15 significant digits and a magnitude from 10^-4. A decimal of at most 15 significant digits is the
 * only one that short rounding to its double, so the shortest round-trip digits are its own (a trailing zero
 * would make it longer than needed, and is refused). Typical event data (`42.5`) skips a number-to-string
 * conversion this way (~300 ns each).
 */
const isShortestPlainDecimal = (token: string): boolean => {
  const n = token.length
  let i = token.charCodeAt(0) === 45 ? 1 : 0
  const intStart = i
  while (i < n && isDigit(token.charCodeAt(i))) i++
  const intDigits = i - intStart
  if (intDigits === 0 || i >= n || token.charCodeAt(i) !== 46) return false
  const leadingZero = token.charCodeAt(intStart) === 48
  if (leadingZero && intDigits > 1) return false
  const fracStart = ++i
  while (i < n && isDigit(token.charCodeAt(i))) i++
  if (i !== n || i === fracStart || token.charCodeAt(n - 1) === 48) return false
  if (!leadingZero) return intDigits + (n - fracStart) <= 15
  let zeros = 0
  while (token.charCodeAt(fracStart + zeros) === 48) zeros++
  return zeros <= 3 && n - fracStart - zeros <= 15
}

/** `dotnetDouble`'s general path, from the shortest exponent form (exported for the test that compares). */
export const dotnetDoubleFromExponent = (v: number): string => {
  const [mantissa, expText] = v.toExponential().split("e") as [string, string]
  const exp = Number(expText)
  const negative = mantissa.startsWith("-")
  const digits = mantissa.replace("-", "").replace(".", "")
  const sign = negative ? "-" : ""
  if (exp >= 15 || exp < -4) {
    const frac = digits.length > 1 ? "." + digits.slice(1) : ""
    return sign + digits[0] + frac + "E" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0")
  }
  if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits
  if (digits.length <= exp + 1) return sign + digits + "0".repeat(exp + 1 - digits.length) + ".0"
  return sign + digits.slice(0, exp + 1) + "." + digits.slice(exp + 1)
}
