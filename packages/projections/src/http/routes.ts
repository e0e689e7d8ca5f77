/**
 * Every projection route as data for the HTTP pipeline:
 *
 *   GET    /projections                                          authenticated  302 to /web/projections.htm
 *   POST   /projections/restart                                  $ops/$admins   200 "Restarting"
 *   GET    /projections/{any|all-non-transient|transient|onetime|continuous}     {"projections":[…]}
 *   POST   /projections/{transient|onetime|continuous}?name=&type=&enabled=&emit=&checkpoints=&trackemittedstreams=
 *                                                                authenticated  201 + Location, {"name"}
 *   POST   /projections/read-events                              authenticated  the debugger's read (JSON body)
 *   GET    /projection/{name}                                    authenticated  statistics
 *   GET    /projection/{name}/statistics                         authenticated  {"projections":[statistics]}
 *   DELETE /projection/{name}?deleteStateStream=&deleteCheckpointStream=&deleteEmittedStreams=   $ops/$admins
 *   GET    /projection/{name}/state?partition=, …/result?partition=               the text, position headers
 *   GET    /projection/{name}/query[?config=yes]                 authenticated  the script, or its document
 *   PUT    /projection/{name}/query?type=&emit=                  authenticated  new script (the body)
 *   GET    /projection/{name}/config, PUT (JSON body)            $ops/$admins
 *   POST   /projection/{name}/command/{enable|disable|reset|abort}?enableRunAs=   authenticated
 *
 * Who may manage which projection beyond being authenticated (one-time and continuous ones: `$ops` or
 * `$admins`) is the service's call. Projections run on the leader: a follower passes every route to it. Routes
 * whose body is the script take any content type; replies are JSON but for the redirect and the script.
 */
import type { RouteDef } from "@vellum/http"
import type { Projections } from "../service/Projections.js"
import { projectionCommand, deleteProjection } from "./commands.js"
import { getConfig, putConfig } from "./config.js"
import { createProjection } from "./create.js"
import {
  listProjections,
  projectionStatistics,
  projectionStatus,
  redirectToProjectionsPage,
  restartSubsystem
} from "./listing.js"
import { projectionResult, projectionState } from "./partitionViews.js"
import { getQuery, putQuery } from "./query.js"
import { readEvents } from "./readEvents.js"

export type ProjectionRouteRequirements = Projections

type ProjectionRoute = RouteDef<ProjectionRouteRequirements>

const Json: ReadonlyArray<string> = ["application/json"]

type Spec = Pick<ProjectionRoute, "method" | "path" | "access" | "handle"> & {
  /** The body is JSON (415 otherwise); without it any content type, or none, is taken. */
  readonly jsonBody?: boolean
  /** The reply's type is the handler's, whatever the request accepts (the redirect, the script). */
  readonly ownType?: boolean
}

const route = (spec: Spec): ProjectionRoute => ({
  method: spec.method,
  path: spec.path,
  access: spec.access,
  forwardsToLeader: true,
  ...(spec.jsonBody === true ? { requestCodecs: Json } : {}),
  responseCodecs: Json,
  ...(spec.ownType === true ? { ignoresAccept: true } : {}),
  handle: spec.handle
})

const one = "/projection/{name}"

export const projectionRoutes: ReadonlyArray<ProjectionRoute> = [
  route({
    method: "GET",
    path: "/projections",
    access: "authenticated",
    handle: redirectToProjectionsPage,
    ownType: true
  }),
  route({ method: "POST", path: "/projections/restart", access: "ops", handle: restartSubsystem }),
  route({ method: "GET", path: "/projections/any", access: "authenticated", handle: listProjections("Any") }),
  route({
    method: "GET",
    path: "/projections/all-non-transient",
    access: "authenticated",
    handle: listProjections("AllNonTransient")
  }),
  route({
    method: "GET",
    path: "/projections/transient",
    access: "authenticated",
    handle: listProjections("Transient")
  }),
  route({ method: "GET", path: "/projections/onetime", access: "authenticated", handle: listProjections("OneTime") }),
  route({
    method: "GET",
    path: "/projections/continuous",
    access: "authenticated",
    handle: listProjections("Continuous")
  }),
  route({
    method: "POST",
    path: "/projections/transient?name={name}&type={type}&enabled={enabled}",
    access: "authenticated",
    handle: createProjection("Transient")
  }),
  route({
    method: "POST",
    path: "/projections/onetime?name={name}&type={type}&enabled={enabled}&checkpoints={checkpoints}&emit={emit}&trackemittedstreams={trackemittedstreams}",
    access: "authenticated",
    handle: createProjection("OneTime")
  }),
  route({
    method: "POST",
    path: "/projections/continuous?name={name}&type={type}&enabled={enabled}&emit={emit}&trackemittedstreams={trackemittedstreams}",
    access: "authenticated",
    handle: createProjection("Continuous")
  }),
  route({
    method: "POST",
    path: "/projections/read-events",
    access: "authenticated",
    handle: readEvents,
    jsonBody: true
  }),
  route({ method: "GET", path: one, access: "authenticated", handle: projectionStatus }),
  route({ method: "GET", path: `${one}/statistics`, access: "authenticated", handle: projectionStatistics }),
  route({
    method: "DELETE",
    path: `${one}?deleteStateStream={deleteStateStream}&deleteCheckpointStream={deleteCheckpointStream}&deleteEmittedStreams={deleteEmittedStreams}`,
    access: "ops",
    handle: deleteProjection
  }),
  route({
    method: "GET",
    path: `${one}/state?partition={partition}`,
    access: "authenticated",
    handle: projectionState
  }),
  route({
    method: "GET",
    path: `${one}/result?partition={partition}`,
    access: "authenticated",
    handle: projectionResult
  }),
  route({
    method: "GET",
    path: `${one}/query?config={config}`,
    access: "authenticated",
    handle: getQuery,
    ownType: true
  }),
  route({ method: "PUT", path: `${one}/query?type={type}&emit={emit}`, access: "authenticated", handle: putQuery }),
  route({ method: "GET", path: `${one}/config`, access: "ops", handle: getConfig }),
  route({ method: "PUT", path: `${one}/config`, access: "ops", handle: putConfig, jsonBody: true }),
  ...(["enable", "disable", "reset", "abort"] as const).map((command) =>
    route({
      method: "POST",
      path: `${one}/command/${command}?enableRunAs={enableRunAs}`,
      access: "authenticated",
      handle: projectionCommand(command)
    })
  )
]
