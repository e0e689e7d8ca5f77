/**
 * The node's cluster admin endpoints (`$ops`/`$admins`), node-local like `/admin/shutdown`: never redirected
 * to the leader, they act on the node that gets them.
 *
 * - `POST /admin/node/resign`: a leader drains, steps down and lets the others elect a new one; any other
 *   node (a single node too: it has no one to hand over to) carries on as it is. 200 `OK` either way.
 * - `POST /admin/node/priority/{n}`: this node's priority in elections from now on (gossip shows it). `n` is
 *   read as .NET's `int.TryParse` reads it; anything else is a 400 `nodePriority must be an integer.`
 *
 * Both answer as `/admin/shutdown` does: a bare 200 `OK`, no body.
 */
import { Effect } from "effect"
import { ClusterStatus } from "@vellum/cluster"
import { tryParseInt32 } from "../dotnetParse.js"
import { reply } from "../Reply.js"
import { badRequest } from "../replies.js"
import type { RouteDef } from "../Route.js"
import { AdminCodecs } from "./admin.js"

export const NODE_PRIORITY_NOT_INTEGER = "nodePriority must be an integer."

const ok = reply(200, { reason: "OK" })

export const resignRoute: RouteDef<ClusterStatus> = {
  method: "POST",
  path: "/admin/node/resign",
  access: "ops",
  responseCodecs: AdminCodecs,
  handle: () => Effect.flatMap(ClusterStatus, (cluster) => Effect.as(cluster.resign, ok))
}

export const priorityRoute: RouteDef<ClusterStatus> = {
  method: "POST",
  path: "/admin/node/priority/{nodePriority}",
  access: "ops",
  responseCodecs: AdminCodecs,
  handle: (input) => {
    const priority = tryParseInt32(input.params["nodePriority"] ?? "")
    if (priority === undefined) return Effect.succeed(badRequest(NODE_PRIORITY_NOT_INTEGER))
    return Effect.flatMap(ClusterStatus, (cluster) => Effect.as(cluster.setPriority(priority), ok))
  }
}

export const clusterAdminRoutes: ReadonlyArray<RouteDef<ClusterStatus>> = [resignRoute, priorityRoute]
