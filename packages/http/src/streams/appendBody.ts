/**
 * Append bodies to events, by request media type:
 *
 * - `application/octet-stream`: the raw bytes are one event (not JSON);
 * - `application/json`: the text is one JSON event, stored as sent, not validated;
 * - `text/xml`, `application/xml`: the text is one non-JSON event;
 * - `…events+json`, `…event+json`, `…atom+json`: a JSON array of `{eventId, eventType, data, metadata}`;
 * - `…events+xml`, `…event+xml`, `application/atom+xml`: the same as XML;
 * - the streamdesc types: never parsable.
 *
 * Single-event bodies take their id and type from the headers (or the incoming URL).
 */
import type { ProposedEvent } from "@vellum/storage"
import { memberIgnoreCase, stringifyIndented, tryParseLenientJson, type JsonValue } from "../lenientJson.js"
import { EmptyGuid, parseGuid } from "./controlHeaders.js"
import { MediaTypes as M } from "./mediaTypes.js"
import { xmlEventsToJson } from "./xmlEvents.js"

export type BodyResult =
  | { readonly _tag: "Events"; readonly events: ReadonlyArray<ProposedEvent> }
  | { readonly _tag: "Invalid"; readonly message: string }

export const WriteBodyInvalid = "Write request body invalid."
const EmptyEventId = "Empty eventId provided. (Parameter 'eventId')"
const EmptyEventType = "Empty eventType provided. (Parameter 'eventType')"

const invalid = (message: string): BodyResult => ({ _tag: "Invalid", message })
const empty = new Uint8Array(0)

/** Decodes as UTF-8 the way .NET does (invalid sequences become U+FFFD, a BOM is kept). */
const utf8Text = (body: Uint8Array): string =>
  Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8")

/** A single event from headers: the Event constructor's checks, id first. */
const single = (id: string | undefined, type: string | undefined, isJson: boolean, data: Uint8Array): BodyResult => {
  if (id === undefined || id === EmptyGuid) return invalid(EmptyEventId)
  if (type === undefined || type === "") return invalid(EmptyEventType)
  return { _tag: "Events", events: [{ eventId: id, eventType: type, isJson, data, metadata: empty }] }
}

/**
 * A `data`/`metadata` field: objects and arrays (or strings holding one) are stored re-indented and count
 * as JSON; other strings verbatim; numbers, booleans, null and absence store nothing.
 */
const fieldBytes = (value: JsonValue | undefined): { readonly bytes: Uint8Array; readonly isJson: boolean } => {
  if (value === undefined) return { bytes: empty, isJson: false }
  if (value.kind === "object" || value.kind === "array")
    return { bytes: Buffer.from(stringifyIndented(value), "utf8"), isJson: true }
  if (value.kind !== "string") return { bytes: empty, isJson: false }
  const parsed = tryParseLenientJson(value.value)
  if (parsed !== undefined && (parsed.kind === "object" || parsed.kind === "array")) {
    return { bytes: Buffer.from(stringifyIndented(parsed), "utf8"), isJson: true }
  }
  return { bytes: Buffer.from(value.value, "utf8"), isJson: false }
}

/** `eventType` binds from a string or any other primitive token (Newtonsoft converts it to text); null: unbindable. */
const typeText = (value: JsonValue | undefined): string | undefined | null => {
  if (value === undefined || value.kind === "null") return undefined
  if (value.kind === "string") return value.value
  if (value.kind === "number") return value.text
  if (value.kind === "boolean") return value.value ? "True" : "False"
  return null
}

/** Events from the array form (JSON or converted XML). Binding failures make the whole body invalid. */
export const eventsFromArray = (root: JsonValue): BodyResult => {
  if (root.kind !== "array" || root.items.length === 0) return invalid(WriteBodyInvalid)
  // Binding first (a malformed id or a non-object item spoils the whole body), then per-event checks.
  const bound: Array<{ id: string; type: string | undefined; item: JsonValue }> = []
  for (const item of root.items) {
    if (item.kind !== "object") return invalid(WriteBodyInvalid)
    const idValue = memberIgnoreCase(item, "eventId")
    let id = EmptyGuid
    if (idValue !== undefined) {
      if (idValue.kind !== "string") return invalid(WriteBodyInvalid)
      const guid = parseGuid(idValue.value)
      if (guid === undefined) return invalid(WriteBodyInvalid)
      id = guid
    }
    const type = typeText(memberIgnoreCase(item, "eventType"))
    if (type === null) return invalid(WriteBodyInvalid)
    bound.push({ id, type, item })
  }
  const events: Array<ProposedEvent> = []
  for (const { id, type, item } of bound) {
    const data = fieldBytes(memberIgnoreCase(item, "data"))
    const metadata = fieldBytes(memberIgnoreCase(item, "metadata"))
    if (id === EmptyGuid) return invalid(EmptyEventId)
    if (type === undefined || type === "") return invalid(EmptyEventType)
    events.push({
      eventId: id,
      eventType: type,
      isJson: data.isJson || metadata.isJson,
      data: data.bytes,
      metadata: metadata.bytes
    })
  }
  return { _tag: "Events", events }
}

const fromJsonArray = (text: string): BodyResult => {
  const root = tryParseLenientJson(text)
  return root === undefined ? invalid(WriteBodyInvalid) : eventsFromArray(root)
}

/**
 * The events of an append body. `headerId`/`headerType` are the EventId/EventType header values (or the
 * incoming URL's id), used only by the single-event forms.
 */
export const parseAppendBody = (
  body: Uint8Array | undefined,
  requestType: string,
  headerId: string | undefined,
  headerType: string | undefined
): BodyResult => {
  const bytes = body ?? empty
  switch (requestType) {
    case M.Raw:
      return single(headerId, headerType, false, bytes)
    case M.Json:
      return single(headerId, headerType, true, Buffer.from(utf8Text(bytes), "utf8"))
    case M.Xml:
    case M.ApplicationXml:
      return single(headerId, headerType, false, Buffer.from(utf8Text(bytes), "utf8"))
    case M.EventJson:
    case M.LegacyEventJson:
    case M.EventsJson:
    case M.LegacyEventsJson:
    case M.AtomJson:
    case M.LegacyAtomJson:
      return fromJsonArray(utf8Text(bytes))
    case M.EventXml:
    case M.EventsXml:
    case M.Atom: {
      const converted = xmlEventsToJson(utf8Text(bytes))
      return converted === undefined ? invalid(WriteBodyInvalid) : eventsFromArray(converted)
    }
    default:
      return invalid(WriteBodyInvalid)
  }
}
