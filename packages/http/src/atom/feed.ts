/**
 * Stream and `$all` feeds as Atom JSON or Atom XML text.
 *
 * The `id`/`self` of every page is the stream URL, never the page URL. Entries are always newest first.
 * Paging links follow RFC 5005 as EventStore uses it: `next` goes older, `previous` goes newer, `first` is
 * the head page and `last` the oldest page. JSON emits the null properties the reference emits;
 * XML has no streamId/headOfStream/selfUrl/eTag and no rich fields.
 */
import type { ResolvedEvent } from "@vellum/storage"
import { positionETag } from "./cache.js"
import { NoEventsDate, formatAtomDate } from "./dates.js"
import type { EmbedLevel } from "./embed.js"
import {
  AtomNamespace,
  authorJson,
  authorXml,
  writeEntryJson,
  writeEntryXml,
  linkJson,
  linkXml,
  type EntryExtras
} from "./entry.js"
import { escapeDataString } from "./escape.js"
import { indent } from "./jsonIndent.js"
import { quoteJson } from "./jsonText.js"
import { StartPosition, formatAllPosition } from "./position.js"
import { bytesOf, textOf, type Utf8Out } from "./utf8Out.js"
import { XML_DECLARATION, escapeXmlText } from "../xmlText.js"

export type FeedSyntax = "json" | "xml"

/**
 * The feed syntax of a negotiated feed media type: every JSON flavour gets the Atom-JSON feed, every
 * XML flavour the Atom XML feed. Undefined for `text/html` and the streamdesc types (not feeds).
 */
export const feedSyntaxFor = (contentType: string): FeedSyntax | undefined => {
  switch (contentType.toLowerCase()) {
    case "application/json":
    case "application/vnd.kurrent.atom+json":
    case "application/vnd.eventstore.atom+json":
    case "application/vnd.kurrent.event+json":
    case "application/vnd.eventstore.event+json":
    case "application/vnd.kurrent.events+json":
    case "application/vnd.eventstore.events+json":
    case "application/vnd.kurrent.competingatom+json":
    case "application/vnd.eventstore.competingatom+json":
      return "json"
    case "application/atom+xml":
    case "text/xml":
    case "application/xml":
    case "application/vnd.eventstore.event+xml":
    case "application/vnd.eventstore.events+xml":
    case "application/vnd.eventstore.competingatom+xml":
      return "xml"
    default:
      return undefined
  }
}

/** What a stream page read returned (the storage's Success page fits as is). */
export interface StreamFeedPage {
  /** Newest first for backward reads, oldest first for forward reads (as the store returns them). */
  readonly events: ReadonlyArray<ResolvedEvent>
  readonly lastEventNumber: number
  readonly isEndOfStream: boolean
}

export interface StreamFeedContext {
  /** `scheme://host[:port][/prefix]`, no trailing slash. */
  readonly baseUrl: string
  /** Raw stream id (escaped here where it goes into URLs). */
  readonly stream: string
  readonly direction: "forward" | "backward"
  /** The requested event number; -1 for `head` / no number (backward only). */
  readonly from: number
  readonly count: number
  readonly embed: EmbedLevel
  /** The negotiated media type: the body's `eTag` of a head page is built from it. */
  readonly contentType: string
  readonly page: StreamFeedPage
}

/** What a `$all` read returned (the storage's AllRead fits as is). */
export interface AllFeedPage {
  /** Log order for forward reads, newest first for backward reads. */
  readonly events: ReadonlyArray<ResolvedEvent>
  /** Where the next page in the same direction starts. */
  readonly nextPosition: number
  readonly isEnd: boolean
}

export interface AllFeedContext {
  readonly baseUrl: string
  readonly direction: "forward" | "backward"
  /**
   * The log position the read started from. For a backward `head` read, resolve `head` to the committed
   * position before reading and read from that, so the `previous` link misses nothing committed meanwhile.
   */
  readonly from: number
  readonly count: number
  readonly embed: EmbedLevel
  readonly page: AllFeedPage
  /** `/streams/$all/filtered` feeds: their own self/id, and no `metadata` link. */
  readonly filtered?: boolean
}

export interface FeedLink {
  readonly relation: string
  readonly uri: string
}

