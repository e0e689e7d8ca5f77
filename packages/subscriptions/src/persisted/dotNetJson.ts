/**
 * JSON as the reference writes its own records (Newtonsoft, indented by two spaces, camelCase, and values
 * equal to their type's default — false, 0, null — left out), and its dates (ISO 8601 with the offset,
 * fraction digits only as many as needed).
 */

/** A value to write; `raw` is a number literal written as given (a long past what a JavaScript number holds). */
export type JsonOut =
  | string
  | number
  | boolean
  | undefined
  | { readonly raw: string }
  | ReadonlyArray<JsonOut>
  | { readonly members: ReadonlyArray<readonly [string, JsonOut]> }

/** Whether the reference leaves the value out (its "default value handling: ignore"). */
const isDefault = (value: JsonOut): boolean => value === undefined || value === false || value === 0

const write = (value: JsonOut, indent: string): string => {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return JSON.stringify(value)
  if (value === undefined) return "null"
  const inner = indent + "  "
  if (Array.isArray(value)) {
    const items = value as ReadonlyArray<JsonOut>
    if (items.length === 0) return "[]"
    return "[\n" + items.map((item) => inner + write(item, inner)).join(",\n") + "\n" + indent + "]"
  }
  if ("raw" in value) return value.raw
  const members = (value as { readonly members: ReadonlyArray<readonly [string, JsonOut]> }).members.filter(
    ([, member]) => !isDefault(member)
  )
  if (members.length === 0) return "{}"
  return (
    "{\n" +
    members.map(([name, member]) => inner + JSON.stringify(name) + ": " + write(member, inner)).join(",\n") +
    "\n" +
    indent +
    "}"
  )
}

/** The record's text: indented, defaults left out. */
export const writeDotNetJson = (value: JsonOut): string => write(value, "")

/** A UTC time (milliseconds since the epoch) as the reference writes its server's local time, on a UTC host. */
export const dotNetDate = (epochMillis: number): string => {
  const iso = new Date(epochMillis).toISOString() // yyyy-MM-ddTHH:mm:ss.fffZ
  const fraction = iso.slice(20, 23).replace(/0+$/, "")
  return iso.slice(0, 19) + (fraction === "" ? "" : "." + fraction) + "+00:00"
}

/** A parsed record's member named `name`, ignoring case (the reference reads its records that way). */
export const field = (record: Record<string, unknown>, name: string): unknown => {
  const lower = name.toLowerCase()
  let found: unknown
  for (const key of Object.keys(record)) if (key.toLowerCase() === lower) found = record[key]
  return found
}

/** A JSON text parsed as an object, or undefined. */
export const parseObject = (text: string): Record<string, unknown> | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}
