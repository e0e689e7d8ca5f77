/**
 * Appends: `POST /streams/{s}`, `POST /streams/{s}/incoming/{uuid}` and
 * `POST /streams/{s}/metadata`, with the reference's validation order (first failure wins), the 307 to
 * an idempotent `/incoming/{uuid}` URL when a single-event body comes without an id, the per-event and
 * whole-append (MaxAppendSize) size limits, and the 201 with the absolute Location of the first event
 * written.
 */
import { Context, Effect, Exit } from "effect"
import { StreamAccess, type StreamAction } from "@vellum/security"
import {
  EventStore,
  EventTypes,
  isMetastream,
  metastreamOf,
  randomUuid,
  type AppendError,
  type AppendResult,
  type EventStoreService
} from "@vellum/storage"
import { escapeDataString } from "../atom/index.js"
import type { Reply } from "../Reply.js"
import type { RouteInput } from "../Route.js"
import type { StreamRouteRequirements } from "./requirements.js"
import { badRequest, emptyReply, statusReply } from "../replies.js"
import { storageErrorReply } from "../storageErrors.js"
import { maxAppendSizeExceeded } from "../bodyLimit.js"
import { denyNow, denyUnlessAllowed } from "./access.js"
import { handlerOf, LaterReply, settled, toEffect, type Answer, type Delivered } from "../Answer.js"
import { parseAppendBody, type BodyResult } from "./appendBody.js"
import * as Control from "./controlHeaders.js"
import { bodyCarriesIdsAndTypes } from "./mediaTypes.js"

/** Expected version and require-leader, in the reference's order (both validated for every write). */
const writeOptions = (input: RouteInput): Control.Parsed<number> => {
  const expected = Control.expectedVersion(input.headers)
  if (!expected.ok) return expected
  const leader = Control.requireLeader(input.headers)
  return leader.ok ? expected : leader
}

type Services = Context.Context<StreamRouteRequirements>
type AppendAnswer = Answer<StreamRouteRequirements>

/**
 * Body → events → size check → append → 201 with `Location: <base>/streams/<escaped stream>/<first>`.
 * Plain code up to the append, whose answer comes in the writer's callback (Answer.ts): no fiber and no
 * Effect step on the common path, the hot path of HTTP appends. A large body is parsed by the settings'
 * off-thread parser when there is one.
 */
const write = (
  input: RouteInput,
  store: EventStoreService,
  stream: string,
  expectedVersion: number,
  id: string | undefined,
  type: string | undefined
): AppendAnswer => {
  const body = input.body
  const offThread = input.settings.appendBodyParser
  if (offThread !== undefined && body !== undefined && body.byteLength >= offThread.minBodyBytes) {
    return Effect.flatMap(offThread.parse(body, input.requestType ?? "", id, type), (parsed) =>
      toEffect(writeParsed(input, store, stream, expectedVersion, parsed))
    )
  }
  return writeParsed(input, store, stream, expectedVersion, parseAppendBody(body, input.requestType ?? "", id, type))
}

const writeParsed = (
  input: RouteInput,
  store: EventStoreService,
  stream: string,
  expectedVersion: number,
  parsed: BodyResult
): AppendAnswer => {
  if (parsed._tag === "Invalid") return badRequest(parsed.message)
  const settings = input.settings
  let total = 0
  for (const e of parsed.events) {
    const size = e.data.byteLength + e.metadata.byteLength
    if (size > settings.maxAppendEventBytes)
      return emptyReply(413, `Too large events received. Limit is ${settings.maxAppendEventBytes} bytes.`)
    total += size
  }
  if (total > settings.maxRequestBodyBytes) return maxAppendSizeExceeded(settings.maxRequestBodyBytes)
  const created = (appended: AppendResult): Reply =>
    statusReply(201, "Created", {
      Location: `${input.baseUrl}/streams/${escapeDataString(stream)}/${appended.firstEventNumber}`
    })
  const outcomeReply = (outcome: Effect.Effect<AppendResult, AppendError>): Delivered<StreamRouteRequirements> => {
    const exit = settled(outcome)
    if (exit !== undefined) {
      if (Exit.isSuccess(exit)) return created(exit.value)
      if (exit.cause._tag === "Fail") return storageErrorReply(exit.cause.error)
    }
    // A failure that logs first, or a defect (the pipeline answers it 500).
    return Effect.match(outcome, { onFailure: storageErrorReply, onSuccess: created })
  }
  const appendThen = store.appendThen
  if (appendThen === undefined) {
    return Effect.flatMap(Effect.exit(store.append(stream, expectedVersion, parsed.events)), (exit) => {
      const reply = outcomeReply(exit)
      return Effect.isEffect(reply) ? reply : Effect.succeed(reply)
    })
  }
  return new LaterReply<StreamRouteRequirements>((deliver) =>
    appendThen(stream, expectedVersion, parsed.events, (outcome) => deliver(outcomeReply(outcome)))
  )
}

