/**
 * Acks and nacks over HTTP: `…/ack/{id}`, `…/ack?ids=a,b`, `…/nack/{id}?action=`, `…/nack?ids=a,b&action=`.
 * The caller needs read access to the group's stream. They are fire and forget, as the reference's: 202 with
 * no body whether or not the group or the ids exist; only an id that is not a GUID (in any of .NET's forms)
 * is refused, 400 with the reason in the status line. The nack action is `park`, `retry`, `skip` or `stop` in
 * any case; anything else, or none, retries (so the product document's misspelling `Retyr` retries too).
 */
import { Effect } from "effect"
import { denyUnlessAllowed, emptyReply, parseGuid, type Reply, type RouteInput } from "@vellum/http"
import type { StreamAccess } from "@vellum/security"
import type { NackAction } from "../group/types.js"
import { Subscriptions } from "../service/Subscriptions.js"

const BadId: Reply = emptyReply(400, "messageid should be a properly formed guid")
const Accepted: Reply = emptyReply(202, "Accepted")

/** The ids of the route (`{messageid}` or `?ids=`), canonical; undefined when one is not a GUID. */
const idsOf = (input: RouteInput): ReadonlyArray<string> | undefined => {
  const single = input.params["messageid"]
  const texts = single !== undefined ? [single] : (input.query.get("ids") ?? "").split(",")
  const ids: Array<string> = []
  for (const text of texts) {
    const id = parseGuid(text)
    if (id === undefined) return undefined
    ids.push(id)
  }
  return ids
}

export const nackActionOf = (text: string | null): NackAction => {
  switch ((text ?? "").toLowerCase()) {
    case "park":
      return "Park"
    case "skip":
      return "Skip"
    case "stop":
      return "Stop"
    default:
      return "Retry"
  }
}

const settle = (
  input: RouteInput,
  send: (stream: string, group: string, ids: ReadonlyArray<string>) => Effect.Effect<void, never, Subscriptions>
): Effect.Effect<Reply, never, Subscriptions | StreamAccess> =>
  Effect.gen(function* () {
    const stream = input.params["stream"] ?? ""
    const denied = yield* denyUnlessAllowed(input.principal, input.settings, stream, "$r")
    if (denied !== undefined) return denied
    const ids = idsOf(input)
    if (ids === undefined) return BadId
    yield* send(stream, input.params["group"] ?? "", ids)
    return Accepted
  })

export const ack = (input: RouteInput) =>
  settle(input, (stream, group, ids) => Effect.flatMap(Subscriptions, (s) => s.ack(stream, group, ids)))

export const nack = (input: RouteInput) =>
  settle(input, (stream, group, ids) =>
    Effect.flatMap(Subscriptions, (s) => s.nack(stream, group, ids, nackActionOf(input.query.get("action"))))
  )
