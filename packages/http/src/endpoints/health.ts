/**
 * `GET|HEAD /health/live`, answered before authentication and routing: 204 when
 * the node is live, or the status asked for with `?liveCode=NNN`; 503 when it is not (starting, shutting
 * down); 405 for any other method. A follower, a node without a leader or in an election is live, as the
 * reference's is: liveness says the process should not be restarted, not that it takes writes. No body and none of the legacy headers: the reference serves it from
 * ASP.NET's health-check middleware, outside its HTTP entity manager.
 *
 * Liveness is not health: a node that refuses writes after a disk error (a full disk) stays live — a
 * restart would not free space, and it still serves reads — and reports itself degraded in `/stats`,
 * `/info` and `/metrics` instead (`nodeHealth`; docs/decisions.md).
 */
import { Effect } from "effect"
import type { EventStoreStats } from "@vellum/storage"
import type { Reply } from "../Reply.js"
import type { ClusterStatus } from "@vellum/cluster"
import { nodeIsLive, type NodeInfo } from "./NodeInfo.js"

export const HEALTH_LIVE_PATH = "/health/live"

/** `?liveCode=` when it is a valid HTTP status (100–599); otherwise the default 204 applies. */
const liveCode = (query: URLSearchParams): number | undefined => {
  const text = query.get("liveCode")
  if (text === null || !/^\s*\d{3}\s*$/.test(text)) return undefined
  const code = Number(text)
  return code >= 100 && code <= 599 ? code : undefined
}

/** The whole endpoint as a pure function of the request and the node's liveness. */
export const healthLive = (method: string, query: URLSearchParams, live: boolean): Reply => {
  if (method !== "GET" && method !== "HEAD")
    return { status: 405, reason: "Method Not Allowed", headers: {}, bare: true }
  if (!live) return { status: 503, reason: "Service Unavailable", headers: {}, bare: true }
  const status = liveCode(query) ?? 204
  return { status, headers: {}, bare: true }
}

export const HEALTH_READY_PATH = "/health/ready"

/**
 * `GET|HEAD /health/ready` (Vellum's own, beside the reference's `/health/live`): 204 when the node is live
 * and healthy; 503 while it is not live, or while it is degraded (writes refused after a disk error), with
 * the reason in the status line and a `Retry-After`. For probes and load balancers that should send writes
 * elsewhere, or page someone, while `/health/live` keeps a degraded node from being restarted for nothing.
 */
export const healthReady = (method: string, live: boolean, health: NodeHealth): Reply => {
  if (method !== "GET" && method !== "HEAD")
    return { status: 405, reason: "Method Not Allowed", headers: {}, bare: true }
  if (!live) return { status: 503, reason: "Service Unavailable", headers: {}, bare: true }
  if (health.status === "degraded") {
    return { status: 503, reason: `Degraded: ${health.reason}`, headers: { "Retry-After": "5" }, bare: true }
  }
  return { status: 204, headers: {}, bare: true }
}

/** The same, reading liveness from NodeInfo (for a pipeline that has the service). */
export const handleHealthLive = (
  method: string,
  query: URLSearchParams
): Effect.Effect<Reply, never, NodeInfo | ClusterStatus> =>
  Effect.map(nodeIsLive, (live) => healthLive(method, query, live))

/** Whether the node serves everything, or is degraded: writes refused after a disk error, until it recovers. */
export interface NodeHealth {
  readonly status: "healthy" | "degraded"
  /** Why it is degraded (names no file), "" when healthy. */
  readonly reason: string
  /** Clock time it became degraded. */
  readonly sinceMillis: number | undefined
}

export const nodeHealth = (storage: EventStoreStats): NodeHealth => {
  const refused = storage.writesRefused
  return refused === undefined
    ? { status: "healthy", reason: "", sinceMillis: undefined }
    : { status: "degraded", reason: refused.error.message, sinceMillis: refused.sinceMillis }
}
