/**
 * Atom entries: one event of a feed or a single-event document, in JSON
 * (with the rich fields of embed ≥ rich) or XML, and the event "content" object
 * `{eventStreamId, eventNumber, eventType, eventId, data, metadata}` in both syntaxes.
 *
 * Where an entry points: a plain event points at itself; a link (resolved or not) points at the target its
 * data names (`<n>@<stream>`), is dated by the link, summarised `$>` and never carries content. Rich fields
 * describe the resolved event, with `positionStreamId`/`positionEventNumber` naming the record read.
 */
import { EventFlags, type EventRecord, type ResolvedEvent } from "@vellum/storage"
import { formatAtomDate } from "./dates.js"
import { EmbedRank, type EmbedLevel } from "./embed.js"
import { escapeDataString } from "./escape.js"
import { formIndex, writeCachedEntry } from "./fragments.js"
import { textOf, type Utf8Out } from "./utf8Out.js"
import { indent, jsonValueOrString, prettyJsonObject } from "./jsonIndent.js"
import { quoteJson } from "./jsonText.js"
import { jsonToXml, xmlElement } from "./xml.js"
import { escapeXmlAttribute, escapeXmlText } from "../xmlText.js"
import { wireEventNumber } from "../storageErrors.js"

export const AtomAuthor = "Kurrent"
export const AtomNamespace = "http://www.w3.org/2005/Atom"

export const isJsonEvent = (event: EventRecord): boolean => (event.flags & EventFlags.Json) !== 0

const INTEGER = /^[+-]?[0-9]+$/

/** Where a link points, from its data `<n>@<stream>` (the number as the reference prints a long). */
const linkTarget = (link: EventRecord): { readonly stream: string; readonly number: string } => {
  const text = link.data.toString("utf8")
  const at = text.indexOf("@")
  const numberText = (at < 0 ? text : text.slice(0, at)).trim()
  return {
    stream: at < 0 ? "" : text.slice(at + 1),
    number: INTEGER.test(numberText) ? BigInt(numberText).toString() : numberText
  }
}

/** The facts every entry form needs: where it points, its date and summary, whether it shows content. */
interface EntryFacts {
  readonly stream: string
  readonly number: string
  readonly micros: number
  readonly summary: string
  /** The event whose content is shown, when content is due. */
  readonly content: EventRecord | undefined
}

const entryFacts = (resolved: ResolvedEvent, embed: EmbedLevel, single: boolean): EntryFacts => {
  const { event, link } = resolved
  if (link !== undefined) {
    const target = linkTarget(link)
    return {
      stream: target.stream,
      number: target.number,
      micros: link.createdMicros,
      summary: "$>",
      content: undefined
    }
  }
  if (event === undefined) throw new Error("a resolved event without event and link")
  const showContent = (single || embed === "Content") && isJsonEvent(event)
  return {
    stream: event.stream,
    number: wireEventNumber(event.eventNumber),
    micros: event.createdMicros,
    summary: event.eventType,
    content: showContent ? event : undefined
  }
}

const eventUrl = (baseUrl: string, stream: string, number: string): string =>
  baseUrl + "/streams/" + escapeDataString(stream) + "/" + number

/** A `{uri, relation, type}` link object whose brace sits at `depth` (preceded by its line break). */
export const linkJson = (uri: string, relation: string, depth: number): string =>
  quotedLinkJson(quoteJson(uri), quoteJson(relation), depth)

/** A link from an already quoted URI and relation (an entry quotes its URL once for its id and two links). */
const quotedLinkJson = (quotedUri: string, quotedRelation: string, depth: number): string => {
  const p = indent(depth + 1)
  return (
    indent(depth) +
    "{" +
    p +
    '"uri": ' +
    quotedUri +
    "," +
    p +
    '"relation": ' +
    quotedRelation +
    "," +
    p +
    '"type": null' +
    indent(depth) +
    "}"
  )
}

