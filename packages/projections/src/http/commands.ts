/**
 * Commands on one projection: `POST /projection/{name}/command/{enable|disable|reset|abort}` (no body;
 * `enableRunAs` is accepted and not looked at) and `DELETE /projection/{name}?deleteStateStream=
 * &deleteCheckpointStream=&deleteEmittedStreams=` (each no unless yes/true/1). Both answer the name once the
 * service has carried the command out.
 */
import type { Effect } from "effect"
import type { Reply, RouteInput } from "@vellum/http"
import type { DeleteOptions, ProjectionCommand, Projections } from "../service/Projections.js"
import { answer, nameReply } from "./outcomeReplies.js"
import { flag, nameOf, requesterOf } from "./requests.js"

type Handler = (input: RouteInput) => Effect.Effect<Reply, never, Projections>

export const projectionCommand =
  (command: ProjectionCommand): Handler =>
  (input) =>
    answer((service) => service.command(nameOf(input), command, requesterOf(input.principal)), nameReply)

export const deleteOptionsOf = (input: RouteInput): DeleteOptions => ({
  deleteStateStream: flag(input, "deleteStateStream", false),
  deleteCheckpointStream: flag(input, "deleteCheckpointStream", false),
  deleteEmittedStreams: flag(input, "deleteEmittedStreams", false)
})

export const deleteProjection: Handler = (input) =>
  answer((service) => service.delete(nameOf(input), deleteOptionsOf(input), requesterOf(input.principal)), nameReply)
