/**
 * A strict JSON (RFC 8259) reader that keeps each number as its literal text. Scavenging judges metadata
 * token by token: `5` is an integer, `5.0` or `"5"` is a parse error, and a value
 * past a 64-bit long overflows — none of which JSON.parse can tell once it has turned the text into a
 * double. Deliberately simple: a recursive-descent reader over a string.
 */
export type JsonValue =
  | { readonly type: "object"; readonly members: ReadonlyArray<readonly [string, JsonValue]> }
  | { readonly type: "array"; readonly items: ReadonlyArray<JsonValue> }
  | { readonly type: "string"; readonly value: string }
  | { readonly type: "number"; readonly literal: string }
  | { readonly type: "boolean"; readonly value: boolean }
  | { readonly type: "null" }

class JsonSyntaxError extends Error {}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
// JSON forbids raw control characters inside strings, so the pattern has to name them.
// eslint-disable-next-line no-control-regex
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y

/** Nesting deeper than this is a parse error, as in the reference's JSON reader (and no stack overflow). */
const MAX_DEPTH = 64

class Reader {
  private i = 0
  private depth = 0
  constructor(private readonly text: string) {}

  document(): JsonValue {
    const value = this.value()
    this.ws()
    if (this.i !== this.text.length) throw new JsonSyntaxError("trailing text")
    return value
  }

  private ws(): void {
    while (this.i < this.text.length && " \t\n\r".includes(this.text[this.i]!)) this.i++
  }

  private expect(c: string): void {
    this.ws()
    if (this.text[this.i] !== c) throw new JsonSyntaxError(`expected ${c}`)
    this.i++
  }

  private match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.i
    const m = pattern.exec(this.text)
    if (m === null) return undefined
    this.i += m[0].length
    return m[0]
  }

  private string(): string {
    this.ws()
    const literal = this.match(STRING)
    if (literal === undefined) throw new JsonSyntaxError("bad string")
    return JSON.parse(literal) as string
  }

  private value(): JsonValue {
    this.ws()
    const c = this.text[this.i]
    if (c === "{" || c === "[") {
      if (++this.depth > MAX_DEPTH) throw new JsonSyntaxError("too deep")
      const nested = c === "{" ? this.object() : this.array()
      this.depth--
      return nested
    }
    if (c === '"') return { type: "string", value: this.string() }
    for (const [word, value] of [
      ["true", { type: "boolean", value: true }],
      ["false", { type: "boolean", value: false }],
      ["null", { type: "null" }]
    ] as const) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length
        return value
      }
    }
    const literal = this.match(NUMBER)
    if (literal === undefined) throw new JsonSyntaxError("unexpected token")
    return { type: "number", literal }
  }

  private object(): JsonValue {
    this.expect("{")
    const members: Array<readonly [string, JsonValue]> = []
    this.ws()
    if (this.text[this.i] === "}") {
      this.i++
      return { type: "object", members }
    }
    for (;;) {
      const key = this.string()
      this.expect(":")
      members.push([key, this.value()])
      this.ws()
      if (this.text[this.i] === ",") {
        this.i++
        continue
      }
      this.expect("}")
      return { type: "object", members }
    }
  }

  private array(): JsonValue {
    this.expect("[")
    const items: Array<JsonValue> = []
    this.ws()
    if (this.text[this.i] === "]") {
      this.i++
      return { type: "array", items }
    }
    for (;;) {
      items.push(this.value())
      this.ws()
      if (this.text[this.i] === ",") {
        this.i++
        continue
      }
      this.expect("]")
      return { type: "array", items }
    }
  }
}

/** The JSON document in `text`, or undefined when it is not valid JSON. */
export const readJson = (text: string): JsonValue | undefined => {
  try {
    return new Reader(text).document()
  } catch (error) {
    if (error instanceof JsonSyntaxError) return undefined
    throw error
  }
}
