/**
 * The node's HTTP replies read back the way a client reads them:
 * the Location of a 201, the CurrentVersion header of a wrong-version 400, Atom JSON feeds and
 * entries at `embed=body` (rich fields: `eventId`, `eventType`, `eventNumber`, and `data` as the stored
 * text of a JSON event). Pure functions; a reply that does not have the promised shape is `Unexpected`.
 */
import { LongMaxValueText, DeletedStreamNumber } from "@vellum/storage"
import type { Reply } from "@vellum/http"
import { Unexpected } from "./simStore.js"

/** A header of the reply, whatever the case of its name (repeated values joined). */
export const replyHeader = (reply: Reply, name: string): string | undefined => {
  const wanted = name.toLowerCase()
  for (const key of Object.keys(reply.headers)) {
    if (key.toLowerCase() !== wanted) continue
    const value = reply.headers[key]!
    return typeof value === "string" ? value : value.join(", ")
  }
  return undefined
}

export const replyText = (reply: Reply): string =>
  reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : Buffer.from(reply.body).toString("utf8")

export const replyBytes = (reply: Reply): Uint8Array =>
  reply.body === undefined
    ? new Uint8Array(0)
    : typeof reply.body === "string"
      ? Buffer.from(reply.body, "utf8")
      : reply.body

/** One line describing a reply, for failure messages. */
export const describeReply = (reply: Reply): string => {
  const body = replyText(reply)
  return `${reply.status} ${reply.reason ?? ""}${body === "" ? "" : ` body=${JSON.stringify(body.slice(0, 200))}`}`
}

/** An event number on the wire: long.MaxValue is the store's deleted marker. */
const wireNumber = (text: string): number | undefined => {
  if (text === LongMaxValueText) return DeletedStreamNumber
  return /^-?\d{1,16}$/.test(text) ? Number(text) : undefined
}

/** The first event number from a 201's `Location: <base>/streams/<escaped stream>/<n>`. */
export const locationEventNumber = (reply: Reply, stream: string): number | Unexpected => {
  const location = replyHeader(reply, "Location")
  const prefix = `/streams/${encodeURIComponent(stream)}/`
  const at = location?.indexOf(prefix) ?? -1
  const n = at < 0 ? undefined : wireNumber(location!.slice(at + prefix.length))
  return n === undefined ? new Unexpected(`201 with Location ${String(location)}, not ${prefix}<n>`) : n
}

/** The stream's version from a wrong-version 400 (both header names must agree). */
export const currentVersion = (reply: Reply): number | Unexpected => {
  const current = replyHeader(reply, "Kurrent-CurrentVersion")
  const legacy = replyHeader(reply, "ES-CurrentVersion")
  const n = current === undefined || current !== legacy ? undefined : wireNumber(current)
  return n === undefined
    ? new Unexpected(`wrong expected version with CurrentVersion ${String(current)} / ${String(legacy)}`)
    : n
}

/** An entry of a feed or a single-event document at `embed=body`. */
export interface AtomEntry {
  readonly eventNumber: number
  readonly eventId: string
  readonly eventType: string
  /** The stored text of a JSON event; null for other events (their bytes need an octet-stream read). */
  readonly data: string | null
  readonly isJson: boolean
}

export interface AtomFeed {
  /** Newest first, as every feed lists them. */
  readonly entries: ReadonlyArray<AtomEntry>
  readonly headOfStream: boolean
  readonly links: ReadonlyArray<{ readonly relation: string; readonly uri: string }>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const parseJson = (text: string, what: string): unknown | Unexpected => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return new Unexpected(`${what} is not JSON: ${JSON.stringify(text.slice(0, 200))}`)
  }
}

const entryOf = (value: unknown): AtomEntry | Unexpected => {
  if (!isRecord(value)) return new Unexpected(`an entry is not an object: ${JSON.stringify(value)}`)
  const { eventNumber, eventId, eventType, data, isJson } = value
  if (
    typeof eventNumber !== "number" ||
    typeof eventId !== "string" ||
    typeof eventType !== "string" ||
    typeof isJson !== "boolean" ||
    (data !== null && typeof data !== "string")
  ) {
    return new Unexpected(`an entry lacks the embed=body fields: ${JSON.stringify(value).slice(0, 300)}`)
  }
  return { eventNumber, eventId, eventType, data, isJson }
}

/** A single-event Atom JSON entry document. */
export const parseEntry = (text: string): AtomEntry | Unexpected => {
  const json = parseJson(text, "the entry")
  return json instanceof Unexpected ? json : entryOf(json)
}

/** An Atom JSON feed. */
export const parseFeed = (text: string): AtomFeed | Unexpected => {
  const json = parseJson(text, "the feed")
  if (json instanceof Unexpected) return json
  if (
    !isRecord(json) ||
    !Array.isArray(json.entries) ||
    !Array.isArray(json.links) ||
    typeof json.headOfStream !== "boolean"
  ) {
    return new Unexpected(`not an Atom feed: ${text.slice(0, 300)}`)
  }
  const entries: Array<AtomEntry> = []
  for (const item of json.entries) {
    const entry = entryOf(item)
    if (entry instanceof Unexpected) return entry
    entries.push(entry)
  }
  const links: Array<{ relation: string; uri: string }> = []
  for (const link of json.links) {
    if (!isRecord(link) || typeof link.relation !== "string" || typeof link.uri !== "string")
      return new Unexpected(`a bad feed link: ${JSON.stringify(link)}`)
    links.push({ relation: link.relation, uri: link.uri })
  }
  return { entries, headOfStream: json.headOfStream, links }
}

/**
 * Where a paging link of a stream feed starts: `…/streams/<s>/<n>/(forward|backward)/<count>` → n.
 * Undefined when the feed has no link of that relation.
 */
export const linkStart = (feed: AtomFeed, relation: string): number | undefined | Unexpected => {
  const link = feed.links.find((l) => l.relation === relation)
  if (link === undefined) return undefined
  const match = /\/(-?\d+)\/(?:forward|backward)\/\d+$/.exec(link.uri)
  return match === null ? new Unexpected(`the ${relation} link ${link.uri} is not a page link`) : Number(match[1])
}
