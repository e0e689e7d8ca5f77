/**
 * Stream and metastream feeds: backward pages (the head, `…/{n}/{count}`,
 * `…/{n}/backward/{count}`) and forward pages (`…/{n}/forward/{count}`, with long polling), for
 * `/streams/{s}…` and `/streams/{s}/metadata…`. The description document answers head/backward stream
 * reads negotiated as a streamdesc type (406 when the client named no type or the any-type range).
 */
import type { Clock, Context } from "effect"
import { eitherNow, type Steps } from "@vellum/platform"
import { EventStore, metastreamOf, isMetastream, type StreamRead } from "@vellum/storage"
import {
  feedSyntaxFor,
  ifNoneMatchPosition,
  renderDescriptionDocument,
  renderStreamFeed,
  streamFeedBytes,
  streamFeedCache,
  DescriptionDocumentReason,
  parseEmbed,
  type EmbedLevel,
  type FeedSyntax
} from "../atom/index.js"
import { acceptsAnything } from "../mediaType.js"
import type { Reply } from "../Reply.js"
import type { RouteInput } from "../Route.js"
import type { StreamRouteRequirements } from "./requirements.js"
import { badRequest, documentReply, statusReply } from "../replies.js"
import { storageErrorReply } from "../storageErrors.js"
import { denyReadSteps, linkOptionsSteps } from "./access.js"
import { answerSteps, handlerOf } from "../Answer.js"
import { cachedRead } from "./cachedRead.js"
import * as Control from "./controlHeaders.js"
import { htmlRedirectPage } from "./htmlPage.js"
import { withLongPoll } from "./longPoll.js"
import { MediaTypes, isDescriptionType } from "./mediaTypes.js"
import { countParam, eventNumberParam, tooBigRead } from "./readParams.js"

/** Feed syntax for a negotiated type: streamdesc types get the JSON feed (only the head special-cases them). */
export const feedSyntax = (type: string): FeedSyntax => feedSyntaxFor(type) ?? "json"

/** The embed level: the HTML codec always renders PrettyBody feeds. */
export const feedEmbed = (input: RouteInput): EmbedLevel =>
  input.responseType === MediaTypes.Html ? "PrettyBody" : parseEmbed(input.query.get("embed"))

/** A rendered feed body in the negotiated type: its UTF-8 bytes, or the HTML page that wraps the JSON feed. */
export const feedBody = <C>(
  input: RouteInput,
  ctx: C,
  text: (ctx: C, syntax: FeedSyntax) => string,
  bytes: (ctx: C, syntax: FeedSyntax) => Uint8Array
): string | Uint8Array =>
  input.responseType === MediaTypes.Html
    ? htmlRedirectPage(text(ctx, "json"))
    : bytes(ctx, feedSyntax(input.responseType))

interface FeedRequest {
  /** The stream read (`$$s` for metadata feeds). */
  readonly stream: string
  readonly direction: "forward" | "backward"
  /** -1: head. */
  readonly from: number
  readonly count: number
  readonly resolveLinks: boolean
  readonly longPollSeconds: number | undefined
}

/** Validates the route's parameters and headers in the reference's order. */
const feedRequest = (input: RouteInput, direction: "forward" | "backward", metadata: boolean): FeedRequest | Reply => {
  const stream = input.params["stream"] ?? ""
  if (stream === "" || (metadata && isMetastream(stream))) return badRequest(`Invalid stream name '${stream}'`)
  const event = input.params["event"]
  const from = direction === "forward" ? eventNumberParam(event ?? "", false) : eventNumberParam(event, true)
  if (!from.ok) return badRequest(from.message)
  const count = countParam(direction === "forward" ? (input.params["count"] ?? "") : input.params["count"])
  if (!count.ok) return badRequest(count.message)
  const resolve = Control.resolveLinkTos(input.headers, !metadata)
  if (!resolve.ok) return badRequest(resolve.message)
  const leader = Control.requireLeader(input.headers)
  if (!leader.ok) return badRequest(leader.message)
  // Only forward routes read (and validate) the long-poll header.
  const longPoll = direction === "forward" ? Control.longPoll(input.headers) : undefined
  if (longPoll !== undefined && !longPoll.ok) return badRequest(longPoll.message)
  return {
    stream: metadata ? metastreamOf(stream) : stream,
    direction,
    from: from.value,
    count: count.value,
    resolveLinks: resolve.value,
    longPollSeconds: longPoll?.ok === true ? longPoll.value : undefined
  }
}

