/**
 * `$by_correlation_id`: every event whose metadata names a correlation id (under the configured
 * property) linked into `$bc-{id}`, with the event's time and, for a link, the link's id and metadata.
 */
import { Either } from "effect"
import { parseJsonObject, utf8Text } from "@vellum/storage"
import { isLink, linkTargetOf, pointerTo } from "./SystemEvent.js"
import type { SystemProjectionDefinition } from "./SystemProjection.js"
import { link } from "./SystemWrite.js"

export const ByCorrelationIdFaults = {
  badConfig:
    "Could not parse projection source. Please make sure the source is a valid JSON string with a property: 'correlationIdProperty' having a string value"
} as const

const DefaultProperty = "$correlationId"

/** The property a query text names: empty text keeps the default. */
export const parseCorrelationConfig = (query: string): Either.Either<string, string> => {
  if (query.trim().length === 0) return Either.right(DefaultProperty)
  const config = parseJsonObject(query)
  const property =
    config !== undefined && Object.hasOwn(config, "correlationIdProperty") ? config.correlationIdProperty : undefined
  return typeof property === "string" ? Either.right(property) : Either.left(ByCorrelationIdFaults.badConfig)
}

/** `yyyy-MM-ddTHH:mm:ss.ffffffZ` (UTC, microseconds). */
export const eventTimestamp = (createdMicros: number): string => {
  const micros = ((createdMicros % 1_000_000) + 1_000_000) % 1_000_000
  const seconds = new Date((createdMicros - micros) / 1000).toISOString().slice(0, 19)
  return `${seconds}.${String(micros).padStart(6, "0")}Z`
}

export const byCorrelationId: SystemProjectionDefinition = {
  name: "$by_correlation_id",
  defaultQuery: `{"correlationIdProperty":"${DefaultProperty}"}`,
  includeLinks: false,
  configure: (query) =>
    Either.map(parseCorrelationConfig(query), (property) => (event) => {
      const metadata = event.metadata.length === 0 ? undefined : parseJsonObject(utf8Text(event.metadata))
      const correlationId = metadata !== undefined && Object.hasOwn(metadata, property) ? metadata[property] : undefined
      if (typeof correlationId !== "string") return []
      const extra: Array<readonly [string, string]> = [["$eventTimestamp", `"${eventTimestamp(event.createdMicros)}"`]]
      if (isLink(event)) extra.push(["$link", JSON.stringify({ eventId: event.eventId, metadata }, null, 2)])
      return [link(`$bc-${correlationId}`, isLink(event) ? linkTargetOf(event) : pointerTo(event), extra)]
    })
}