const nonEmptyStream = (input: RouteInput): string | undefined => {
  const stream = input.params["stream"] ?? ""
  return stream === "" ? undefined : stream
}

/** The request URL without its query (the reference appends to the whole URL and mangles queries). */
const withoutQuery = (url: string): string => {
  const mark = url.indexOf("?")
  return mark < 0 ? url : url.slice(0, mark)
}

/** The stream ACL gate, then `next` (plain when the policy needs no read). */
const afterAccess = (
  input: RouteInput,
  services: Services,
  stream: string,
  action: StreamAction,
  next: () => AppendAnswer
): AppendAnswer => {
  const denied = denyNow(input.principal, input.settings, stream, action, Context.get(services, StreamAccess))
  if (denied === undefined) return next()
  if (!Effect.isEffect(denied)) return denied
  return Effect.flatMap(denied, (refusal) => (refusal !== undefined ? Effect.succeed(refusal) : toEffect(next())))
}

/** `POST /streams/{stream}`. */
export const answerAppendToStream = (input: RouteInput, services: Services): AppendAnswer => {
  const stream = input.params["stream"] ?? ""
  return afterAccess(input, services, stream, "$w", () => {
    if (stream === "") return badRequest("Invalid request. Stream must be non-empty string")
    const carries = bodyCarriesIdsAndTypes(input.requestType ?? "")
    const type = Control.eventType(input.headers)
    if (!carries && type === undefined) {
      return badRequest("Must include an event type with the request either in body or as Kurrent-EventType header.")
    }
    const id = Control.eventId(input.headers)
    if (!id.ok) return badRequest(id.message)
    if (!carries && id.value === undefined) {
      return Effect.map(randomUuid, (uuid): Reply => ({
        status: 307,
        reason: "Temporary Redirect",
        headers: {
          "Content-Type": "text/plain; charset=utf-8",
          Location: `${withoutQuery(input.requestUrl)}/incoming/${uuid}`
        },
        body: "Forwarding to idempotent URI"
      }))
    }
    const options = writeOptions(input)
    if (!options.ok) return badRequest(options.message)
    return write(input, Context.get(services, EventStore), stream, options.value, id.value, type)
  })
}
export const appendToStream = handlerOf(answerAppendToStream)

/** `POST /streams/{stream}/incoming/{guid}`: the path's uuid is the event id; repeating it is idempotent. */
export const answerAppendIdempotent = (input: RouteInput, services: Services): AppendAnswer => {
  const stream = input.params["stream"] ?? ""
  return afterAccess(input, services, stream, "$w", () => {
    const guid = Control.parseGuid(input.params["guid"] ?? "")
    if (guid === undefined) return badRequest("Invalid request. Unable to parse guid")
    if (nonEmptyStream(input) === undefined) return badRequest("Invalid request. Stream must be non-empty string")
    const options = writeOptions(input)
    if (!options.ok) return badRequest(options.message)
    return write(
      input,
      Context.get(services, EventStore),
      stream,
      options.value,
      guid,
      Control.eventType(input.headers)
    )
  })
}
export const appendIdempotent = handlerOf(answerAppendIdempotent)

/** `POST /streams/{stream}/metadata`: appends to `$$stream`; header-typed bodies are typed `$metadata`. */
export const answerAppendMetadata = (input: RouteInput, services: Services): AppendAnswer => {
  const stream = input.params["stream"] ?? ""
  return afterAccess(input, services, stream, "$mw", () => {
    if (stream === "" || isMetastream(stream)) {
      return badRequest("Invalid request. Stream must be non-empty string and should not be metastream")
    }
    const id = Control.eventId(input.headers)
    if (!id.ok) return badRequest(id.message)
    const type = Control.eventType(input.headers)
    if (type !== undefined && type !== EventTypes.Metadata)
      return badRequest("Bad Request. You should not include an event type for metadata.")
    const options = writeOptions(input)
    if (!options.ok) return badRequest(options.message)
    const store = Context.get(services, EventStore)
    return write(input, store, metastreamOf(stream), options.value, id.value, EventTypes.Metadata)
  })
}
export const appendMetadata = handlerOf(answerAppendMetadata)

/** `DELETE /streams/{stream}`: soft delete, or a tombstone with `Kurrent-HardDelete: true`. */
export const deleteStream = (input: RouteInput): Effect.Effect<Reply, never, StreamRouteRequirements> =>
  Effect.gen(function* () {
    const stream = input.params["stream"] ?? ""
    const denied = yield* denyUnlessAllowed(input.principal, input.settings, stream, "$d")
    if (denied !== undefined) return denied
    if (stream === "") return badRequest(`Invalid stream name '${stream}'`)
    const options = writeOptions(input)
    if (!options.ok) return badRequest(options.message)
    const hard = Control.hardDelete(input.headers)
    if (!hard.ok) return badRequest(hard.message)
    const store = yield* EventStore
    const result = yield* Effect.either(store.deleteStream(stream, options.value, hard.value))
    return result._tag === "Left" ? storageErrorReply(result.left) : statusReply(204, "Stream deleted")
  })
