/**
 * XML append bodies (`…events+xml`, `…event+xml`, `application/atom+xml`): the root's
 * child elements are events with `eventId`, `eventType`, `data` and `metadata` children. Converted to the
 * JSON array form the way the reference converts XML to JSON (an element with children is an object of
 * them, element text is a string, an empty element is null), then read like a JSON body.
 */
import { XMLParser, XMLValidator } from "fast-xml-parser"
import type { JsonValue } from "../lenientJson.js"

type OrderedNode = Record<string, unknown>

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false
})

const TEXT = "#text"

const tagOf = (node: OrderedNode): string | undefined => Object.keys(node).find((k) => k !== ":@" && k !== TEXT)

/** One element's content as JSON: children → object (repeated names → array), text → string, nothing → null. */
const elementValue = (children: ReadonlyArray<OrderedNode>): JsonValue => {
  const elements = children.filter((c) => tagOf(c) !== undefined)
  if (elements.length === 0) {
    const text = children.map((c) => (c[TEXT] === undefined ? "" : String(c[TEXT]))).join("")
    return text === "" ? { kind: "null" } : { kind: "string", value: text }
  }
  // Values by name in first-seen order; a repeated name collects its values (pushed, never copied: the
  // body decides how many repeats there are).
  const byName = new Map<string, Array<JsonValue>>()
  for (const child of elements) {
    const tag = tagOf(child)!
    const value = elementValue(child[tag] as ReadonlyArray<OrderedNode>)
    const values = byName.get(tag)
    if (values === undefined) byName.set(tag, [value])
    else values.push(value)
  }
  const members: Array<[string, JsonValue]> = []
  for (const [tag, values] of byName)
    members.push([tag, values.length === 1 ? values[0]! : { kind: "array", items: values }])
  return { kind: "object", members }
}

/** The events of an XML body as a JSON array, or undefined when the XML is malformed or has no root. */
export const xmlEventsToJson = (xml: string): JsonValue | undefined => {
  if (xml.trim() === "" || XMLValidator.validate(xml) !== true) return undefined
  let nodes: ReadonlyArray<OrderedNode>
  try {
    nodes = parser.parse(xml) as ReadonlyArray<OrderedNode>
  } catch {
    return undefined
  }
  const root = nodes.find((n) => tagOf(n) !== undefined)
  if (root === undefined) return undefined
  const events = (root[tagOf(root)!] as ReadonlyArray<OrderedNode>).filter((c) => tagOf(c) !== undefined)
  return { kind: "array", items: events.map((e) => elementValue(e[tagOf(e)!] as ReadonlyArray<OrderedNode>)) }
}
