/**
 * A projection's performance config (`$ops`/`$admins`): `GET /projection/{name}/config` writes every member
 * but those at their default (false, 0, null); `PUT` replaces every member with the body's (JSON, members
 * matched ignoring case; a missing or null member is false, 0 or null), and a body that does not read as a
 * config (not a JSON object, a member of the wrong type or out of range) is a 400 `Failed to parse the
 * projection config`. Whether the values are acceptable (a timeout that is not positive) is the service's call.
 */
import { Effect } from "effect"
import { badRequest, memberIgnoreCase, type JsonValue as Tree, type Reply, type RouteInput } from "@vellum/http"
import type { Projections, ProjectionConfig } from "../service/Projections.js"
import { obj, str, unlessDefault, type JsonValue } from "./jsonTree.js"
import { answer, jsonReply, nameReply } from "./outcomeReplies.js"
import { jsonObjectBody, nameOf, requesterOf } from "./requests.js"

type Handler = (input: RouteInput) => Effect.Effect<Reply, never, Projections>

/**
 * The current reference serializes the config message whole, which carries the message group's label after the
 * config's own members; clients written against it (geteventstore-promise's tests) read `label`.
 */
const MessageLabel = "Projections"

export const configJson = (config: ProjectionConfig): JsonValue =>
  obj([
    ["emitEnabled", unlessDefault(config.emitEnabled)],
    ["trackEmittedStreams", unlessDefault(config.trackEmittedStreams)],
    ["checkpointAfterMs", unlessDefault(config.checkpointAfterMs)],
    ["checkpointHandledThreshold", unlessDefault(config.checkpointHandledThreshold)],
    ["checkpointUnhandledBytesThreshold", unlessDefault(config.checkpointUnhandledBytesThreshold)],
    ["pendingEventsThreshold", unlessDefault(config.pendingEventsThreshold)],
    ["maxWriteBatchLength", unlessDefault(config.maxWriteBatchLength)],
    ["maxAllowedWritesInFlight", unlessDefault(config.maxAllowedWritesInFlight)],
    ["projectionExecutionTimeout", unlessDefault(config.projectionExecutionTimeout)],
    ["label", str(MessageLabel)]
  ])

const ParseFailed = "Failed to parse the projection config"

/** Marks a member that does not convert (the whole body is then refused). */
const invalid = Symbol("invalid")

/** A 32-bit integer as the reference's JSON reader converts one (a number, or a string holding one). */
const int32Of = (value: Tree): number | typeof invalid => {
  const text = value.kind === "number" ? value.text : value.kind === "string" ? value.value.trim() : undefined
  if (text === undefined || text === "") return invalid
  const number = Number(text)
  return Number.isInteger(number) && Math.abs(number) <= 2147483647 ? number : invalid
}

const booleanOf = (value: Tree): boolean | typeof invalid => {
  if (value.kind === "boolean") return value.value
  if (value.kind === "number") return Number(value.text) !== 0
  if (value.kind === "string" && /^(true|false)$/i.test(value.value.trim()))
    return value.value.trim().toLowerCase() === "true"
  return invalid
}

/** The config a PUT body gives, or undefined when it does not read as one. */
export const parseConfigBody = (input: RouteInput): ProjectionConfig | undefined => {
  const tree = jsonObjectBody(input)
  if (tree === undefined) return undefined
  const member = <A>(name: string, convert: (value: Tree) => A | typeof invalid, fallback: A) => {
    const value = memberIgnoreCase(tree, name)
    return value === undefined || value.kind === "null" ? fallback : convert(value)
  }
  const config = {
    emitEnabled: member("emitEnabled", booleanOf, false),
    trackEmittedStreams: member("trackEmittedStreams", booleanOf, false),
    checkpointAfterMs: member("checkpointAfterMs", int32Of, 0),
    checkpointHandledThreshold: member("checkpointHandledThreshold", int32Of, 0),
    checkpointUnhandledBytesThreshold: member("checkpointUnhandledBytesThreshold", int32Of, 0),
    pendingEventsThreshold: member("pendingEventsThreshold", int32Of, 0),
    maxWriteBatchLength: member("maxWriteBatchLength", int32Of, 0),
    maxAllowedWritesInFlight: member("maxAllowedWritesInFlight", int32Of, 0),
    projectionExecutionTimeout: member<number | null>("projectionExecutionTimeout", int32Of, null)
  }
  return Object.values(config).includes(invalid) ? undefined : (config as ProjectionConfig)
}

export const getConfig: Handler = (input) =>
  answer(
    (service) => service.config(nameOf(input), requesterOf(input.principal)),
    (config) => jsonReply(configJson(config))
  )

export const putConfig: Handler = (input) => {
  const config = parseConfigBody(input)
  if (config === undefined) return Effect.succeed(badRequest(ParseFailed))
  return answer(
    (service) => service.updateConfig(nameOf(input), config, requesterOf(input.principal)),
    (name) => nameReply(name)
  )
}