/**
 * What a competing-consumer feed adds to an entry: the times it was handed out before, and its `ack`/`nack`
 * links after `edit`/`alternate`.
 */
export interface EntryExtras {
  readonly retryCount: number
  readonly links: ReadonlyArray<{ readonly relation: string; readonly uri: string }>
}

const EDIT = quoteJson("edit")
const ALTERNATE = quoteJson("alternate")

export const authorJson = (depth: number): string =>
  "{" + indent(depth + 1) + '"name": "' + AtomAuthor + '"' + indent(depth) + "}"

/** The content object of an event, its brace at `depth` (data/metadata parsed for JSON events). */
export const contentJson = (event: EventRecord, depth: number): string => {
  const p = indent(depth + 1)
  const json = isJsonEvent(event)
  const data = event.data.toString("utf8")
  const metadata = event.metadata.toString("utf8")
  return (
    "{" +
    p +
    '"eventStreamId": ' +
    quoteJson(event.stream) +
    "," +
    p +
    '"eventNumber": ' +
    wireEventNumber(event.eventNumber) +
    "," +
    p +
    '"eventType": ' +
    quoteJson(event.eventType) +
    "," +
    p +
    '"eventId": ' +
    quoteJson(event.eventId) +
    "," +
    p +
    '"data": ' +
    (json ? jsonValueOrString(data, depth + 1) : quoteJson(data)) +
    "," +
    p +
    '"metadata": ' +
    (json ? jsonValueOrString(metadata, depth + 1) : quoteJson(metadata)) +
    indent(depth) +
    "}"
  )
}

/** Text shown at pretty levels: JSON objects re-indented, anything else as stored. */
const prettyOrRaw = (text: string): string => prettyJsonObject(text) ?? text

/** The rich fields (embed ≥ rich) of `event`, each line ending with a comma (base fields follow). */
const richFieldsJson = (resolved: ResolvedEvent, event: EventRecord, embed: EmbedLevel, p: string): string => {
  const rank = EmbedRank[embed]
  let isJson = isJsonEvent(event)
  let data = "null"
  let metaData = "null"
  let linkMetaData = "null"
  let isMetaData = false
  let isLinkMetaData = false
  if (rank >= EmbedRank.Body) {
    const dataText = event.data.toString("utf8")
    if (isJson) {
      data = quoteJson(rank >= EmbedRank.PrettyBody ? prettyOrRaw(dataText) : dataText)
    } else if (rank >= EmbedRank.TryHarder) {
      const pretty = prettyJsonObject(dataText)
      // TryHarder promotes data that parses as a JSON object; empty data stays non-JSON (upstream promotes
      // it too, which tells a client that an event without data is JSON).
      if (pretty !== undefined && dataText.length > 0) isJson = true
      data = quoteJson(pretty ?? dataText)
    }
    const metaText = event.metadata.toString("utf8")
    isMetaData = metaText.length > 0
    if (isMetaData) metaData = quoteJson(rank >= EmbedRank.PrettyBody ? prettyOrRaw(metaText) : metaText)
    if (resolved.link !== undefined) {
      const linkMetaText = resolved.link.metadata.toString("utf8")
      isLinkMetaData = linkMetaText.length > 0
      linkMetaData = quoteJson(rank >= EmbedRank.PrettyBody ? prettyOrRaw(linkMetaText) : linkMetaText)
    }
  }
  const original = resolved.link ?? event
  return (
    p +
    '"eventId": ' +
    quoteJson(event.eventId) +
    "," +
    p +
    '"eventType": ' +
    quoteJson(event.eventType) +
    "," +
    p +
    '"eventNumber": ' +
    wireEventNumber(event.eventNumber) +
    "," +
    p +
    '"data": ' +
    data +
    "," +
    p +
    '"metaData": ' +
    metaData +
    "," +
    p +
    '"linkMetaData": ' +
    linkMetaData +
    "," +
    p +
    '"streamId": ' +
    quoteJson(event.stream) +
    "," +
    p +
    '"isJson": ' +
    isJson +
    "," +
    p +
    '"isMetaData": ' +
    isMetaData +
    "," +
    p +
    '"isLinkMetaData": ' +
    isLinkMetaData +
    "," +
    p +
    '"isRedacted": false,' +
    p +
    '"positionEventNumber": ' +
    wireEventNumber(original.eventNumber) +
    "," +
    p +
    '"positionStreamId": ' +
    quoteJson(original.stream) +
    ","
  )
}

