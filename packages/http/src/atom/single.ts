/**
 * A single event read in the shape its negotiated media type asks for:
 *
 * - `application/atom+xml` → Atom XML entry (`atom:`-prefixed, with XML declaration);
 * - `…atom+json` → the Atom JSON entry, content filled for JSON events at every embed level;
 * - `text/html` → the same JSON entry at embed TryHarder (the HTML page embeds it);
 * - `application/json` → only the data: parsed JSON for JSON events, else a JSON string of the text;
 * - `text/xml`, `application/xml` → the data as XML under `<data>` (no declaration);
 * - `…event+json` → `{eventStreamId, eventNumber, eventType, eventId, data, metadata}`;
 * - `…event+xml` → that object as XML under `<event>`;
 * - `application/octet-stream` (and `text/plain`) → the raw data bytes.
 *
 * A resolved link shows the target event's data in the data-only forms; its Atom entry points at the
 * target and has no content.
 */
import type { ResolvedEvent } from "@vellum/storage"
import type { EmbedLevel } from "./embed.js"
import {
  contentJson,
  contentXmlMembers,
  entryJson,
  isJsonEvent,
  payloadXml,
  writeEntryJson,
  writeEntryXml
} from "./entry.js"
import { bytesOf } from "./utf8Out.js"
import { XML_DECLARATION } from "../xmlText.js"
import { jsonValueOrString } from "./jsonIndent.js"
import { quoteJson } from "./jsonText.js"

export interface SingleEventContext {
  readonly baseUrl: string
  /** The read result; `event` undefined means a link whose target is gone (→ 404 upstream). */
  readonly event: ResolvedEvent
  readonly embed: EmbedLevel
  /** The negotiated media type (without charset). */
  readonly contentType: string
}

/**
 * The body for the negotiated type, or undefined when there is nothing to show: a link whose target is
 * gone (the caller answers 404 with `notFoundBody`). An unknown type gets the route's default, Atom XML.
 */
export const renderSingleEvent = (ctx: SingleEventContext): string | Uint8Array | undefined => {
  const event = ctx.event.event
  if (event === undefined) return undefined
  switch (ctx.contentType.toLowerCase()) {
    case "application/vnd.kurrent.atom+json":
    case "application/vnd.eventstore.atom+json":
      return bytesOf((out) => writeEntryJson(out, ctx.event, ctx.baseUrl, ctx.embed, true, 0))
    case "text/html":
      return entryJson(ctx.event, ctx.baseUrl, "TryHarder", true, 0)
    case "application/json": {
      const data = event.data.toString("utf8")
      return isJsonEvent(event) ? jsonValueOrString(data, 0) : quoteJson(data)
    }
    case "text/xml":
    case "application/xml":
      return payloadXml(event.data.toString("utf8"), isJsonEvent(event), "data", "", false)
    case "application/vnd.kurrent.event+json":
    case "application/vnd.eventstore.event+json":
      return contentJson(event, 0)
    case "application/vnd.eventstore.event+xml":
      return "<event>" + contentXmlMembers(event, "") + "</event>"
    case "application/octet-stream":
    case "text/plain":
      return event.data
    default:
      return bytesOf((out) => {
        out.text(XML_DECLARATION)
        writeEntryXml(out, ctx.event, ctx.baseUrl, ctx.embed, true, "atom:")
      })
  }
}

/** Body of a 404/410 read: `{}` for the JSON media types, empty otherwise. */
export const notFoundBody = (contentType: string): string => {
  const type = contentType.toLowerCase()
  return type === "application/json" || type.endsWith("+json") ? "{}" : ""
}
