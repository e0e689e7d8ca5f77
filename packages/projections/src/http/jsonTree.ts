/**
 * Building the documents of the projection routes as the HTTP package's JSON tree, written with two-space
 * indentation as the reference's JSON codec writes its replies. Members whose value is `undefined` are left
 * out, which is how the documents that omit default values (config, query config, read-events) are built.
 */
import { stringifyIndented, type JsonValue } from "@vellum/http"

export type { JsonValue }

export const str = (value: string): JsonValue => ({ kind: "string", value })
/** A whole number (a fraction is cut off: the reference's members are integers; what is no number is 0, JSON has no NaN). */
export const int = (value: number): JsonValue => ({
  kind: "number",
  text: Number.isFinite(value) ? String(Math.trunc(value)) : "0"
})
export const bool = (value: boolean): JsonValue => ({ kind: "boolean", value })
export const nul: JsonValue = { kind: "null" }
export const arr = (items: ReadonlyArray<JsonValue>): JsonValue => ({ kind: "array", items })

/**
 * A JSON text put in the document as it is, not re-indented (the reference embeds positions so): the tree
 * writes a number's text verbatim, which is exactly what a pre-serialised fragment needs.
 */
export const raw = (json: string): JsonValue => ({ kind: "number", text: json })

/** An object of the members given, in order; `undefined` members are left out. */
export const obj = (members: ReadonlyArray<readonly [string, JsonValue | undefined]>): JsonValue => ({
  kind: "object",
  members: members.filter((member): member is readonly [string, JsonValue] => member[1] !== undefined)
})

/** `value` unless it is its type's default (false, 0, null, undefined): the default-omitting documents. */
export const unlessDefault = (value: boolean | number | string | null | undefined): JsonValue | undefined => {
  if (value === undefined || value === null || value === false || value === 0) return undefined
  return typeof value === "boolean" ? bool(value) : typeof value === "number" ? int(value) : str(value)
}

export const indented = (value: JsonValue): string => stringifyIndented(value)
