/**
 * Request JSON as a tree (append, user and subscription bodies). Parsing is the
 * atom package's Newtonsoft-lenient reader (single quotes, unquoted names, comments; numbers kept as .NET
 * prints them); this module builds a tree from it, looks members up case-insensitively (as Newtonsoft
 * binds properties), and writes a tree back with two-space indentation (how event data given as an object
 * is stored, and how documents are printed).
 */
import { parseJson, quoteJson, type JsonEmitter } from "./atom/jsonText.js"

export { quoteJson }

export type JsonValue =
  | { readonly kind: "object"; readonly members: ReadonlyArray<readonly [string, JsonValue]> }
  | { readonly kind: "array"; readonly items: ReadonlyArray<JsonValue> }
  | { readonly kind: "string"; readonly value: string }
  /** The literal as .NET prints it (integers as written, doubles in .NET's round-trip form). */
  | { readonly kind: "number"; readonly text: string }
  | { readonly kind: "boolean"; readonly value: boolean }
  | { readonly kind: "null" }

export class JsonSyntaxError extends Error {}

type Container = { readonly value: JsonValue; readonly push: (name: string | undefined, child: JsonValue) => void }

/** Builds the tree from the reader's events. */
class TreeBuilder implements JsonEmitter {
  root: JsonValue | undefined
  private readonly open: Array<Container> = []
  private pendingName: string | undefined

  private add(value: JsonValue): void {
    const parent = this.open[this.open.length - 1]
    if (parent === undefined) this.root = value
    else parent.push(this.pendingName, value)
  }

  beginObject(): void {
    const members: Array<readonly [string, JsonValue]> = []
    const value: JsonValue = { kind: "object", members }
    this.add(value)
    this.open.push({ value, push: (name, child) => members.push([name ?? "", child]) })
  }
  name(key: string): void {
    this.pendingName = key
  }
  endObject(): void {
    this.open.pop()
  }
  beginArray(): void {
    const items: Array<JsonValue> = []
    const value: JsonValue = { kind: "array", items }
    this.add(value)
    this.open.push({ value, push: (_, child) => items.push(child) })
  }
  endArray(): void {
    this.open.pop()
  }
  string(value: string): void {
    this.add({ kind: "string", value })
  }
  literal(text: string, kind: "number" | "boolean" | "null"): void {
    this.add(
      kind === "number" ? { kind, text } : kind === "boolean" ? { kind, value: text === "true" } : { kind: "null" }
    )
  }
}

/** The tree of a JSON text, or undefined when it is not (leniently) one JSON value. */
export const tryParseLenientJson = (text: string): JsonValue | undefined => {
  const builder = new TreeBuilder()
  return parseJson(text, builder) ? builder.root : undefined
}

/** Like tryParseLenientJson, but a JsonSyntaxError when the text is not JSON. */
export const parseLenientJson = (text: string): JsonValue => {
  const value = tryParseLenientJson(text)
  if (value === undefined) throw new JsonSyntaxError("not a JSON value")
  return value
}

/** Two-space indentation and `\n` line breaks (Newtonsoft `Formatting.Indented`). */
export const stringifyIndented = (value: JsonValue, indent = ""): string => {
  switch (value.kind) {
    case "string":
      return quoteJson(value.value)
    case "number":
      return value.text
    case "boolean":
      return value.value ? "true" : "false"
    case "null":
      return "null"
    case "array": {
      const items = value.items
      if (items.length === 0) return "[]"
      // Appended piece by piece (no arrays of parts to join): this runs for every event of every append body.
      const inner = indent + "  "
      let out = "[\n" + inner + stringifyIndented(items[0]!, inner)
      for (let i = 1; i < items.length; i++) out += ",\n" + inner + stringifyIndented(items[i]!, inner)
      return out + "\n" + indent + "]"
    }
    case "object": {
      const members = value.members
      if (members.length === 0) return "{}"
      const inner = indent + "  "
      let out = "{"
      for (let i = 0; i < members.length; i++) {
        const [key, member] = members[i]!
        out += (i === 0 ? "\n" : ",\n") + inner + quoteJson(key) + ": " + stringifyIndented(member, inner)
      }
      return out + "\n" + indent + "}"
    }
  }
}

/**
 * The last member named `name` ignoring case (Newtonsoft binds properties case-insensitively). Only keys of
 * the same length can match, so most keys are passed over without lowering them.
 */
export const memberIgnoreCase = (value: JsonValue, name: string): JsonValue | undefined => {
  if (value.kind !== "object") return undefined
  const lower = name.toLowerCase()
  let found: JsonValue | undefined
  for (const [key, v] of value.members) {
    if (key.length === name.length && (key === name || key.toLowerCase() === lower)) found = v
  }
  return found
}