/** The paging links of a stream page, in the order the reference emits them. */
export const streamFeedLinks = (ctx: StreamFeedContext): Array<FeedLink> => {
  const { count, page } = ctx
  const self = ctx.baseUrl + "/streams/" + escapeDataString(ctx.stream)
  const last = page.lastEventNumber
  const links: Array<FeedLink> = [
    { relation: "self", uri: self },
    { relation: "first", uri: `${self}/head/backward/${count}` }
  ]
  if (ctx.direction === "backward") {
    const from = ctx.from < 0 ? last : ctx.from
    if (!page.isEndOfStream) {
      links.push({ relation: "last", uri: `${self}/0/forward/${count}` })
      links.push({ relation: "next", uri: `${self}/${from - count}/backward/${count}` })
    }
    links.push({ relation: "previous", uri: `${self}/${Math.min(from, last) + 1}/forward/${count}` })
  } else {
    const from = ctx.from
    if (from > 0) {
      links.push({ relation: "last", uri: `${self}/0/forward/${count}` })
      links.push({ relation: "next", uri: `${self}/${from - 1}/backward/${count}` })
    }
    if (!page.isEndOfStream || page.events.length > 0) {
      links.push({ relation: "previous", uri: `${self}/${Math.min(from + count - 1, last) + 1}/forward/${count}` })
    }
  }
  links.push({ relation: "metadata", uri: self + "/metadata" })
  return links
}

const allFeedUrl = (ctx: AllFeedContext): string =>
  ctx.baseUrl + (ctx.filtered === true ? "/streams/%24all/filtered" : "/streams/%24all")

/** The paging links of a `$all` page; filtered feeds have no `metadata` link. */
export const allFeedLinks = (ctx: AllFeedContext): Array<FeedLink> => {
  const { count, page } = ctx
  const self = allFeedUrl(ctx)
  const links: Array<FeedLink> = [
    { relation: "self", uri: self },
    { relation: "first", uri: `${self}/head/backward/${count}` }
  ]
  if (ctx.direction === "backward") {
    if (!page.isEnd) {
      links.push({ relation: "last", uri: `${self}/${StartPosition}/forward/${count}` })
      links.push({ relation: "next", uri: `${self}/${formatAllPosition(page.nextPosition)}/backward/${count}` })
    }
    links.push({ relation: "previous", uri: `${self}/${formatAllPosition(ctx.from)}/forward/${count}` })
  } else {
    if (ctx.from !== 0) {
      links.push({ relation: "last", uri: `${self}/${StartPosition}/forward/${count}` })
      links.push({ relation: "next", uri: `${self}/${formatAllPosition(ctx.from)}/backward/${count}` })
    }
    if (!page.isEnd || page.events.length > 0) {
      links.push({ relation: "previous", uri: `${self}/${formatAllPosition(page.nextPosition)}/forward/${count}` })
    }
  }
  if (ctx.filtered !== true) links.push({ relation: "metadata", uri: ctx.baseUrl + "/streams/%24all/metadata" })
  return links
}

/** The feed-level facts both syntaxes print. */
export interface FeedHead {
  readonly title: string
  readonly id: string
  readonly updated: string
  /** JSON-only members, already JSON literals (`null` where absent). */
  readonly streamId: string
  readonly headOfStream: boolean
  readonly selfUrl: string
  readonly eTag: string
}

/** Timestamp of the page's first event in read order (its resolved event; none → DateTime.MinValue). */
export const updatedOf = (event: ResolvedEvent | undefined): string =>
  event?.event === undefined ? NoEventsDate : formatAtomDate(event.event.createdMicros)

type FeedArgs = [
  syntax: FeedSyntax,
  head: FeedHead,
  links: ReadonlyArray<FeedLink>,
  events: ReadonlyArray<ResolvedEvent>,
  newestFirst: boolean,
  baseUrl: string,
  embed: EmbedLevel,
  extras?: ReadonlyArray<EntryExtras>
]

/**
 * A feed document, written to `out`. `extras`, when given, runs parallel to `events` (the competing-consumer
 * feed's retry counts and ack/nack links).
 */
