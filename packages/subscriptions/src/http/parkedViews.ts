/**
 * `GET /subscriptions/viewparkedmessages/{s}/{g}/{n|head}/backward/{count}` and `…/{n}/forward/{count}`: a
 * page of the group's parked stream, `$persistentsubscription-{s}::{g}-parked`, read as any stream feed is
 * (its parameters, ACL and long poll), answered in the competing-feed media types.
 */
import { readStreamBackward, readStreamForward, type RouteInput } from "@vellum/http"
import { parkedStream } from "../persisted/streamNames.js"

const onParkedStream = (input: RouteInput): RouteInput => ({
  ...input,
  params: {
    ...input.params,
    stream: parkedStream(input.params["stream"] ?? "", input.params["group"] ?? "")
  }
})

export const viewParkedBackward = (input: RouteInput) => readStreamBackward(onParkedStream(input))
export const viewParkedForward = (input: RouteInput) => readStreamForward(onParkedStream(input))
