/**
 * The collection routes and one projection's figures: the lists by mode (`{"projections":[…]}`), one
 * projection's statistics (`GET /projection/{name}`, the object alone; `/statistics`, in a list), the
 * redirect of `GET /projections` to the admin UI's page, and the subsystem's restart.
 */
import { Effect } from "effect"
import type { Reply, RouteInput } from "@vellum/http"
import type { Projections, ProjectionListFilter } from "../service/Projections.js"
import { str } from "./jsonTree.js"
import { answer, jsonReply } from "./outcomeReplies.js"
import { nameOf, requesterOf } from "./requests.js"
import { statisticsJson, statisticsListJson } from "./statisticsDocument.js"

type Handler = (input: RouteInput) => Effect.Effect<Reply, never, Projections>

export const listProjections =
  (filter: ProjectionListFilter): Handler =>
  (input) =>
    answer(
      (service) => service.list(filter),
      (list) => jsonReply(statisticsListJson(list, input.baseUrl))
    )

export const projectionStatus: Handler = (input) =>
  answer(
    (service) => service.statistics(nameOf(input)),
    (stats) => jsonReply(statisticsJson(stats, input.baseUrl))
  )

export const projectionStatistics: Handler = (input) =>
  answer(
    (service) => service.statistics(nameOf(input)),
    (stats) => jsonReply(statisticsListJson([stats], input.baseUrl))
  )

/** `scheme://host[:port]` of an absolute URL (read by hand: a Host header need not make a URL `URL` accepts). */
const originOf = (url: string): string => {
  const scheme = url.indexOf("://")
  const slash = url.indexOf("/", scheme < 0 ? 0 : scheme + 3)
  return slash < 0 ? url : url.slice(0, slash)
}

/** `GET /projections`: 302 to the admin UI's projections page on the host the request named. */
export const redirectToProjectionsPage = (input: RouteInput): Effect.Effect<Reply> =>
  Effect.succeed({
    status: 302,
    reason: "Found",
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      Location: `${originOf(input.requestUrl)}/web/projections.htm`
    },
    body: "Moved"
  })

/** `POST /projections/restart`: 200 `"Restarting"` once the restart is under way. */
export const restartSubsystem: Handler = (input) =>
  answer(
    (service) => service.restart(requesterOf(input.principal)),
    () => jsonReply(str("Restarting"))
  )
