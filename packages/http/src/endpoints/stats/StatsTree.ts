/**
 * The shape of `/stats`: a flat list of `group-sub-name` keys is grouped into nested
 * objects by splitting on `-` (as the reference's StatsContainer does, with case-insensitive group names),
 * a sub-path selects a nested group (never a single value — the reference answers 404 for a leaf), and the
 * tree renders as indented JSON or as XML under `<Stats>`. Order of keys is the order stats were added.
 */
import { encodeXmlName, escapeXmlText } from "../../xmlText.js"
import { XML_DECLARATION } from "../xml.js"

export type StatLeaf = number | string | boolean | null

/** A value with the display hints the reference attaches to a few stats (`?metadata=true`). */
export interface StatMetadata {
  readonly _tag: "StatMetadata"
  readonly value: StatLeaf
  readonly category: string | null
  readonly title: string
  readonly drawChart: boolean
}

export type StatValue = StatLeaf | StatMetadata

export type FlatStats = ReadonlyArray<readonly [string, StatValue]>

export interface StatsGroup {
  readonly _tag: "StatsGroup"
  readonly entries: Map<string, StatsGroup | StatValue>
}

export const statMeta = (value: StatLeaf, category: string | null, title: string): StatMetadata => ({
  _tag: "StatMetadata",
  value,
  category,
  title,
  drawChart: true
})

const isGroup = (node: StatsGroup | StatValue): node is StatsGroup =>
  node !== null && typeof node === "object" && node._tag === "StatsGroup"

const isMeta = (node: StatsGroup | StatValue): node is StatMetadata =>
  node !== null && typeof node === "object" && node._tag === "StatMetadata"

const newGroup = (): StatsGroup => ({ _tag: "StatsGroup", entries: new Map() })

/** The existing key of `group` equal to `name` ignoring case (group names are case-insensitive). */
const findKey = (group: StatsGroup, name: string): string | undefined => {
  if (group.entries.has(name)) return name
  const lower = name.toLowerCase()
  for (const key of group.entries.keys()) if (key.toLowerCase() === lower) return key
  return undefined
}

/**
 * Groups flat keys on `-` (empty parts dropped). A key that would put a group where a value already is (or
 * the reverse) is dropped; the stats builder never produces one.
 */
export const groupStats = (flat: FlatStats): StatsGroup => {
  const root = newGroup()
  for (const [key, value] of flat) {
    const parts = key.split("-").filter((p) => p !== "")
    if (parts.length === 0) continue
    let group: StatsGroup | undefined = root
    for (let i = 0; i < parts.length - 1 && group !== undefined; i++) {
      const existing = findKey(group, parts[i]!)
      if (existing === undefined) {
        const child = newGroup()
        group.entries.set(parts[i]!, child)
        group = child
      } else {
        const node: StatsGroup | StatValue = group.entries.get(existing)!
        group = isGroup(node) ? node : undefined
      }
    }
    const leaf = parts[parts.length - 1]!
    if (group !== undefined && findKey(group, leaf) === undefined) group.entries.set(leaf, value)
  }
  return root
}

/** The group at `path` (case-insensitive), or undefined when a step is missing or is a value. */
export const selectGroup = (root: StatsGroup, path: ReadonlyArray<string>): StatsGroup | undefined => {
  let group = root
  for (const name of path) {
    const key = findKey(group, name)
    if (key === undefined) return undefined
    const node = group.entries.get(key)!
    if (!isGroup(node)) return undefined
    group = node
  }
  return group
}

/** The flat list as a single-level group (`?group=false`). */
export const flatGroup = (flat: FlatStats): StatsGroup => {
  const group = newGroup()
  for (const [key, value] of flat) if (!group.entries.has(key)) group.entries.set(key, value)
  return group
}

const leafJson = (value: StatLeaf): string =>
  typeof value === "number" ? (Number.isFinite(value) ? JSON.stringify(value) : "0") : JSON.stringify(value)

/** Metadata kept as `{value, category, title, drawChart}` when asked for, else just the value. */
const valueJson = (value: StatValue, withMetadata: boolean, indent: string): string => {
  if (!isMeta(value)) return leafJson(value)
  if (!withMetadata) return leafJson(value.value)
  const inner = `${indent}  `
  return (
    `{\n${inner}"value": ${leafJson(value.value)},\n${inner}"category": ${JSON.stringify(value.category)},\n` +
    `${inner}"title": ${JSON.stringify(value.title)},\n${inner}"drawChart": ${value.drawChart}\n${indent}}`
  )
}

const groupJson = (group: StatsGroup, withMetadata: boolean, indent: string): string => {
  if (group.entries.size === 0) return "{}"
  const inner = `${indent}  `
  const lines: Array<string> = []
  for (const [key, node] of group.entries) {
    const rendered = isGroup(node) ? groupJson(node, withMetadata, inner) : valueJson(node, withMetadata, inner)
    lines.push(`${inner}${JSON.stringify(key)}: ${rendered}`)
  }
  return `{\n${lines.join(",\n")}\n${indent}}`
}

/** Indented JSON (two spaces, like the reference's Newtonsoft output). */
export const statsJson = (group: StatsGroup, withMetadata: boolean): string => groupJson(group, withMetadata, "")

const leafXml = (name: string, value: StatLeaf): string => {
  const tag = encodeXmlName(name)
  if (value === null || value === "") return `<${tag} />`
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "0") : String(value)
  return `<${tag}>${escapeXmlText(text)}</${tag}>`
}

const groupXml = (group: StatsGroup, withMetadata: boolean): string => {
  let out = ""
  for (const [key, node] of group.entries) {
    if (isGroup(node)) {
      const tag = encodeXmlName(key)
      const inner = groupXml(node, withMetadata)
      out += inner === "" ? `<${tag} />` : `<${tag}>${inner}</${tag}>`
    } else if (isMeta(node) && withMetadata) {
      const tag = encodeXmlName(key)
      out +=
        `<${tag}>${leafXml("value", node.value)}${leafXml("category", node.category)}${leafXml("title", node.title)}` +
        `${leafXml("drawChart", node.drawChart)}</${tag}>`
    } else {
      out += leafXml(key, isMeta(node) ? node.value : node)
    }
  }
  return out
}

/** XML with root `<Stats>` and the same names as the JSON. */
export const statsXml = (group: StatsGroup, withMetadata: boolean): string => {
  const inner = groupXml(group, withMetadata)
  return XML_DECLARATION + (inner === "" ? "<Stats />" : `<Stats>${inner}</Stats>`)
}
