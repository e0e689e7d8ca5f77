/**
 * Group management over HTTP: create (PUT), update (POST), delete, replayParked and restart, each answered
 * with the reference's completion document and status (completion.ts). Callers are `$ops` or `$admins` (the
 * pipeline checks). The group's stream and name are taken as routed (percent-decoded).
 */
import { Effect } from "effect"
import { TextPlainUtf8, emptyReply, type Reply, type RouteInput } from "@vellum/http"
import { Subscriptions } from "../service/Subscriptions.js"
import { completionReply, groupLocation, type Operation } from "./completion.js"
import { stringDocument } from "./stringDocument.js"
import { groupSpecOf } from "./groupBody.js"

const byOf = (input: RouteInput): string | undefined => (input.principal.anonymous ? undefined : input.principal.name)

const names = (input: RouteInput) => ({ stream: input.params["stream"] ?? "", group: input.params["group"] ?? "" })

const createOrUpdate =
  (operation: Extract<Operation, "create" | "update">) =>
  (input: RouteInput): Effect.Effect<Reply, never, Subscriptions> =>
    Effect.gen(function* () {
      const { stream, group } = names(input)
      const location = groupLocation(input.baseUrl, stream, group)
      const spec = yield* groupSpecOf(
        operation,
        stream,
        group,
        input.requestType,
        input.body,
        input.responseType,
        location
      )
      if ("status" in spec) return spec
      const service = yield* Subscriptions
      const result = yield* operation === "create"
        ? service.create(spec, byOf(input))
        : service.update(spec, byOf(input))
      return yield* completionReply(operation, result, input.responseType, location)
    })

export const createGroup = createOrUpdate("create")
export const updateGroup = createOrUpdate("update")

export const deleteGroup = (input: RouteInput): Effect.Effect<Reply, never, Subscriptions> =>
  Effect.gen(function* () {
    const { stream, group } = names(input)
    const result = yield* Effect.flatMap(Subscriptions, (s) => s.delete(stream, group, byOf(input)))
    return yield* completionReply("delete", result, input.responseType, undefined)
  })

/** `?stopAt=`: absent, or a non-negative long. */
const stopAtOf = (text: string | null): number | undefined | "invalid" => {
  if (text === null) return undefined
  if (!/^\s*\+?\d+\s*$/.test(text)) return "invalid"
  const value = BigInt(text.trim())
  if (value > 9223372036854775807n) return "invalid"
  return Number(value > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : value)
}

export const replayParked = (input: RouteInput): Effect.Effect<Reply, never, Subscriptions> =>
  Effect.gen(function* () {
    const stopAt = stopAtOf(input.query.get("stopAt"))
    if (stopAt === "invalid") return emptyReply(400, "stopAt should be a properly formed positive long")
    const { stream, group } = names(input)
    const result = yield* Effect.flatMap(Subscriptions, (s) => s.replayParked(stream, group, stopAt))
    return yield* completionReply("replayParked", result, input.responseType, undefined)
  })

/** 200 `"Restarting"` in the negotiated codec; refused, 400 with the reason as plain text. */
export const restart = (input: RouteInput): Effect.Effect<Reply, never, Subscriptions> =>
  Effect.map(
    Effect.flatMap(Subscriptions, (s) => s.restart()),
    (result): Reply =>
      result._tag === "Success"
        ? stringDocument(200, "OK", input.responseType, "Restarting")
        : {
            status: 400,
            reason: "Bad Request",
            headers: { "Content-Type": TextPlainUtf8 },
            body: result.reason
          }
  )
