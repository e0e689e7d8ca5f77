/**
 * Every node endpoint as RouteDefs for the generic pipeline: `/ping`, `/info`, `/gossip` (GET and POST),
 * `/stats…`, `/metrics`, `/admin/shutdown`, `/admin/node/resign`, `/admin/node/priority/{n}`. `/health/live` is not a route: the pipeline answers it before anything
 * else with `healthLive` (health.ts).
 */
import type { EventStore } from "@vellum/storage"
import type { ClusterStatus } from "@vellum/cluster"
import type { RouteDef } from "../Route.js"
import { shutdownRoute } from "./admin.js"
import { clusterAdminRoutes } from "./clusterAdmin.js"
import { gossipPostRoute, gossipRoute } from "./gossip.js"
import { infoRoute } from "./info.js"
import { metricsRoute } from "./metricsRoute.js"
import type { NodeInfo } from "./NodeInfo.js"
import type { NodeMetrics } from "./NodeMetrics.js"
import { pingRoute } from "./ping.js"
import type { Shutdown } from "./Shutdown.js"
import type { NodeStats } from "./stats/NodeStats.js"
import type { ProcessStats } from "./stats/ProcessStats.js"
import { statsRoutes } from "./stats/statsRoutes.js"

/** The services the node routes need (see the layers in index.ts). */
export type NodeRouteServices =
  NodeInfo | NodeStats | NodeMetrics | EventStore | Shutdown | ProcessStats | ClusterStatus

/** Which node endpoints a node serves (the reference registers each controller only when its switch allows). */
export interface NodeRouteSwitches {
  /** `/stats…` and `/metrics` (off with `DisableStatsOnHttp`: both controllers go, so both answer 404). */
  readonly stats: boolean
  /** `/gossip`, both methods (off with `DisableGossipOnHttp`). */
  readonly gossip: boolean
  /**
   * `OverrideAnonymousEndpointAccessForGossip`: `GET /gossip` stays anonymous; otherwise it is an `authenticated`
   * route. `POST /gossip` is for operators either way.
   */
  readonly anonymousGossip: boolean
  /** `/admin/shutdown`, `/admin/node/…`: the reference's admin controller (off with `DisableAdminUi`). */
  readonly admin: boolean
}

export const allNodeRoutes: NodeRouteSwitches = { stats: true, gossip: true, anonymousGossip: true, admin: true }

export const selectNodeRoutes = (switches: NodeRouteSwitches): ReadonlyArray<RouteDef<NodeRouteServices>> => [
  pingRoute,
  infoRoute,
  ...(switches.gossip
    ? [switches.anonymousGossip ? gossipRoute : { ...gossipRoute, access: "authenticated" as const }, gossipPostRoute]
    : []),
  ...(switches.stats ? [...statsRoutes, metricsRoute] : []),
  ...(switches.admin ? [shutdownRoute, ...clusterAdminRoutes] : [])
]

export const nodeRoutes: ReadonlyArray<RouteDef<NodeRouteServices>> = selectNodeRoutes(allNodeRoutes)
