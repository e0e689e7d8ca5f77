/**
 * What the state machine needs of gossip: the members with their endpoints, roles and log positions, and
 * which of them is this node. The driver builds it from the node's gossip on every tick.
 */
import { sameNode, type NodeId } from "./NodeId.js"

export interface GossipMember {
  readonly nodeId: NodeId
  /** The all-zero GUID when gossip has not heard from the member itself yet. */
  readonly instanceId: string
  readonly isLeader: boolean
  readonly isReadOnlyReplica: boolean
  readonly writerCheckpoint: number
}

export interface ClusterView {
  readonly members: ReadonlyArray<GossipMember>
  /** This node, as gossip names it. */
  readonly self: NodeId
  /** The voting members the cluster is configured with. */
  readonly clusterSize: number
}

const EmptyGuid = "00000000-0000-0000-0000-000000000000"

/**
 * Healthy: gossip lists exactly the configured number of voters that have introduced themselves. Whether a
 * member is alive is not looked at, as in the reference: a dead member still listed keeps the cluster
 * healthy, and the leader keeps retrying it.
 */
export const isHealthy = (view: ClusterView): boolean =>
  view.members.filter((m) => m.instanceId !== "" && m.instanceId !== EmptyGuid && !m.isReadOnlyReplica).length ===
  view.clusterSize

export const memberOf = (view: ClusterView, node: NodeId): GossipMember | undefined =>
  view.members.find((m) => sameNode(m.nodeId, node))

export const selfIsLeader = (view: ClusterView): boolean => memberOf(view, view.self)?.isLeader === true