const describe = (input: RouteInput, stream: string): Reply =>
  documentReply(
    acceptsAnything(input.headers["accept"]) ? 406 : 200,
    DescriptionDocumentReason,
    input.responseType,
    renderDescriptionDocument(stream, input.responseType)
  )

/** Nothing new for a forward read: past the end, no stream yet, or the client's ETag still current. */
const nothingNew =
  (request: FeedRequest, etag: number | undefined) =>
  (read: StreamRead): boolean =>
    read._tag === "NoStream" ||
    (read._tag === "Success" && (request.from > read.lastEventNumber || etag === read.lastEventNumber))

/**
 * A feed page as steps (Answer.ts `answerSteps`): with the stream's facts in memory, from the ACL check to
 * the rendered page in plain code; a long poll, a disk read or an ACL that must read go on as an Effect.
 */
function* readFeed(
  input: RouteInput,
  direction: "forward" | "backward",
  metadata: boolean,
  clock: Clock.Clock
): Steps<Reply, never, StreamRouteRequirements> {
  const denied = yield* denyReadSteps(input, metadata)
  if (denied !== undefined) return denied
  const addressed = input.params["stream"] ?? ""
  if (!metadata && direction === "backward" && isDescriptionType(input.responseType)) return describe(input, addressed)
  const request = feedRequest(input, direction, metadata)
  if ("status" in request) return request
  const store = yield* EventStore
  const tooBig = tooBigRead(request.count, store.config.maxReadCount)
  if (tooBig !== undefined) return tooBig
  const etag = ifNoneMatchPosition(input.headers["if-none-match"], input.responseType)
  const options = yield* linkOptionsSteps(input.principal, request.resolveLinks)
  // Begun now unless it long-polls (a long poll runs its read again after the wait).
  const now = request.longPollSeconds === undefined ? store.readNow : undefined
  const read =
    direction === "forward"
      ? (now?.streamForward(request.stream, request.from, request.count, options, clock) ??
        store.readStreamForward(request.stream, request.from, request.count, options))
      : (now?.streamBackward(request.stream, request.from, request.count, options, clock) ??
        store.readStreamBackward(request.stream, request.from, request.count, options))
  const result = yield* eitherNow(
    withLongPoll({
      read,
      isEmpty: nothingNew(request, etag),
      wakesOn: (notice) => notice.streams.includes(request.stream),
      seconds: request.longPollSeconds
    })
  )
  if (result._tag === "Left") return storageErrorReply(result.left)
  const page = result.right
  if (page._tag === "NoStream") return statusReply(404, "Not Found")
  if (page._tag === "StreamDeleted") return statusReply(410, "Deleted")
  if (etag !== undefined && etag === page.lastEventNumber) return statusReply(304, "Not Modified")
  const embed = feedEmbed(input)
  const body = feedBody(
    input,
    {
      baseUrl: input.baseUrl,
      stream: request.stream,
      direction,
      from: request.from,
      count: request.count,
      embed,
      contentType: input.responseType,
      page
    },
    renderStreamFeed,
    streamFeedBytes
  )
  return cachedRead(
    input,
    body,
    streamFeedCache(direction, request.from, request.count, page.lastEventNumber),
    page.metadata.cacheControl
  )
}

type Services = Context.Context<StreamRouteRequirements>

export const answerStreamBackward = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readFeed(input, "backward", false, clock), services)
export const answerStreamForward = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readFeed(input, "forward", false, clock), services)
export const answerMetastreamBackward = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readFeed(input, "backward", true, clock), services)
export const answerMetastreamForward = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readFeed(input, "forward", true, clock), services)
export const readStreamBackward = handlerOf(answerStreamBackward)
export const readStreamForward = handlerOf(answerStreamForward)
export const readMetastreamBackward = handlerOf(answerMetastreamBackward)
export const readMetastreamForward = handlerOf(answerMetastreamForward)