/**
 * An entry as JSON, its brace at `depth` (not preceded by a line break). A feed's entry (depth 2) and a
 * single-event document's (depth 0) come from the parts kept with the record (fragments.ts).
 * @param single a single-event document: content for JSON events at every embed level
 */
export const writeEntryJson = (
  out: Utf8Out,
  ...[resolved, baseUrl, embed, single, depth, extras]: Parameters<typeof renderEntryJson>
): void =>
  extras === undefined && depth === (single ? 0 : 2)
    ? writeCachedEntry(out, resolved, baseUrl, formIndex(false, embed, single), (base) =>
        renderEntryJson(resolved, base, embed, single, depth)
      )
    : out.text(renderEntryJson(resolved, baseUrl, embed, single, depth, extras))

/** `writeEntryJson` as text. */
export const entryJson = (...args: Parameters<typeof renderEntryJson>): string =>
  textOf((out) => writeEntryJson(out, ...args))

/** An entry rendered whole, every time (what the kept parts reproduce; tests compare the two). */
export const renderEntryJson = (
  resolved: ResolvedEvent,
  baseUrl: string,
  embed: EmbedLevel,
  single: boolean,
  depth: number,
  extras?: EntryExtras
): string => {
  const facts = entryFacts(resolved, embed, single)
  const p = indent(depth + 1)
  const quotedUrl = quoteJson(eventUrl(baseUrl, facts.stream, facts.number))
  const rich =
    EmbedRank[embed] > EmbedRank.Content && resolved.event !== undefined
      ? richFieldsJson(resolved, resolved.event, embed, p)
      : ""
  return (
    "{" +
    rich +
    p +
    '"title": ' +
    quoteJson(facts.number + "@" + facts.stream) +
    "," +
    p +
    '"id": ' +
    quotedUrl +
    "," +
    p +
    '"updated": "' +
    formatAtomDate(facts.micros) +
    '",' +
    p +
    '"author": ' +
    authorJson(depth + 1) +
    "," +
    p +
    '"summary": ' +
    quoteJson(facts.summary) +
    "," +
    p +
    '"retryCount": ' +
    (extras === undefined ? "null" : String(extras.retryCount)) +
    "," +
    p +
    '"content": ' +
    (facts.content === undefined ? "null" : contentJson(facts.content, depth + 1)) +
    "," +
    p +
    '"links": [' +
    quotedLinkJson(quotedUrl, EDIT, depth + 2) +
    "," +
    quotedLinkJson(quotedUrl, ALTERNATE, depth + 2) +
    (extras === undefined ? "" : extraLinksJson(extras, depth + 2)) +
    p +
    "]" +
    indent(depth) +
    "}"
  )
}

const extraLinksJson = (extras: EntryExtras, depth: number): string => {
  let out = ""
  for (const link of extras.links) out += "," + linkJson(link.uri, link.relation, depth)
  return out
}

/** A payload (data or metadata) as XML elements named `name`: converted JSON, else the text. */
export const payloadXml = (
  text: string,
  isJson: boolean,
  name: string,
  attributes: string,
  repeatArrays: boolean
): string => {
  if (isJson && text.length > 0 && text.trim() !== "null") {
    const xml = jsonToXml(text, name, attributes, repeatArrays)
    if (xml !== undefined) return xml
  }
  return xmlElement(name, text, attributes)
}

