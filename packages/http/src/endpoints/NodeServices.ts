/**
 * One layer with every service the node routes need except the store: NodeInfo, NodeMetrics, NodeStats,
 * Shutdown, ProcessStats and ClusterStatus. The node picks the process, metrics and cluster layers (live ones
 * from ./live, a cluster member's status, or the deterministic single-node defaults for tests and the
 * simulator).
 */
import { Layer } from "effect"
import type { EventStore } from "@vellum/storage"
import { ClusterStatus, type VNodeState } from "@vellum/cluster"
import { NodeInfo, type NodeIdentity } from "./NodeInfo.js"
import { NodeMetrics } from "./NodeMetrics.js"
import { Shutdown } from "./Shutdown.js"
import { NodeStats } from "./stats/NodeStats.js"
import { ProcessStats } from "./stats/ProcessStats.js"

export interface NodeServicesOptions<R = never> {
  readonly process?: Layer.Layer<ProcessStats>
  readonly metrics?: Layer.Layer<NodeMetrics>
  readonly initialState?: VNodeState
  /** The node's place in its cluster; a single node (`singleNodeStatus`) when absent. */
  readonly cluster?: Layer.Layer<ClusterStatus, never, R>
}

export type NodeServices = NodeInfo | NodeMetrics | NodeStats | Shutdown | ProcessStats | ClusterStatus

/** A node alone: its own leader, reached at its advertised HTTP endpoint, with its configured priority. */
export const singleNodeStatus = (identity: NodeIdentity): Layer.Layer<ClusterStatus> =>
  ClusterStatus.layerSingleNode({
    priority: identity.nodePriority,
    self: () => ({
      instanceId: identity.instanceId,
      httpHost: identity.advertiseHost ?? identity.httpEndpoint.host,
      httpPort: identity.advertisePort ?? identity.httpEndpoint.port
    })
  })

export const layer = <R = never>(
  identity: NodeIdentity,
  options: NodeServicesOptions<R> = {}
): Layer.Layer<NodeServices, never, EventStore | R> => {
  const base = Layer.mergeAll(
    NodeInfo.layer(identity, options.initialState),
    options.metrics ?? NodeMetrics.layer,
    Shutdown.layer,
    options.process ?? ProcessStats.layerSim,
    options.cluster ?? singleNodeStatus(identity)
  )
  return Layer.provideMerge(NodeStats.layer, base)
}
