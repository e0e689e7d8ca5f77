/**
 * Single events and stream metadata reads: `GET /streams/{s}/{n|head}`,
 * `GET /streams/{s}/metadata[/{n|head}]`. A numbered event is immutable; `head` carries an ETag of the
 * event read. Metadata of a stream that exists but has none is a 200 with `{}` (JSON) or nothing.
 */
import type { Clock, Context } from "effect"
import { eitherNow, type Steps } from "@vellum/platform"
import {
  EventStore,
  isMetastream,
  metastreamOf,
  originalEvent,
  type EventRead,
  type EventStoreService
} from "@vellum/storage"
import { notFoundBody, renderSingleEvent, singleEventCache, parseEmbed, type EmbedLevel } from "../atom/index.js"
import type { Reply } from "../Reply.js"
import type { RouteInput } from "../Route.js"
import type { StreamRouteRequirements } from "./requirements.js"
import { badRequest, TextPlainUtf8 } from "../replies.js"
import { storageErrorReply } from "../storageErrors.js"
import { denyReadSteps, linkOptionsSteps } from "./access.js"
import { answerSteps, handlerOf } from "../Answer.js"
import { cachedRead } from "./cachedRead.js"
import * as Control from "./controlHeaders.js"
import { htmlRedirectPage } from "./htmlPage.js"
import { MediaTypes } from "./mediaTypes.js"
import { eventNumberParam } from "./readParams.js"

/** 404/410 of a single-event read: `{}` for the JSON types, with `text/plain; charset=utf-8`. */
const missing = (status: 404 | 410, input: RouteInput): Reply => ({
  status,
  reason: status === 404 ? "Not Found" : "Deleted",
  headers: { "Content-Type": TextPlainUtf8 },
  body: notFoundBody(input.responseType)
})

/** The HTML codec renders single events at TryHarder. */
const eventEmbed = (input: RouteInput): EmbedLevel =>
  input.responseType === MediaTypes.Html ? "TryHarder" : parseEmbed(input.query.get("embed"))

interface SingleRequest {
  readonly stream: string
  /** -1: head. */
  readonly eventNumber: number
  readonly resolveLinks: boolean
}

const singleRequest = (input: RouteInput, metadata: boolean): SingleRequest | Reply => {
  const stream = input.params["stream"] ?? ""
  if (metadata && (stream === "" || isMetastream(stream)))
    return badRequest("Stream must be non-empty string and should not be metastream")
  if (stream === "") return badRequest(`Invalid stream name '${stream}'`)
  const number = eventNumberParam(input.params["event"], true)
  if (!number.ok) return badRequest(number.message)
  const resolve = Control.resolveLinkTos(input.headers, !metadata)
  if (!resolve.ok) return badRequest(resolve.message)
  const leader = Control.requireLeader(input.headers)
  if (!leader.ok) return badRequest(leader.message)
  return { stream: metadata ? metastreamOf(stream) : stream, eventNumber: number.value, resolveLinks: resolve.value }
}

/** A successful read rendered in the negotiated type, with its cache headers. */
const rendered = (
  input: RouteInput,
  read: Extract<EventRead, { _tag: "Success" }>,
  isHead: boolean,
  cacheControlSeconds: number | undefined
): Reply => {
  const body = renderSingleEvent({
    baseUrl: input.baseUrl,
    event: read.event,
    embed: eventEmbed(input),
    contentType: input.responseType
  })
  if (body === undefined) return missing(404, input)
  const text = input.responseType === MediaTypes.Html && typeof body === "string" ? htmlRedirectPage(body) : body
  return cachedRead(input, text, singleEventCache(isHead, originalEvent(read.event).eventNumber), cacheControlSeconds)
}

/** A single event as steps (Answer.ts `answerSteps`): plain code when the event and its stream's facts are in memory. */
function* readSingle(
  input: RouteInput,
  metadata: boolean,
  clock: Clock.Clock
): Steps<Reply, never, StreamRouteRequirements> {
  const denied = yield* denyReadSteps(input, metadata)
  if (denied !== undefined) return denied
  const addressed = input.params["stream"] ?? ""
  const request = singleRequest(input, metadata)
  if ("status" in request) return request
  const store = yield* EventStore
  const isHead = request.eventNumber < 0
  const options = yield* linkOptionsSteps(input.principal, request.resolveLinks)
  const read = yield* eitherNow(
    store.readNow?.event(request.stream, request.eventNumber, options, clock) ??
      store.readEvent(request.stream, request.eventNumber, options)
  )
  if (read._tag === "Left") return storageErrorReply(read.left)
  const result = read.right
  switch (result._tag) {
    case "Success":
      // The head's cache lifetime is the stream's `$cacheControl` (one more read, head reads only).
      return rendered(input, result, isHead, isHead ? yield* headCacheSeconds(store, request.stream) : undefined)
    case "StreamDeleted":
      return missing(410, input)
    case "NotFound":
    case "NoStream":
      return metadata && isHead ? yield* metadataOfExistingStream(store, input, addressed) : missing(404, input)
  }
}

/** A stream's metadata, begun now where the store can. */
const metadataOf = (store: EventStoreService, stream: string) =>
  eitherNow(store.readNow?.metadata(stream) ?? store.getStreamMetadata(stream))

function* headCacheSeconds(store: EventStoreService, stream: string): Steps<number | undefined, never> {
  const meta = yield* metadataOf(store, stream)
  return meta._tag === "Right" ? meta.right.metadata.cacheControl : undefined
}

/** `GET /streams/{s}/metadata` when `$$s` has no event: 200 with `{}` if `s` exists, else 404/410. */
function* metadataOfExistingStream(store: EventStoreService, input: RouteInput, stream: string): Steps<Reply, never> {
  const meta = yield* metadataOf(store, stream)
  if (meta._tag === "Left") return storageErrorReply(meta.left)
  if (meta.right._tag === "StreamDeleted") return missing(410, input)
  if (meta.right._tag === "NoStream") return missing(404, input)
  return cachedRead(
    input,
    notFoundBody(input.responseType),
    singleEventCache(true, undefined),
    meta.right.metadata.cacheControl
  )
}

type Services = Context.Context<StreamRouteRequirements>

export const answerStreamEvent = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readSingle(input, false, clock), services)
export const answerMetadataEvent = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readSingle(input, true, clock), services)
export const readStreamEvent = handlerOf(answerStreamEvent)
export const readMetadataEvent = handlerOf(answerMetadataEvent)