/** The content object's members as XML elements (in no namespace: `attributes` resets a default one). */
export const contentXmlMembers = (event: EventRecord, attributes: string): string => {
  const json = isJsonEvent(event)
  return (
    xmlElement("eventStreamId", event.stream, attributes) +
    xmlElement("eventNumber", wireEventNumber(event.eventNumber), attributes) +
    xmlElement("eventType", event.eventType, attributes) +
    xmlElement("eventId", event.eventId, attributes) +
    payloadXml(event.data.toString("utf8"), json, "data", attributes, true) +
    payloadXml(event.metadata.toString("utf8"), json, "metadata", attributes, true)
  )
}

export const linkXml = (prefix: string, uri: string, relation: string): string =>
  "<" + prefix + 'link href="' + escapeXmlAttribute(uri) + '" rel="' + escapeXmlAttribute(relation) + '" />'

export const authorXml = (prefix: string): string =>
  "<" + prefix + "author><" + prefix + "name>" + AtomAuthor + "</" + prefix + "name></" + prefix + "author>"

/**
 * An entry as Atom XML. In a feed (`prefix` "") the Atom namespace is the default one, so content members
 * reset it with `xmlns=""`; a single-event document uses the `atom:` prefix and declares it on its root.
 * Both come from the parts kept with the record (fragments.ts).
 */
export const writeEntryXml = (
  out: Utf8Out,
  ...[resolved, baseUrl, embed, single, prefix, extras]: Parameters<typeof renderEntryXml>
): void =>
  extras === undefined && prefix === (single ? "atom:" : "")
    ? writeCachedEntry(out, resolved, baseUrl, formIndex(true, embed, single), (base) =>
        renderEntryXml(resolved, base, embed, single, prefix)
      )
    : out.text(renderEntryXml(resolved, baseUrl, embed, single, prefix, extras))

/** `writeEntryXml` as text. */
export const entryXml = (...args: Parameters<typeof renderEntryXml>): string =>
  textOf((out) => writeEntryXml(out, ...args))

/** An entry rendered whole, every time (what the kept parts reproduce; tests compare the two). */
export const renderEntryXml = (
  resolved: ResolvedEvent,
  baseUrl: string,
  embed: EmbedLevel,
  single: boolean,
  prefix: "" | "atom:",
  extras?: EntryExtras
): string => {
  const facts = entryFacts(resolved, embed, single)
  const url = eventUrl(baseUrl, facts.stream, facts.number)
  const root = prefix + "entry"
  const declaration = prefix === "" ? "" : ' xmlns:atom="' + AtomNamespace + '"'
  const content =
    facts.content === undefined
      ? ""
      : "<" +
        prefix +
        'content type="application/xml">' +
        contentXmlMembers(facts.content, prefix === "" ? ' xmlns=""' : "") +
        "</" +
        prefix +
        "content>"
  return (
    "<" +
    root +
    declaration +
    ">" +
    "<" +
    prefix +
    "title>" +
    escapeXmlText(facts.number + "@" + facts.stream) +
    "</" +
    prefix +
    "title>" +
    "<" +
    prefix +
    "id>" +
    escapeXmlText(url) +
    "</" +
    prefix +
    "id>" +
    "<" +
    prefix +
    "updated>" +
    formatAtomDate(facts.micros) +
    "</" +
    prefix +
    "updated>" +
    authorXml(prefix) +
    "<" +
    prefix +
    "summary>" +
    escapeXmlText(facts.summary) +
    "</" +
    prefix +
    "summary>" +
    (extras === undefined ? "" : "<" + prefix + "retryCount>" + extras.retryCount + "</" + prefix + "retryCount>") +
    linkXml(prefix, url, "edit") +
    linkXml(prefix, url, "alternate") +
    (extras === undefined ? "" : extras.links.map((link) => linkXml(prefix, link.uri, link.relation)).join("")) +
    content +
    "</" +
    root +
    ">"
  )
}
