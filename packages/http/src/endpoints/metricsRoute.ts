/**
 * `GET /metrics`: the node's Prometheus exposition. Same permission as `/stats` (the reference registers it
 * under the statistics-read operation). Only the Prometheus text format is offered (prom-client renders one
 * format per registry); a scraper's usual Accept (`…openmetrics-text…, text/plain;version=0.0.4;q=0.5, …`)
 * negotiates `text/plain`. The node's state (its place in the cluster) is the `Node` row of the statuses gauge.
 */
import { Clock, Effect } from "effect"
import type { ClusterStatus } from "@vellum/cluster"
import { EventStore } from "@vellum/storage"
import { reply } from "../Reply.js"
import type { RouteDef } from "../Route.js"
import { nodeState, type NodeInfo } from "./NodeInfo.js"
import { NodeMetrics } from "./NodeMetrics.js"
import { ProcessStats } from "./stats/ProcessStats.js"

export const metricsRoute: RouteDef<NodeMetrics | EventStore | NodeInfo | ProcessStats | ClusterStatus> = {
  method: "GET",
  path: "/metrics",
  access: "authenticated",
  responseCodecs: ["text/plain"],
  handle: () =>
    Effect.gen(function* () {
      const metrics = yield* NodeMetrics
      const store = yield* EventStore
      const process = yield* Effect.flatMap(ProcessStats, (p) => p.snapshot)
      const text = yield* metrics.render(store.stats(), {
        nowMillis: yield* Clock.currentTimeMillis,
        process,
        openConnections: metrics.traffic().openConnections,
        nodeState: yield* nodeState
      })
      return reply(200, { reason: "OK", headers: { "Content-Type": metrics.contentType }, body: text })
    })
}
