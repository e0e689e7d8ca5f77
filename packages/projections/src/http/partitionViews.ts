/**
 * `GET /projection/{name}/state?partition=` and `/result?partition=`: the text as stored (possibly empty),
 * `application/json`, with the position it was the state at in `Kurrent-Position` and `ES-Position` (compact
 * JSON, no version stamp) when the service has one. No `partition` is the root ("", for a bi-state projection
 * the shared state).
 */
import type { Effect } from "effect"
import { documentReply, type Reply, type RouteInput } from "@vellum/http"
import { encodeCheckpointTag } from "../persisted/checkpointTag.js"
import type { Projections, ProjectionsService, StateView } from "../service/Projections.js"
import { answer } from "./outcomeReplies.js"
import { nameOf, queryParam } from "./requests.js"

type Handler = (input: RouteInput) => Effect.Effect<Reply, never, Projections>

const viewReply = (view: StateView): Reply => {
  if (view.position === undefined) return documentReply(200, "OK", "application/json", view.text)
  const position = encodeCheckpointTag(view.position)
  return documentReply(200, "OK", "application/json", view.text, {
    "Kurrent-Position": position,
    "ES-Position": position
  })
}

const partitionView =
  (read: (service: ProjectionsService) => ProjectionsService["state"]): Handler =>
  (input) =>
    answer((service) => read(service)(nameOf(input), queryParam(input, "partition") ?? ""), viewReply)

export const projectionState = partitionView((service) => service.state)
export const projectionResult = partitionView((service) => service.result)
