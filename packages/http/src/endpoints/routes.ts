/**
 * Every node endpoint as RouteDefs for the generic pipeline: `/ping`, `/info`, `/gossip`, `/stats…`,
 * `/metrics`, `/admin/shutdown`. `/health/live` is not a route: the pipeline answers it before anything
 * else with `healthLive` (health.ts).
 */
import type { EventStore } from "@vellum/storage"
import type { RouteDef } from "../Route.js"
import { shutdownRoute } from "./admin.js"
import { gossipRoute } from "./gossip.js"
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
export type NodeRouteServices = NodeInfo | NodeStats | NodeMetrics | EventStore | Shutdown | ProcessStats

/** Which node endpoints a node serves (the reference registers each controller only when its switch allows). */
export interface NodeRouteSwitches {
  /** `/stats…` and `/metrics` (off with `DisableStatsOnHttp`: both controllers go, so both answer 404). */
  readonly stats: boolean
  /** `/gossip` (off with `DisableGossipOnHttp`). */
  readonly gossip: boolean
  /** `OverrideAnonymousEndpointAccessForGossip`: gossip stays anonymous; otherwise it is an `authenticated` route. */
  readonly anonymousGossip: boolean
  /** `/admin/shutdown`, part of the reference's admin controller (off with `DisableAdminUi`). */
  readonly admin: boolean
}

export const allNodeRoutes: NodeRouteSwitches = { stats: true, gossip: true, anonymousGossip: true, admin: true }

export const selectNodeRoutes = (switches: NodeRouteSwitches): ReadonlyArray<RouteDef<NodeRouteServices>> => [
  pingRoute,
  infoRoute,
  ...(switches.gossip
    ? [switches.anonymousGossip ? gossipRoute : { ...gossipRoute, access: "authenticated" as const }]
    : []),
  ...(switches.stats ? [...statsRoutes, metricsRoute] : []),
  ...(switches.admin ? [shutdownRoute] : [])
]

export const nodeRoutes: ReadonlyArray<RouteDef<NodeRouteServices>> = selectNodeRoutes(allNodeRoutes)
