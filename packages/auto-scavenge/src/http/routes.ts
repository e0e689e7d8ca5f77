/**
 * The auto-scavenge HTTP API over the `AutoScavenge` service, answered as the reference's plugin answers:
 *
 *   GET  /auto-scavenge/enabled     any user: 200 {"enabled":true}
 *   GET  /auto-scavenge/status      any user: 200 the status document
 *   POST /auto-scavenge/configure   $ops/$admins, body {"schedule":"<cron>"}: 200 {}
 *   POST /auto-scavenge/pause       $ops/$admins: 200 {} when paused now, 202 while a node scavenge stops
 *   POST /auto-scavenge/resume      $ops/$admins: 200 {}
 *
 * Anonymous callers get 401 on all five (even where the node lets anonymous callers use other endpoints: the
 * reference asks its web framework for an authenticated user); a user outside $ops/$admins gets 403 on the
 * commands. Replies: done → 200 `{}`; accepted → 202 with no body; rejected → 400 with the reason as a JSON
 * string; a server error → 500 problem+json with the detail. The routes exist only while auto-scavenge is
 * enabled (404 otherwise); the reference's 503 "not enabled" follows a licence check Vellum does not have.
 * Like the reference's endpoints they do not negotiate: JSON whatever `Accept` says.
 */
import { Effect } from "effect"
import {
  documentReply,
  emptyReply,
  serverErrorProblem,
  unauthorizedBare,
  type Reply,
  type RouteDef,
  type RouteInput
} from "@vellum/http"
import { isOpsOrAdmin, type Principal } from "@vellum/security"
import { AutoScavenge, type AutoScavengeReply } from "../AutoScavenge.js"
import type { UserCommand } from "../domain/commands.js"
import { readConfigureBody } from "./configureBody.js"

const JSON_TYPE = "application/json"

const jsonReply = (status: 200 | 400, value: unknown): Reply =>
  documentReply(status, status === 200 ? "OK" : "Bad Request", JSON_TYPE, JSON.stringify(value))

/** 400 with the reason as a JSON string (ASP.NET's `Results.BadRequest(string)`). */
const rejected = (message: string): Reply => jsonReply(400, message)

export const replyOf = (answer: AutoScavengeReply): Reply => {
  switch (answer._tag) {
    case "Done":
      return jsonReply(200, {})
    case "Accepted":
      return emptyReply(202, "Accepted")
    case "Rejected":
      return rejected(answer.message)
    case "Status":
      return jsonReply(200, answer.body)
    case "Failed":
      return serverErrorProblem(answer.detail)
  }
}

/** Who may call: any authenticated user, or `$ops`/`$admins` only. Undefined when the caller may. */
const denial = (principal: Principal, opsOnly: boolean): Reply | undefined => {
  if (principal.anonymous) return unauthorizedBare
  if (opsOnly && !isOpsOrAdmin(principal)) return emptyReply(403, "Forbidden")
  return undefined
}

const route = (
  method: "GET" | "POST",
  path: string,
  opsOnly: boolean,
  handle: (input: RouteInput) => Effect.Effect<Reply, never, AutoScavenge>
): RouteDef<AutoScavenge> => ({
  method,
  path: `/auto-scavenge/${path}`,
  // Checked here rather than by the pipeline: it would let anonymous callers in with
  // AllowAnonymousEndpointAccess, and answers a missing role with 401 where the reference says 403.
  access: "handler",
  responseCodecs: [JSON_TYPE],
  ignoresAccept: true,
  handle: (input) => {
    const denied = denial(input.principal, opsOnly)
    return denied === undefined ? handle(input) : Effect.succeed(denied)
  }
})

const execute = (command: UserCommand): Effect.Effect<Reply, never, AutoScavenge> =>
  Effect.map(
    Effect.flatMap(AutoScavenge, (service) => service.execute(command)),
    replyOf
  )

export const enabledRoute = route("GET", "enabled", false, () => Effect.succeed(jsonReply(200, { enabled: true })))

export const statusRoute = route("GET", "status", false, () => execute({ _tag: "GetStatus" }))

export const configureRoute = route("POST", "configure", true, (input) => {
  const body = readConfigureBody(input.headers["content-type"], input.body)
  switch (body._tag) {
    case "NotJson":
      return Effect.succeed(serverErrorProblem(body.detail))
    case "Rejected":
      return Effect.succeed(rejected(body.message))
    case "Schedule":
      // The expanded rendering is what is stored and shown (`*/15 * * * *` → `0,15,30,45 * * * *`).
      return execute({ _tag: "Configure", schedule: body.schedule.expanded })
  }
})

export const pauseRoute = route("POST", "pause", true, () => execute({ _tag: "Pause" }))

export const resumeRoute = route("POST", "resume", true, () => execute({ _tag: "Resume" }))

/** Every auto-scavenge route, for the node's route list while auto-scavenge is enabled. */
export const autoScavengeRoutes: ReadonlyArray<RouteDef<AutoScavenge>> = [
  enabledRoute,
  statusRoute,
  configureRoute,
  pauseRoute,
  resumeRoute
]
