/**
 * One layer with every service the node routes need except the store: NodeInfo, NodeMetrics, NodeStats,
 * Shutdown and ProcessStats. The node picks the process and metrics layers (live ones from ./live, or the
 * deterministic defaults for tests and the simulator).
 */
import { Layer } from "effect"
import type { EventStore } from "@vellum/storage"
import type { VNodeState } from "@vellum/cluster"
import { NodeInfo, type NodeIdentity } from "./NodeInfo.js"
import { NodeMetrics } from "./NodeMetrics.js"
import { Shutdown } from "./Shutdown.js"
import { NodeStats } from "./stats/NodeStats.js"
import { ProcessStats } from "./stats/ProcessStats.js"

export interface NodeServicesOptions {
  readonly process?: Layer.Layer<ProcessStats>
  readonly metrics?: Layer.Layer<NodeMetrics>
  readonly initialState?: VNodeState
}

export type NodeServices = NodeInfo | NodeMetrics | NodeStats | Shutdown | ProcessStats

export const layer = (
  identity: NodeIdentity,
  options: NodeServicesOptions = {}
): Layer.Layer<NodeServices, never, EventStore> => {
  const base = Layer.mergeAll(
    NodeInfo.layer(identity, options.initialState),
    options.metrics ?? NodeMetrics.layer,
    Shutdown.layer,
    options.process ?? ProcessStats.layerSim
  )
  return Layer.provideMerge(NodeStats.layer, base)
}
