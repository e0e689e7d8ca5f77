/**
 * A projection's source: `GET /projection/{name}/query` answers the script exactly as given
 * (`application/javascript`); with `?config=yes` the query document instead (default values left out): name,
 * query, emitEnabled, trackEmittedStreams, checkpointsEnabled, type (the mode), definition (absent when the
 * script faulted before it had one) and outputConfig. `PUT /projection/{name}/query?emit=` replaces the
 * script (the body); `emit` yes/no changes emitting, anything else leaves it; `type` is not looked at.
 */
import { Effect } from "effect"
import { documentReply, type Reply, type RouteInput } from "@vellum/http"
import type { Projections, ProjectionQuery } from "../service/Projections.js"
import { arr, bool, obj, str, unlessDefault, type JsonValue } from "./jsonTree.js"
import { answer, jsonReply, nameReply } from "./outcomeReplies.js"
import { bodyText, flag, nameOf, optionalFlag, requesterOf } from "./requests.js"

type Handler = (input: RouteInput) => Effect.Effect<Reply, never, Projections>

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const scalar = (value: unknown): JsonValue | undefined =>
  typeof value === "boolean" || typeof value === "number" || typeof value === "string"
    ? unlessDefault(value)
    : undefined

const names = (value: unknown): JsonValue | undefined =>
  Array.isArray(value) ? arr(value.filter((item) => typeof item === "string").map(str)) : undefined

/** The definition's options in the reference's member order, default values left out. */
const optionMembers = [
  "resultStreamName",
  "partitionResultStreamNamePattern",
  "reorderEvents",
  "processingLag",
  "isBiState",
  "definesStateTransform",
  "producesResults",
  "definesFold",
  "handlesDeletedNotifications",
  "includeLinks"
] as const

/**
 * A source definition as the reference writes one (flags at false and an absent limit left out, the three
 * lists always written); undefined when there is none. Also what `read-events` is given.
 */
export const definitionJson = (definition: unknown): JsonValue | undefined => {
  if (!isRecord(definition)) return undefined
  const options = definition["options"]
  return obj([
    ["allEvents", scalar(definition["allEvents"])],
    ["allStreams", scalar(definition["allStreams"])],
    ["byStream", scalar(definition["byStream"])],
    ["byCustomPartitions", scalar(definition["byCustomPartitions"])],
    ["categories", names(definition["categories"])],
    ["events", names(definition["events"])],
    ["streams", names(definition["streams"])],
    ["limitingCommitPosition", scalar(definition["limitingCommitPosition"])],
    [
      "options",
      isRecord(options) ? obj(optionMembers.map((member) => [member, scalar(options[member])] as const)) : undefined
    ]
  ])
}

export const queryConfigJson = (query: ProjectionQuery): JsonValue =>
  obj([
    ["name", str(query.name)],
    ["query", str(query.query)],
    ["emitEnabled", unlessDefault(query.emitEnabled)],
    ["trackEmittedStreams", bool(query.trackEmittedStreams)],
    ["checkpointsEnabled", bool(query.checkpointsEnabled)],
    ["type", str(query.mode)],
    ["definition", definitionJson(query.definition)],
    ["outputConfig", obj([["resultStreamName", str(query.resultStreamName)]])]
  ])

export const getQuery: Handler = (input) => {
  const withConfig = flag(input, "config", false)
  return answer(
    (service) => service.query(nameOf(input)),
    (query) =>
      withConfig ? jsonReply(queryConfigJson(query)) : documentReply(200, "OK", "application/javascript", query.query)
  )
}

export const putQuery: Handler = (input) =>
  answer(
    (service) =>
      service.updateQuery(nameOf(input), bodyText(input), optionalFlag(input, "emit"), requesterOf(input.principal)),
    (name) => nameReply(name)
  )
