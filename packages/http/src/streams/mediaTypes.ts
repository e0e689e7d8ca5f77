/**
 * The media types of the stream routes and their codec lists, in the reference's order:
 * the first of each list is the route's default response type.
 */

export const MediaTypes = {
  DescriptionJson: "application/vnd.kurrent.streamdesc+json",
  LegacyDescriptionJson: "application/vnd.eventstore.streamdesc+json",
  Atom: "application/atom+xml",
  AtomJson: "application/vnd.kurrent.atom+json",
  LegacyAtomJson: "application/vnd.eventstore.atom+json",
  Xml: "text/xml",
  ApplicationXml: "application/xml",
  Json: "application/json",
  EventXml: "application/vnd.eventstore.event+xml",
  EventJson: "application/vnd.kurrent.event+json",
  LegacyEventJson: "application/vnd.eventstore.event+json",
  EventsXml: "application/vnd.eventstore.events+xml",
  EventsJson: "application/vnd.kurrent.events+json",
  LegacyEventsJson: "application/vnd.eventstore.events+json",
  Raw: "application/octet-stream",
  Html: "text/html"
} as const

const M = MediaTypes

/** Append bodies and their (empty) replies: `POST /streams/{s}`, `POST /streams/{s}/metadata`, DELETE replies. */
export const AtomCodecs: ReadonlyArray<string> = [
  M.DescriptionJson,
  M.LegacyDescriptionJson,
  M.Atom,
  M.AtomJson,
  M.LegacyAtomJson,
  M.Xml,
  M.ApplicationXml,
  M.Json,
  M.EventXml,
  M.EventJson,
  M.LegacyEventJson,
  M.EventsXml,
  M.EventsJson,
  M.LegacyEventsJson,
  M.Raw
]

/** `POST /streams/{s}/incoming/{uuid}`: single-event bodies only. */
export const AtomCodecsWithoutBatches: ReadonlyArray<string> = [
  M.Atom,
  M.AtomJson,
  M.LegacyAtomJson,
  M.Xml,
  M.ApplicationXml,
  M.Json
]

/** Feeds (stream, metastream, `$all`). */
export const FeedCodecs: ReadonlyArray<string> = [...AtomCodecs.filter((t) => t !== M.Raw), M.Html]

/** Single events and metadata reads. */
export const SingleEventCodecs: ReadonlyArray<string> = [
  M.Atom,
  M.AtomJson,
  M.LegacyAtomJson,
  M.Xml,
  M.ApplicationXml,
  M.Json,
  M.EventXml,
  M.EventJson,
  M.LegacyEventJson,
  M.Raw,
  M.Html
]

export const isDescriptionType = (type: string): boolean =>
  type === M.DescriptionJson || type === M.LegacyDescriptionJson

/** Request types whose bodies carry event ids and types (no EventType/EventId header needed). */
const TypedBodies = new Set<string>([
  M.DescriptionJson,
  M.LegacyDescriptionJson,
  M.EventXml,
  M.EventJson,
  M.LegacyEventJson,
  M.EventsXml,
  M.EventsJson,
  M.LegacyEventsJson
])

export const bodyCarriesIdsAndTypes = (requestType: string): boolean => TypedBodies.has(requestType)
