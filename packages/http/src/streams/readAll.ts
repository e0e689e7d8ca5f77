/**
 * `$all` feeds: `/streams/$all[/{pos|head}/{count}]`, `…/backward/{count}`,
 * `…/{pos}/forward/{count}` (long poll at the end of the log), and the filtered variants under
 * `/streams/$all/filtered` (`?exclude-system-events=true`, or `context`/`type`/`data`). Links are not
 * resolved unless asked; the ETag carries the committed position of the log.
 */
import { Effect, type Clock, type Context } from "effect"
import { eitherNow, mapNow, type Steps } from "@vellum/platform"
import { AllStream, EventStore, type AllRead, type ReadOptions, type ReadsNow } from "@vellum/storage"
import { allFeedBytes, allFeedCache, ifNoneMatchPosition, renderAllFeed } from "../atom/index.js"
import type { Reply } from "../Reply.js"
import type { RouteInput } from "../Route.js"
import type { StreamRouteRequirements } from "./requirements.js"
import { badRequest, statusReply } from "../replies.js"
import { storageErrorReply } from "../storageErrors.js"
import { denySteps, linkOptionsSteps } from "./access.js"
import { answerSteps, handlerOf } from "../Answer.js"
import { cachedRead } from "./cachedRead.js"
import * as Control from "./controlHeaders.js"
import { parseAllFilter, readFiltered, type AllFilter } from "./allFilter.js"
import { withLongPoll } from "./longPoll.js"
import { feedBody, feedEmbed } from "./readFeed.js"
import { allCountParam, positionParam, tooBigRead } from "./readParams.js"

interface AllRequest {
  readonly direction: "forward" | "backward"
  /** -1: head (backward only). */
  readonly position: number
  readonly count: number
  readonly resolveLinks: boolean
  readonly longPollSeconds: number | undefined
  readonly filter: AllFilter | undefined
}

const allRequest = (input: RouteInput, direction: "forward" | "backward", filtered: boolean): AllRequest | Reply => {
  let filter: AllFilter | undefined
  if (filtered) {
    const parsed = parseAllFilter(input.query)
    if (!parsed.ok) return badRequest(parsed.message)
    filter = parsed.value
  }
  const forward = direction === "forward"
  const position = positionParam(forward ? (input.params["position"] ?? "") : input.params["position"], !forward)
  if (!position.ok) return badRequest(position.message)
  const count = allCountParam(forward ? (input.params["count"] ?? "") : input.params["count"])
  if (!count.ok) return badRequest(count.message)
  // Filtered reads never look at ResolveLinkTos (forward always resolves; backward follows RequireLeader, sic).
  const resolve = filtered ? { ok: true as const, value: false } : Control.resolveLinkTos(input.headers, false)
  if (!resolve.ok) return badRequest(resolve.message)
  const leader = Control.requireLeader(input.headers)
  if (!leader.ok) return badRequest(leader.message)
  const longPoll = forward ? Control.longPoll(input.headers) : undefined
  if (longPoll !== undefined && !longPoll.ok) return badRequest(longPoll.message)
  return {
    direction,
    position: position.value,
    count: count.value,
    resolveLinks: filtered ? forward || leader.value : resolve.value,
    longPollSeconds: longPoll?.ok === true ? longPoll.value : undefined,
    filter
  }
}

/** The page begun now, with the committed position taken before it (as the Effect form below does). */
const pageNow = (
  now: ReadsNow,
  direction: "forward" | "backward",
  from: number,
  count: number,
  options: ReadOptions,
  clock: Clock.Clock
) => {
  const committed = now.committed()
  const page =
    direction === "forward" ? now.allForward(from, count, options, clock) : now.allBackward(from, count, options, clock)
  return mapNow(page, (page) => ({ page, committed }))
}

/** A `$all` page as steps (Answer.ts `answerSteps`): plain code while its records are in memory. */
function* readAll(
  input: RouteInput,
  direction: "forward" | "backward",
  filtered: boolean,
  clock: Clock.Clock
): Steps<Reply, never, StreamRouteRequirements> {
  const denied = yield* denySteps(input.principal, input.settings, AllStream, "$r")
  if (denied !== undefined) return denied
  const request = allRequest(input, direction, filtered)
  if ("status" in request) return request
  const store = yield* EventStore
  const tooBig = tooBigRead(request.count, store.config.maxReadCount)
  if (tooBig !== undefined) return tooBig
  const etag = ifNoneMatchPosition(input.headers["if-none-match"], input.responseType)
  const isHead = request.position < 0
  // Begun now unless it long-polls (a long poll runs its read again after the wait) or filters.
  const now = request.longPollSeconds === undefined && request.filter === undefined ? store.readNow : undefined
  // A head read starts from the committed position, so its `previous` link misses nothing committed meanwhile.
  const from = isHead ? (now?.committed() ?? (yield* store.committedPosition)) : request.position
  const options = yield* linkOptionsSteps(input.principal, request.resolveLinks)
  const readPage: Effect.Effect<
    { readonly page: AllRead; readonly committed: number },
    Parameters<typeof storageErrorReply>[0],
    EventStore
  > =
    now !== undefined
      ? pageNow(now, direction, from, request.count, options, clock)
      : Effect.gen(function* () {
          const committed = yield* store.committedPosition
          const page =
            request.filter !== undefined
              ? yield* readFiltered(store, direction, from, request.count, request.filter, options)
              : direction === "forward"
                ? yield* store.readAllForward(from, request.count, options)
                : yield* store.readAllBackward(from, request.count, options)
          return { page, committed }
        })
  const result = yield* eitherNow(
    withLongPoll({
      read: readPage,
      isEmpty: ({ page, committed }) => (page.events.length === 0 && page.isEnd) || etag === committed,
      wakesOn: () => true,
      seconds: request.longPollSeconds
    })
  )
  if (result._tag === "Left") return storageErrorReply(result.left)
  const { page, committed } = result.right
  if (etag !== undefined && etag === committed) return statusReply(304, "Not Modified")
  const metadata = yield* eitherNow(now?.metadata(AllStream) ?? store.getStreamMetadata(AllStream))
  const embed = feedEmbed(input)
  const body = feedBody(
    input,
    {
      baseUrl: input.baseUrl,
      direction,
      from,
      count: request.count,
      embed,
      page,
      ...(filtered ? { filtered: true } : {})
    },
    renderAllFeed,
    allFeedBytes
  )
  return cachedRead(
    input,
    body,
    allFeedCache(direction, isHead, from, page.events.length, request.count, committed),
    metadata._tag === "Right" ? metadata.right.metadata.cacheControl : undefined
  )
}

type Services = Context.Context<StreamRouteRequirements>

export const answerAllBackward = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readAll(input, "backward", false, clock), services)
export const answerAllForward = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readAll(input, "forward", false, clock), services)
export const answerAllFilteredBackward = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readAll(input, "backward", true, clock), services)
export const answerAllFilteredForward = (input: RouteInput, services: Services, clock: Clock.Clock) =>
  answerSteps(readAll(input, "forward", true, clock), services)
export const readAllBackward = handlerOf(answerAllBackward)
export const readAllForward = handlerOf(answerAllForward)
export const readAllFilteredBackward = handlerOf(answerAllFilteredBackward)
export const readAllFilteredForward = handlerOf(answerAllFilteredForward)
