/**
 * The info routes: every group (`GET /subscriptions`, paged with `?offset=&count=`), a stream's groups
 * (`GET /subscriptions/{s}`, 404 when it has none) and one group's `/info` (404 when missing). A node whose
 * groups are not running answers 503. No Cache-Control: these change all the time.
 */
import { Effect } from "effect"
import { badRequest, statusReply, type Reply, type RouteInput } from "@vellum/http"
import { Subscriptions } from "../service/Subscriptions.js"
import { documentOf } from "./documents.js"
import { InfoXmlItems, infoDocument, pagedDocument, summaryDocument } from "./infoDocuments.js"

const NotReady: Reply = statusReply(503, "Service Unavailable")

/** A non-negative (offset) or positive (count) 32-bit integer, as .NET's int.TryParse reads one. */
const int32 = (text: string): number | undefined => {
  if (!/^\s*[+-]?\d+\s*$/.test(text)) return undefined
  const value = Number(text.trim())
  return Math.abs(value) <= 2147483647 ? value : undefined
}

export const listGroups = (input: RouteInput): Effect.Effect<Reply, never, Subscriptions> =>
  Effect.gen(function* () {
    const offsetText = input.query.get("offset")
    const countText = input.query.get("count")
    const paged = offsetText !== null || countText !== null
    const offset = offsetText === null ? 0 : (int32(offsetText) ?? -1)
    const count = countText === null ? undefined : int32(countText)
    if (paged) {
      if (offset < 0) return badRequest(`Offset "${offsetText ?? ""}" must be a non-negative integer`)
      if (count === undefined || count < 1) return badRequest(`Count "${countText ?? ""}" must be a positive integer`)
    }
    const service = yield* Subscriptions
    if (!service.isReady()) return NotReady
    const all = yield* service.list()
    if (paged)
      return documentOf(
        200,
        "OK",
        input.responseType,
        "PagedSubscriptionInfo",
        pagedDocument(input.baseUrl, all, offset, count!),
        InfoXmlItems
      )
    return documentOf(
      200,
      "OK",
      input.responseType,
      "ArrayOfSubscriptionSummary",
      all.map((info) => summaryDocument(input.baseUrl, info)),
      InfoXmlItems
    )
  })

export const streamGroups = (input: RouteInput): Effect.Effect<Reply, never, Subscriptions> =>
  Effect.gen(function* () {
    const stream = input.params["stream"] ?? ""
    const service = yield* Subscriptions
    if (!service.isReady()) return NotReady
    const groups = (yield* service.list()).filter((info) => info.stream === stream)
    return documentOf(
      groups.length === 0 ? 404 : 200,
      groups.length === 0 ? "Not Found" : "OK",
      input.responseType,
      "ArrayOfSubscriptionSummary",
      groups.map((info) => summaryDocument(input.baseUrl, info)),
      InfoXmlItems
    )
  })

export const groupInfo = (input: RouteInput): Effect.Effect<Reply, never, Subscriptions> =>
  Effect.gen(function* () {
    const service = yield* Subscriptions
    if (!service.isReady()) return NotReady
    const info = yield* service.info(input.params["stream"] ?? "", input.params["group"] ?? "")
    if (info === undefined) return statusReply(404, "Not Found")
    return documentOf(
      200,
      "OK",
      input.responseType,
      "SubscriptionInfo",
      infoDocument(input.baseUrl, info),
      InfoXmlItems
    )
  })
