/**
 * How the projection routes answer: a management call's outcome becomes either the route's own reply or
 * the reference's plain-text error (404 `Not Found`, 401 `Not authorized`, 409/400/500 with the reason; 503
 * with the reason when the subsystem is not running here), and documents are indented JSON.
 */
import { Effect } from "effect"
import { TextPlainUtf8, documentReply, type Reply } from "@vellum/http"
import { Projections, type ProjectionsOutcome, type ProjectionsService } from "../service/Projections.js"
import { indented, obj, str, type JsonValue } from "./jsonTree.js"

type Failure = Exclude<ProjectionsOutcome<unknown>, { readonly _tag: "Ok" }>

const plainText = (status: number, reason: string, body: string): Reply => ({
  status,
  reason,
  headers: { "Content-Type": TextPlainUtf8 },
  body
})

export const failureReply = (failure: Failure): Reply => {
  switch (failure._tag) {
    case "NotFound":
      return plainText(404, "Not Found", "Not Found")
    case "NotAuthorized":
      return plainText(401, "Not Authorized", "Not authorized")
    case "Conflict":
      return plainText(409, "Conflict", failure.reason)
    case "BadRequest":
      return plainText(400, "Bad Request", failure.reason)
    case "OperationFailed":
      return plainText(500, "Failed", failure.reason)
    case "NotReady":
      return plainText(503, "Service Unavailable", failure.reason)
  }
}

export const outcomeReply = <A>(outcome: ProjectionsOutcome<A>, ok: (value: A) => Reply): Reply =>
  outcome._tag === "Ok" ? ok(outcome.value) : failureReply(outcome)

/** Calls the service and answers with `ok` on success, the outcome's error reply otherwise. */
export const answer = <A>(
  call: (service: ProjectionsService) => Effect.Effect<ProjectionsOutcome<A>>,
  ok: (value: A) => Reply
): Effect.Effect<Reply, never, Projections> =>
  Effect.map(Effect.flatMap(Projections, call), (outcome) => outcomeReply(outcome, ok))

/** An indented JSON document (`application/json; charset=utf-8`). */
export const jsonReply = (value: JsonValue, headers: Record<string, string> = {}, status = 200): Reply =>
  documentReply(status, status === 201 ? "Created" : "OK", "application/json", indented(value), headers)

/** The reply of create, commands, query and config updates and delete: the projection's name. */
export const nameReply = (name: string, headers: Record<string, string> = {}, status = 200): Reply =>
  jsonReply(obj([["name", str(name)]]), headers, status)
