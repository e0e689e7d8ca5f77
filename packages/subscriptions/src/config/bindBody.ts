/**
 * Binding a create/update body to the settings' raw values, the way the reference's codecs bind its settings
 * class: a property given with a value of the wrong type (an object, a number out of range, a word where a
 * number belongs) makes the whole body unbindable, and an unbindable body counts as no body at all (every
 * setting takes its default). JSON names match ignoring case and a JSON `null` leaves the default; XML (the
 * .NET XML serializer's form, root `SubscriptionConfigData`) matches element names exactly and carries text.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser"
import { memberIgnoreCase, type JsonValue } from "@vellum/http"

/** The settings a body may carry, by their .NET names (XML element names; JSON matches them ignoring case). */
export interface BoundBody {
  readonly ResolveLinktos?: boolean
  readonly StartFrom?: bigint
  readonly StartPosition?: string
  readonly MessageTimeoutMilliseconds?: number
  readonly ExtraStatistics?: boolean
  readonly MaxRetryCount?: number
  readonly LiveBufferSize?: number
  readonly BufferSize?: number
  readonly ReadBatchSize?: number
  readonly PreferRoundRobin?: boolean
  readonly CheckPointAfterMilliseconds?: number
  readonly MinCheckPointCount?: number
  readonly MaxCheckPointCount?: number
  readonly MaxSubscriberCount?: number
  readonly NamedConsumerStrategy?: string
}

type Kind = "boolean" | "int" | "long" | "string"

const fields: ReadonlyArray<readonly [keyof BoundBody, Kind]> = [
  ["ResolveLinktos", "boolean"],
  ["StartFrom", "long"],
  ["StartPosition", "string"],
  ["MessageTimeoutMilliseconds", "int"],
  ["ExtraStatistics", "boolean"],
  ["MaxRetryCount", "int"],
  ["LiveBufferSize", "int"],
  ["BufferSize", "int"],
  ["ReadBatchSize", "int"],
  ["PreferRoundRobin", "boolean"],
  ["CheckPointAfterMilliseconds", "int"],
  ["MinCheckPointCount", "int"],
  ["MaxCheckPointCount", "int"],
  ["MaxSubscriberCount", "int"],
  ["NamedConsumerStrategy", "string"]
]

const INT32 = { min: -(2n ** 31n), max: 2n ** 31n - 1n }
const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n }

/** An integer written in decimal, optionally signed, with white space around it; undefined otherwise. */
const integerText = (text: string, range: { readonly min: bigint; readonly max: bigint }): bigint | undefined => {
  const match = /^\s*([+-]?\d+)\s*$/.exec(text)
  if (match === null) return undefined
  const value = BigInt(match[1]!)
  return value < range.min || value > range.max ? undefined : value
}

const UNBINDABLE = Symbol("unbindable")
type Bound = boolean | bigint | number | string | typeof UNBINDABLE

/** A JSON value for a property of the given kind, converted as Newtonsoft converts it. */
const fromJson = (value: JsonValue, kind: Kind): Bound => {
  switch (kind) {
    case "boolean":
      if (value.kind === "boolean") return value.value
      if (value.kind === "number") return Number(value.text) !== 0
      if (value.kind === "string") {
        const word = value.value.trim().toLowerCase()
        return word === "true" ? true : word === "false" ? false : UNBINDABLE
      }
      return UNBINDABLE
    case "int":
    case "long": {
      const text = value.kind === "number" ? value.text : value.kind === "string" ? value.value : undefined
      const parsed = text === undefined ? undefined : integerText(text, kind === "int" ? INT32 : INT64)
      if (parsed === undefined) return UNBINDABLE
      return kind === "int" ? Number(parsed) : parsed
    }
    case "string":
      if (value.kind === "string") return value.value
      if (value.kind === "number") return value.text
      // Newtonsoft reads a literal true/false as the string of its JSON spelling.
      if (value.kind === "boolean") return value.value ? "true" : "false"
      return UNBINDABLE
  }
}

/** An XML element's text for a property of the given kind (xsd:boolean; integers with white space). */
const fromXmlText = (text: string, kind: Kind): Bound => {
  switch (kind) {
    case "boolean": {
      const word = text.trim()
      return word === "true" || word === "1" ? true : word === "false" || word === "0" ? false : UNBINDABLE
    }
    case "int":
    case "long": {
      const parsed = integerText(text, kind === "int" ? INT32 : INT64)
      if (parsed === undefined) return UNBINDABLE
      return kind === "int" ? Number(parsed) : parsed
    }
    case "string":
      return text
  }
}

/** The settings of a JSON body (a tree from the lenient reader), or undefined when it binds to nothing. */
export const bindJsonBody = (body: JsonValue | undefined): BoundBody | undefined => {
  if (body === undefined || body.kind !== "object") return undefined
  const bound: Record<string, unknown> = {}
  for (const [name, kind] of fields) {
    const value = memberIgnoreCase(body, name)
    if (value === undefined || value.kind === "null") continue
    const converted = fromJson(value, kind)
    if (converted === UNBINDABLE) return undefined
    bound[name] = converted
  }
  return bound as BoundBody
}

const xmlParser = new XMLParser({
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  trimValues: false,
  processEntities: true,
  htmlEntities: false,
  isArray: () => true
})

/** The last member named exactly `name` (XML element names are matched with case). */
const memberExactly = (tree: JsonValue, name: string): JsonValue | undefined => {
  if (tree.kind !== "object") return undefined
  let found: JsonValue | undefined
  for (const [key, value] of tree.members) if (key === name) found = value
  return found
}

/** The settings of an XML body, or undefined when it is empty, malformed or not a `SubscriptionConfigData`. */
export const bindXmlBody = (text: string): BoundBody | undefined => {
  if (text.trim() === "" || XMLValidator.validate(text) !== true) return undefined
  let document: Record<string, unknown>
  try {
    document = xmlParser.parse(text) as Record<string, unknown>
  } catch {
    return undefined
  }
  const roots = document["SubscriptionConfigData"]
  if (!Array.isArray(roots) || roots.length !== 1 || typeof roots[0] !== "object" || roots[0] === null) {
    return undefined
  }
  const root = roots[0] as Record<string, unknown>
  const members: Array<readonly [string, JsonValue]> = []
  for (const [name, values] of Object.entries(root)) {
    for (const value of values as ReadonlyArray<unknown>) {
      // An element with child elements is no setting's value: marked so that it fails the binding below.
      const element = typeof value === "object" && value !== null
      members.push([name, element ? { kind: "array", items: [] } : { kind: "string", value: String(value) }])
    }
  }
  const body: JsonValue = { kind: "object", members }
  const bound: Record<string, unknown> = {}
  for (const [name, kind] of fields) {
    const value = memberExactly(body, name)
    if (value === undefined) continue
    if (value.kind === "array") return undefined
    const converted = fromXmlText(value.kind === "string" ? value.value : "", kind)
    if (converted === UNBINDABLE) return undefined
    bound[name] = converted
  }
  return bound as BoundBody
}
