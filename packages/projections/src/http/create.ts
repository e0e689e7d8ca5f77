/**
 * `POST /projections/{transient|onetime|continuous}?name=&type=&enabled=&emit=&checkpoints=&trackemittedstreams=`:
 * the body (any content type) is the source. `type` defaults to `JS`, `enabled` to yes; `emit` (no) and
 * `trackemittedstreams` (no; never without emit) are read for one-time and continuous projections only,
 * `checkpoints` (no) for one-time ones only (continuous projections always checkpoint, transient ones never).
 * 201 with the projection's URL in `Location` and its name.
 */
import { Effect } from "effect"
import type { Reply, RouteInput } from "@vellum/http"
import type { ProjectionMode } from "../persisted/definitionRecord.js"
import type { CreateProjection, Projections } from "../service/Projections.js"
import { answer, nameReply } from "./outcomeReplies.js"
import { bodyText, flag, queryParam, requesterOf } from "./requests.js"
import { absoluteUrl, projectionPath } from "./urls.js"

export const createRequestOf = (input: RouteInput, mode: ProjectionMode): CreateProjection => {
  const emitEnabled = mode !== "Transient" && flag(input, "emit", false)
  return {
    mode,
    name: queryParam(input, "name") ?? "",
    query: bodyText(input),
    handlerType: queryParam(input, "type") ?? "JS",
    enabled: flag(input, "enabled", true),
    emitEnabled,
    checkpointsEnabled: mode === "Continuous" || (mode === "OneTime" && flag(input, "checkpoints", false)),
    trackEmittedStreams: emitEnabled && flag(input, "trackemittedstreams", false)
  }
}

export const createProjection =
  (mode: ProjectionMode) =>
  (input: RouteInput): Effect.Effect<Reply, never, Projections> =>
    answer(
      (service) => service.create(createRequestOf(input, mode), requesterOf(input.principal)),
      (name) => nameReply(name, { Location: absoluteUrl(input.baseUrl, projectionPath(name)) }, 201)
    )
