/**
 * How the simulated operator scavenges the node: over HTTP as the admin
 * (`POST /admin/scavenge`, `DELETE /admin/scavenge/current`, `GET /admin/scavenge/current|last`), or, with
 * the direct transport, through the node's `Scavenger` service.
 *
 * "Already running" and "nothing to stop" are answers. Over HTTP every other reply is `Unexpected` and fails
 * the run — in particular any 5xx: the scavenge API never touches the store synchronously, so no disk
 * error or stopped log excuses one (checker (d) of the simulator). One 503 comes before the API: the node
 * could not read its users to authenticate the admin (a disk error on `$users`); the request never reached the
 * scavenge routes, so it is sent again after a while.
 */
import { Effect } from "effect"
import type { Reply } from "@vellum/http"
import type { ScavengerService, StartScavengeOptions } from "@vellum/scavenge"
import { describeReply, replyText } from "./atomReplies.js"
import type { AdminRequest } from "./httpStore.js"
import { Unexpected } from "./simStore.js"

export type StartAnswer = "Started" | "AlreadyRunning"
export type StopAnswer = "Stopped" | "NotRunning"
export type LastResult = "Unknown" | "InProgress" | "Success" | "Stopped" | "Errored"

export interface ScavengeControl {
  readonly start: (options: StartScavengeOptions) => Effect.Effect<StartAnswer, Unexpected>
  /** Answers once the run has stopped. */
  readonly stop: Effect.Effect<StopAnswer, Unexpected>
  readonly running: Effect.Effect<boolean, Unexpected>
  readonly lastResult: Effect.Effect<LastResult, Unexpected>
}

export const directScavengeControl = (scavenger: ScavengerService): ScavengeControl => ({
  start: (options) =>
    Effect.match(scavenger.start(options), {
      onFailure: (): StartAnswer => "AlreadyRunning",
      onSuccess: (): StartAnswer => "Started"
    }),
  stop: Effect.match(scavenger.stop("current"), {
    onFailure: (): StopAnswer => "NotRunning",
    onSuccess: (): StopAnswer => "Stopped"
  }),
  running: Effect.map(scavenger.current, (current) => current !== undefined),
  lastResult: Effect.map(scavenger.last, (last) => last.result)
})

const Json = { accept: "application/json" }
const AlreadyRunning = "Scavenge is already running"
const NoSuchScavenge = "Scavenge Id does not exist"

const jsonField = (reply: Reply, field: string, what: string): Effect.Effect<unknown, Unexpected> => {
  try {
    const document = JSON.parse(replyText(reply)) as Record<string, unknown>
    if (field in document) return Effect.succeed(document[field])
  } catch {
    // reported below
  }
  return Effect.fail(new Unexpected(`${what}: no ${field} in ${describeReply(reply)}`))
}

/** Only the listed answers are expected; anything else (a 5xx above all) fails the run. */
const answer = <A>(
  reply: Reply,
  what: string,
  expected: (reply: Reply) => Effect.Effect<A, Unexpected> | undefined
): Effect.Effect<A, Unexpected> =>
  expected(reply) ?? Effect.fail(new Unexpected(`${what} answered ${describeReply(reply)}`))

/** The pipeline's answer when authentication could not read the users: 503, no body, `Retry-After`. */
const authenticationUnavailable = (reply: Reply): boolean =>
  reply.status === 503 && replyText(reply) === "" && reply.headers?.["Retry-After"] !== undefined

/** Sends again (every 250 ms, 40 times at most) while authentication is unavailable. */
const authenticated =
  (request: AdminRequest): AdminRequest =>
  (method, url, headers, body) =>
    Effect.gen(function* () {
      for (let attempt = 0; ; attempt++) {
        const reply = yield* request(method, url, headers, body)
        if (!authenticationUnavailable(reply) || attempt === 40) return reply
        yield* Effect.sleep(250)
      }
    })

export const httpScavengeControl = (send: AdminRequest): ScavengeControl => {
  const request = authenticated(send)
  return {
    start: (options) => {
      const query = `threads=${options.threads}&threshold=${options.threshold ?? 0}&throttlePercent=${options.throttlePercent}&syncOnly=${options.syncOnly}`
      const what = `POST /admin/scavenge?${query}`
      return Effect.flatMap(request("POST", `/admin/scavenge?${query}`, Json), (reply) =>
        answer(reply, what, (r) => {
          if (r.status === 200) return Effect.as(jsonField(r, "scavengeId", what), "Started" as const)
          if (r.status === 400 && replyText(r) === AlreadyRunning) return Effect.succeed("AlreadyRunning" as const)
          return undefined
        })
      )
    },
    stop: Effect.flatMap(request("DELETE", "/admin/scavenge/current", Json), (reply) =>
      answer(reply, "DELETE /admin/scavenge/current", (r) => {
        if (r.status === 200) return Effect.succeed("Stopped" as const)
        if (r.status === 404 && replyText(r) === NoSuchScavenge) return Effect.succeed("NotRunning" as const)
        return undefined
      })
    ),
    running: Effect.flatMap(request("GET", "/admin/scavenge/current", Json), (reply) =>
      answer(reply, "GET /admin/scavenge/current", (r) =>
        r.status === 200
          ? Effect.map(jsonField(r, "scavengeId", "GET /admin/scavenge/current"), (id) => id !== "")
          : undefined
      )
    ),
    lastResult: Effect.flatMap(request("GET", "/admin/scavenge/last", Json), (reply) =>
      answer(reply, "GET /admin/scavenge/last", (r) =>
        r.status === 200
          ? Effect.map(jsonField(r, "scavengeResult", "GET /admin/scavenge/last"), (result) => result as LastResult)
          : undefined
      )
    )
  }
}
