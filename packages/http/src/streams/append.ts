/**
 * Appends: `POST /streams/{s}`, `POST /streams/{s}/incoming/{uuid}` and
 * `POST /streams/{s}/metadata`, with the reference's validation order (first failure wins), the 307 to
 * an idempotent `/incoming/{uuid}` URL when a single-event body comes without an id, the per-event and
 * whole-append (MaxAppendSize) size limits, and the 201 with the absolute Location of the first event
 * written.
 */
import { Effect } from "effect"
import { EventStore, EventTypes, isMetastream, metastreamOf, randomUuid } from "@vellum/storage"
import { escapeDataString } from "../atom/index.js"
import type { Reply } from "../Reply.js"
import type { RouteInput } from "../Route.js"
import type { StreamRouteRequirements } from "./requirements.js"
import { badRequest, emptyReply, statusReply } from "../replies.js"
import { storageErrorReply } from "../storageErrors.js"
import { maxAppendSizeExceeded } from "../bodyLimit.js"
import { denyUnlessAllowed } from "./access.js"
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

/**
 * Body → events → size check → append → 201 with `Location: <base>/streams/<escaped stream>/<first>`.
 * Plain code up to the append, then one step for the store and one for its outcome: every Effect step is
 * about a microsecond here, and this is the hot path of HTTP appends. A large body is parsed by the
 * settings' off-thread parser when there is one.
 */
const write = (
  input: RouteInput,
  stream: string,
  expectedVersion: number,
  id: string | undefined,
  type: string | undefined
): Effect.Effect<Reply, never, StreamRouteRequirements> => {
  const body = input.body
  const offThread = input.settings.appendBodyParser
  if (offThread !== undefined && body !== undefined && body.byteLength >= offThread.minBodyBytes) {
    return Effect.flatMap(offThread.parse(body, input.requestType ?? "", id, type), (parsed) =>
      writeParsed(input, stream, expectedVersion, parsed)
    )
  }
  return writeParsed(input, stream, expectedVersion, parseAppendBody(body, input.requestType ?? "", id, type))
}

const writeParsed = (
  input: RouteInput,
  stream: string,
  expectedVersion: number,
  parsed: BodyResult
): Effect.Effect<Reply, never, StreamRouteRequirements> => {
  if (parsed._tag === "Invalid") return Effect.succeed(badRequest(parsed.message))
  const settings = input.settings
  let total = 0
  for (const e of parsed.events) {
    const size = e.data.byteLength + e.metadata.byteLength
    if (size > settings.maxAppendEventBytes)
      return Effect.succeed(
        emptyReply(413, `Too large events received. Limit is ${settings.maxAppendEventBytes} bytes.`)
      )
    total += size
  }
  if (total > settings.maxRequestBodyBytes) return Effect.succeed(maxAppendSizeExceeded(settings.maxRequestBodyBytes))
  return Effect.flatMap(EventStore, (store) =>
    Effect.match(store.append(stream, expectedVersion, parsed.events), {
      onFailure: storageErrorReply,
      onSuccess: (appended) =>
        statusReply(201, "Created", {
          Location: `${input.baseUrl}/streams/${escapeDataString(stream)}/${appended.firstEventNumber}`
        })
    })
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

/** `POST /streams/{stream}` (flatMaps rather than a generator: the hot path of HTTP appends). */
export const appendToStream = (input: RouteInput): Effect.Effect<Reply, never, StreamRouteRequirements> => {
  const stream = input.params["stream"] ?? ""
  return Effect.flatMap(denyUnlessAllowed(input.principal, input.settings, stream, "$w"), (denied) => {
    if (denied !== undefined) return Effect.succeed(denied)
    if (stream === "") return Effect.succeed(badRequest("Invalid request. Stream must be non-empty string"))
    const carries = bodyCarriesIdsAndTypes(input.requestType ?? "")
    const type = Control.eventType(input.headers)
    if (!carries && type === undefined) {
      return Effect.succeed(
        badRequest("Must include an event type with the request either in body or as Kurrent-EventType header.")
      )
    }
    const id = Control.eventId(input.headers)
    if (!id.ok) return Effect.succeed(badRequest(id.message))
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
    if (!options.ok) return Effect.succeed(badRequest(options.message))
    return write(input, stream, options.value, id.value, type)
  })
}

/** `POST /streams/{stream}/incoming/{guid}`: the path's uuid is the event id; repeating it is idempotent. */
export const appendIdempotent = (input: RouteInput): Effect.Effect<Reply, never, StreamRouteRequirements> =>
  Effect.gen(function* () {
    const stream = input.params["stream"] ?? ""
    const denied = yield* denyUnlessAllowed(input.principal, input.settings, stream, "$w")
    if (denied !== undefined) return denied
    const guid = Control.parseGuid(input.params["guid"] ?? "")
    if (guid === undefined) return badRequest("Invalid request. Unable to parse guid")
    if (nonEmptyStream(input) === undefined) return badRequest("Invalid request. Stream must be non-empty string")
    const options = writeOptions(input)
    if (!options.ok) return badRequest(options.message)
    return yield* write(input, stream, options.value, guid, Control.eventType(input.headers))
  })

/** `POST /streams/{stream}/metadata`: appends to `$$stream`; header-typed bodies are typed `$metadata`. */
export const appendMetadata = (input: RouteInput): Effect.Effect<Reply, never, StreamRouteRequirements> =>
  Effect.gen(function* () {
    const stream = input.params["stream"] ?? ""
    const denied = yield* denyUnlessAllowed(input.principal, input.settings, stream, "$mw")
    if (denied !== undefined) return denied
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
    return yield* write(input, metastreamOf(stream), options.value, id.value, EventTypes.Metadata)
  })

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
