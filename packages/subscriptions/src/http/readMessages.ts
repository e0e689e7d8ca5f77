/**
 * `GET /subscriptions/{s}/{g}[/{count}][?embed=]`: the next messages of a group as the competing feed.
 * The caller needs read access to `{s}`. The count is 1..100 (default 1), refused with the reference's
 * message, which shows the count as .NET parsed it (0 when it is not a number). Beyond the reference, a
 * `Kurrent-LongPoll`/`ES-LongPoll` header of N seconds waits up to N seconds for a first message instead of
 * answering an empty feed at once (the header is checked as on stream reads; the pipeline's deadline grows by
 * it, as for them).
 */
import { Effect } from "effect"
import {
  badRequest,
  denyUnlessAllowed,
  documentReply,
  longPoll,
  parseEmbed,
  type Reply,
  type RouteInput
} from "@vellum/http"
import type { StreamAccess } from "@vellum/security"
import { Subscriptions } from "../service/Subscriptions.js"
import { renderCompetingFeed } from "./competingFeed.js"
import { stringDocument } from "./stringDocument.js"

const DefaultCount = 1
const MaxCount = 100

/** `{count}` (1 when absent), or the refusal. */
const countOf = (text: string | undefined): number | Reply => {
  if (text === undefined || text === "") return DefaultCount
  const parsed = /^\s*[+-]?\d+\s*$/.test(text) ? Number(text.trim()) : Number.NaN
  // .NET's int.TryParse leaves 0 behind when it fails, and the message shows that.
  const shown = Number.isSafeInteger(parsed) && Math.abs(parsed) <= 2147483647 ? parsed : 0
  if (shown < 1 || shown > MaxCount)
    return badRequest(`Message count must be an integer between 1 and ${MaxCount} 'count' ='${shown}'`)
  return shown
}

export const readMessages = (input: RouteInput): Effect.Effect<Reply, never, Subscriptions | StreamAccess> =>
  Effect.gen(function* () {
    const stream = input.params["stream"] ?? ""
    const group = input.params["group"] ?? ""
    const denied = yield* denyUnlessAllowed(input.principal, input.settings, stream, "$r")
    if (denied !== undefined) return denied
    const count = countOf(input.params["count"])
    if (typeof count !== "number") return count
    const poll = longPoll(input.headers)
    if (!poll.ok) return badRequest(poll.message)
    const service = yield* Subscriptions
    const result = yield* service.readMessages(stream, group, {
      count,
      waitMillis: poll.value === undefined ? 0 : poll.value * 1000
    })
    switch (result._tag) {
      case "DoesNotExist":
        return stringDocument(404, "Not Found", input.responseType, result.reason)
      case "NotReady":
        return stringDocument(503, "Service Unavailable", input.responseType, result.reason)
      case "Messages":
        return documentReply(
          200,
          "OK",
          input.responseType,
          renderCompetingFeed(
            {
              baseUrl: input.baseUrl,
              stream,
              group,
              count,
              embed: parseEmbed(input.query.get("embed")),
              messages: result.messages
            },
            input.responseType
          )
        )
    }
  })
