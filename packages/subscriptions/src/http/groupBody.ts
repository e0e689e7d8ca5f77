/**
 * A create/update request as a group's spec: the body (JSON or XML, as negotiated) bound and checked by
 * config/, and for a group on `$all` also its start and filter, which the reference offers over gRPC only:
 *
 *   "startPosition": "C:{commit}/P:{prepare}"  (or startFrom 0, the beginning, or -1, the end)
 *   "filter": {"context": "eventtype"|"streamid", "type": "prefix"|"regex", "data": "a,b"}
 *
 * The filter takes the words (and the refusals) of a filtered `$all` read's query. Refusals are a 400 with
 * the reason as text, or, for what the reference's service refuses, its `Fail` completion.
 */
import { Effect, Either } from "effect"
import {
  badRequest,
  memberIgnoreCase,
  parseAllFilter,
  tryParseLenientJson,
  type JsonValue,
  type Reply
} from "@vellum/http"
import { bindJsonBody, bindXmlBody, type BoundBody } from "../config/bindBody.js"
import type { GroupSettings } from "../config/GroupSettings.js"
import { settingsFromBound } from "../config/parseGroupSettings.js"
import { AllStream, type EventFilterRecord } from "../persisted/groupDefinitions.js"
import type { GroupSpec } from "../service/Subscriptions.js"
import { completionReply, type Operation } from "./completion.js"

/** Where a group on `$all` starts when nothing says otherwise, and the words for its end. */
const AllBeginning = "C:0/P:0"
const AllEnd = "C:-1/P:-1"

const ALL_POSITION = /^\s*C:(-1|\d{1,16})\/P:(-1|\d{1,16})\s*$/i

/** `C:{commit}/P:{prepare}`, both non-negative or both -1 (the end); undefined when malformed. */
export const parseAllStart = (text: string): string | undefined => {
  const match = ALL_POSITION.exec(text)
  if (match === null) return undefined
  const [commit, prepare] = [Number(match[1]), Number(match[2])]
  if ((commit === -1) !== (prepare === -1) || !Number.isSafeInteger(commit) || !Number.isSafeInteger(prepare))
    return undefined
  return `C:${commit}/P:${prepare}`
}

const textOf = (tree: JsonValue | undefined): string | undefined =>
  tree?.kind === "string" ? tree.value : tree?.kind === "number" ? tree.text : undefined

/** The `filter` member of a JSON body, checked as a filtered `$all` read's query is. */
const filterOf = (tree: JsonValue): Either.Either<EventFilterRecord, string> => {
  if (tree.kind !== "object") return Either.left("The filter must be an object with context, type and data.")
  const context = textOf(memberIgnoreCase(tree, "context"))?.toLowerCase() ?? ""
  const type = textOf(memberIgnoreCase(tree, "type"))?.toLowerCase() ?? ""
  const data = textOf(memberIgnoreCase(tree, "data")) ?? ""
  const checked = parseAllFilter(new URLSearchParams({ context, type, data }))
  return checked.ok ? Either.right({ context, type, data, isAllStream: true }) : Either.left(checked.message)
}

/** The start of a group on `$all`: `startPosition` as `C:/P:` text, else startFrom 0 or -1. */
const allStart = (bound: BoundBody | undefined): Either.Either<string, string> => {
  if (bound?.StartPosition !== undefined) {
    const start = parseAllStart(bound.StartPosition)
    return start === undefined
      ? Either.left(`Start Position '${bound.StartPosition}' must be a $all position C:{commit}/P:{prepare}`)
      : Either.right(start)
  }
  const from = bound?.StartFrom ?? 0n
  if (from === 0n) return Either.right(AllBeginning)
  if (from === -1n) return Either.right(AllEnd)
  return Either.left(
    `Start From (${from}) of a group on $all must be 0 (the beginning) or -1 (the end); give any other start as startPosition C:{commit}/P:{prepare}`
  )
}

const withoutStart = (bound: BoundBody): BoundBody => {
  const { StartFrom: _from, StartPosition: _position, ...rest } = bound
  return rest
}

interface ParsedBody {
  readonly bound: BoundBody | undefined
  /** The JSON body's tree (undefined for XML or a body that is not JSON). */
  readonly tree: JsonValue | undefined
}

const parseBody = (requestType: string | undefined, body: Uint8Array | undefined): ParsedBody => {
  const text = body === undefined ? "" : Buffer.from(body).toString("utf8")
  if (requestType !== undefined && requestType.toLowerCase().endsWith("xml"))
    return { bound: bindXmlBody(text), tree: undefined }
  const tree = text.trim() === "" ? undefined : tryParseLenientJson(text)
  return { bound: bindJsonBody(tree), tree }
}

/**
 * The spec of a create/update, or the reply refusing it. `responseType` is the negotiated one (a `Fail`
 * completion is a document in it).
 */
export const groupSpecOf = (
  operation: Operation,
  stream: string,
  group: string,
  requestType: string | undefined,
  body: Uint8Array | undefined,
  responseType: string,
  location: string
): Effect.Effect<GroupSpec | Reply> => {
  const { bound, tree } = parseBody(requestType, body)
  const onAll = stream === AllStream
  const filterTree = tree === undefined ? undefined : memberIgnoreCase(tree, "filter")
  const hasFilter = filterTree !== undefined && filterTree.kind !== "null"
  if (hasFilter && !onAll) return Effect.succeed(badRequest("A filter applies only to groups on $all"))
  // A `$all` start is not an event number: config/ checks everything else.
  const settings = settingsFromBound(onAll && bound !== undefined ? withoutStart(bound) : bound)
  if (Either.isLeft(settings)) {
    const refusal = settings.left
    return refusal.answer === "BadRequest"
      ? Effect.succeed(badRequest(refusal.reason))
      : completionReply(operation, { _tag: "Fail", reason: refusal.reason }, responseType, location)
  }
  if (!onAll) return Effect.succeed({ stream, group, settings: settings.right })
  const start = allStart(bound)
  if (Either.isLeft(start)) return Effect.succeed(badRequest(start.left))
  const filter = hasFilter ? filterOf(filterTree) : undefined
  if (filter !== undefined && Either.isLeft(filter)) return Effect.succeed(badRequest(filter.left))
  const allSettings: GroupSettings = {
    ...settings.right,
    startFrom: start.right === AllEnd ? -1 : 0,
    startPosition: start.right
  }
  return Effect.succeed({ stream, group, settings: allSettings, filter: filter?.right })
}
