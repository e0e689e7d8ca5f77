/**
 * `POST /projections/read-events` (the admin UI's debugger): a JSON body `{query, position, maxEvents}` (members
 * matched ignoring case; `maxEvents` 10 when absent) is read through the service, which applies a
 * projection's filters to the source the query definition names. The answer leaves out default values, as
 * the reference's writer does: `eventNumber` 0, `isJson` false and data that reads as JSON null. A JSON
 * event's data, metadata and link metadata are embedded when their text is a JSON object, and are strings
 * otherwise; positions are embedded as compact JSON.
 */
import { Effect } from "effect"
import {
  badRequest,
  memberIgnoreCase,
  tryParseLenientJson,
  type JsonValue as Tree,
  type Reply,
  type RouteInput
} from "@vellum/http"
import { randomUuid } from "@vellum/storage"
import { encodeCheckpointTag } from "../persisted/checkpointTag.js"
import {
  Projections,
  type ReadEventsItem,
  type ReadEventsRequest,
  type ReadEventsResult
} from "../service/Projections.js"
import { arr, obj, raw, str, unlessDefault, type JsonValue } from "./jsonTree.js"
import { jsonReply, outcomeReply } from "./outcomeReplies.js"
import { jsonObjectBody, requesterOf } from "./requests.js"

const DefaultMaxEvents = 10

/** A request tree as a plain value for the service (numbers as JavaScript numbers). */
const plainOf = (tree: Tree): unknown => {
  switch (tree.kind) {
    case "object":
      return Object.fromEntries(tree.members.map(([name, member]) => [name, plainOf(member)]))
    case "array":
      return tree.items.map(plainOf)
    case "string":
      return tree.value
    case "number":
      return Number(tree.text)
    case "boolean":
      return tree.value
    case "null":
      return null
  }
}

/** The request a body gives, or the reason it gives none. */
export const readEventsRequestOf = (input: RouteInput): ReadEventsRequest | string => {
  const tree = jsonObjectBody(input)
  if (tree === undefined) return "The read-events request is not a JSON object"
  const max = memberIgnoreCase(tree, "maxEvents")
  const maxEvents =
    max === undefined || max.kind === "null" ? DefaultMaxEvents : max.kind === "number" ? Number(max.text) : NaN
  if (!Number.isInteger(maxEvents) || Math.abs(maxEvents) > 2147483647) return "maxEvents should be a whole number"
  const query = memberIgnoreCase(tree, "query")
  const position = memberIgnoreCase(tree, "position")
  return {
    query: query === undefined ? null : plainOf(query),
    position: position === undefined ? null : plainOf(position),
    maxEvents
  }
}

/**
 * A payload as the reference writes it: for a JSON event, its text parsed when that is a JSON object, left
 * out when it reads as nothing (empty, `null`), the text otherwise; a non-JSON event's text as it is.
 */
const payload = (text: string, isJson: boolean): JsonValue | undefined => {
  if (!isJson) return str(text)
  if (text.trim() === "") return undefined
  const tree = tryParseLenientJson(text)
  if (tree === undefined) return str(text)
  if (tree.kind === "null") return undefined
  return tree.kind === "object" ? tree : str(text)
}

const itemJson = (item: ReadEventsItem): JsonValue =>
  obj([
    ["eventStreamId", str(item.eventStreamId)],
    ["eventNumber", unlessDefault(item.eventNumber)],
    ["eventType", str(item.eventType)],
    ["data", payload(item.data, item.isJson)],
    ["metadata", payload(item.metadata, item.isJson)],
    ["linkMetadata", payload(item.linkMetadata, item.isJson)],
    ["isJson", unlessDefault(item.isJson)],
    ["readerPosition", raw(encodeCheckpointTag(item.readerPosition))]
  ])

export const readEventsJson = (correlationId: string, result: ReadEventsResult): JsonValue =>
  obj([
    ["correlationId", str(correlationId)],
    ["readerPosition", raw(encodeCheckpointTag(result.readerPosition))],
    ["events", arr(result.events.map(itemJson))]
  ])

export const readEvents = (input: RouteInput): Effect.Effect<Reply, never, Projections> => {
  const request = readEventsRequestOf(input)
  if (typeof request === "string") return Effect.succeed(badRequest(request))
  return Effect.gen(function* () {
    const service = yield* Projections
    const outcome = yield* service.readEvents(request, requesterOf(input.principal))
    const correlationId = yield* randomUuid
    return outcomeReply(outcome, (result) => jsonReply(readEventsJson(correlationId, result)))
  })
}
