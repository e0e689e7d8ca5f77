/**
 * Indented JSON as the reference server prints it (Newtonsoft, Formatting.Indented): two spaces per level,
 * `\n` line breaks, `"name": value`, and `{}` / `[]` for empty containers. `indent(depth)` is shared with
 * the feed writers so nested documents line up.
 */
import { parseJson, quoteJson, type JsonEmitter } from "./jsonText.js"

const indents: Array<string> = []

/** A line break followed by the indentation of `depth`. */
export const indent = (depth: number): string => {
  let s = indents[depth]
  if (s === undefined) {
    s = "\n" + "  ".repeat(depth)
    indents[depth] = s
  }
  return s
}

class IndentedJson implements JsonEmitter {
  out = ""
  /** Per open container: true while it has no member yet. */
  private readonly empty: Array<boolean> = []
  private afterName = false

  constructor(private depth: number) {}

  private beginValue(): void {
    if (this.afterName) {
      this.afterName = false
      return
    }
    const open = this.empty.length - 1
    if (open < 0) return
    this.out += (this.empty[open] ? "" : ",") + indent(this.depth)
    this.empty[open] = false
  }

  beginObject(): void {
    this.beginValue()
    this.out += "{"
    this.empty.push(true)
    this.depth++
  }

  name(key: string): void {
    const open = this.empty.length - 1
    this.out += (this.empty[open] ? "" : ",") + indent(this.depth) + quoteJson(key) + ": "
    this.empty[open] = false
    this.afterName = true
  }

  endObject(): void {
    this.close("}")
  }

  beginArray(): void {
    this.beginValue()
    this.out += "["
    this.empty.push(true)
    this.depth++
  }

  endArray(): void {
    this.close("]")
  }

  private close(bracket: string): void {
    this.depth--
    this.out += this.empty.pop() ? bracket : indent(this.depth) + bracket
  }

  string(value: string): void {
    this.beginValue()
    this.out += quoteJson(value)
  }

  literal(text: string): void {
    this.beginValue()
    this.out += text
  }
}

/** `text` re-printed indented, its first line at `depth`; undefined when it is not JSON. */
export const reindentJson = (text: string, depth: number): string | undefined => {
  const emitter = new IndentedJson(depth)
  return parseJson(text, emitter) ? emitter.out : undefined
}

const startsWithObject = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 123) return true
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 0xfeff) return false
  }
  return false
}

/**
 * The "pretty" form of rich entries (embed=pretty/tryharder): JSON objects re-indented; anything else
 * (arrays, scalars, invalid text) is not formatted — undefined. Empty text stays empty.
 */
export const prettyJsonObject = (text: string): string | undefined =>
  text.length === 0 ? "" : startsWithObject(text) ? reindentJson(text, 0) : undefined

/**
 * A stored payload as a JSON value (content `data`/`metadata`, single-event bodies): the parsed JSON when the
 * text is JSON and not `null`, otherwise the text as a JSON string.
 */
export const jsonValueOrString = (text: string, depth: number): string => {
  const json = text.length === 0 ? undefined : reindentJson(text, depth)
  return json === undefined || json === "null" ? quoteJson(text) : json
}