export const writeFeed = (
  out: Utf8Out,
  ...[syntax, head, links, events, newestFirst, baseUrl, embed, extras]: FeedArgs
): void => {
  const n = events.length
  const at = (i: number): number => (newestFirst ? i : n - 1 - i)
  if (syntax === "xml") {
    out.text(
      XML_DECLARATION +
        '<feed xmlns="' +
        AtomNamespace +
        '"><title>' +
        escapeXmlText(head.title) +
        "</title><id>" +
        escapeXmlText(head.id) +
        "</id><updated>" +
        head.updated +
        "</updated>" +
        authorXml("")
    )
    for (const link of links) out.text(linkXml("", link.uri, link.relation))
    for (let i = 0; i < n; i++) writeEntryXml(out, events[at(i)]!, baseUrl, embed, false, "", extras?.[at(i)])
    return out.text("</feed>")
  }
  const p = indent(1)
  out.text(
    "{" +
      p +
      '"title": ' +
      quoteJson(head.title) +
      "," +
      p +
      '"id": ' +
      quoteJson(head.id) +
      "," +
      p +
      '"updated": "' +
      head.updated +
      '",' +
      p +
      '"streamId": ' +
      head.streamId +
      "," +
      p +
      '"author": ' +
      authorJson(1) +
      "," +
      p +
      '"headOfStream": ' +
      head.headOfStream +
      "," +
      p +
      '"selfUrl": ' +
      head.selfUrl +
      "," +
      p +
      '"eTag": ' +
      head.eTag +
      "," +
      p +
      '"links": ['
  )
  for (let i = 0; i < links.length; i++) out.text((i === 0 ? "" : ",") + linkJson(links[i]!.uri, links[i]!.relation, 2))
  out.text(p + "]," + p + '"entries": [')
  if (n === 0) return out.text("]\n}")
  for (let i = 0; i < n; i++) {
    out.bytes(i === 0 ? FirstEntry : NextEntry)
    writeEntryJson(out, events[at(i)]!, baseUrl, embed, false, 2, extras?.[at(i)])
  }
  out.text(p + "]\n}")
}

/** What precedes a JSON feed's entries (encoded once: a page has many). */
const FirstEntry = Buffer.from(indent(2), "utf8")
const NextEntry = Buffer.from("," + indent(2), "utf8")

/** `writeFeed` as text. */
export const renderFeed = (...args: FeedArgs): string => textOf((out) => writeFeed(out, ...args))

const writeStreamFeed = (out: Utf8Out, ctx: StreamFeedContext, syntax: FeedSyntax): void => {
  const { page } = ctx
  const backward = ctx.direction === "backward"
  const isHead = backward && ctx.from < 0
  const self = ctx.baseUrl + "/streams/" + escapeDataString(ctx.stream)
  const head: FeedHead = {
    title: `Event stream '${ctx.stream}'`,
    id: self,
    // Backward pages start with the newest event, forward pages with the oldest (as the reference).
    updated: updatedOf(page.events[0]),
    streamId: quoteJson(ctx.stream),
    headOfStream: backward ? isHead : page.isEndOfStream,
    selfUrl: backward ? quoteJson(self) : "null",
    eTag: isHead ? quoteJson(positionETag(page.lastEventNumber, ctx.contentType)) : "null"
  }
  writeFeed(out, syntax, head, streamFeedLinks(ctx), page.events, backward, ctx.baseUrl, ctx.embed)
}

export const renderStreamFeed = (ctx: StreamFeedContext, syntax: FeedSyntax): string =>
  textOf((out) => writeStreamFeed(out, ctx, syntax))

/** A stream feed as the UTF-8 bytes of the reply: one buffer, the kept entries copied in. */
export const streamFeedBytes = (ctx: StreamFeedContext, syntax: FeedSyntax): Buffer =>
  bytesOf((out) => writeStreamFeed(out, ctx, syntax))

const writeAllFeed = (out: Utf8Out, ctx: AllFeedContext, syntax: FeedSyntax): void => {
  const { events } = ctx.page
  const backward = ctx.direction === "backward"
  // Forward pages are dated by their newest event (when the first one is readable), as the reference.
  const dated = backward || events[0]?.event === undefined ? events[0] : events[events.length - 1]
  const head: FeedHead = {
    title: "All events",
    id: allFeedUrl(ctx),
    updated: updatedOf(dated),
    streamId: "null",
    headOfStream: false,
    selfUrl: "null",
    eTag: "null"
  }
  writeFeed(out, syntax, head, allFeedLinks(ctx), events, backward, ctx.baseUrl, ctx.embed)
}

export const renderAllFeed = (ctx: AllFeedContext, syntax: FeedSyntax): string =>
  textOf((out) => writeAllFeed(out, ctx, syntax))

/** A `$all` feed as the UTF-8 bytes of the reply: one buffer, the kept entries copied in. */
export const allFeedBytes = (ctx: AllFeedContext, syntax: FeedSyntax): Buffer =>
  bytesOf((out) => writeAllFeed(out, ctx, syntax))
