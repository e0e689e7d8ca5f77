// @vellum/cluster: a node's place in its cluster — node states, members, the gossip merge rules and the
// gossip service over the Network, the election state machine and its service, and replication's pure rules
// (the replication checkpoint, the subscription position). None is wired into the node yet; the
// replication stream and client routing are not built yet (docs/architecture.md).
export * from "./VNodeState.js"
export * from "./MemberInfo.js"
export * from "./gossipMerge.js"
export * as Election from "./elections/Election.js"
export * as Gossip from "./gossip/Gossip.js"
export * as ElectionService from "./elections/ElectionService.js"
export * as PromiseFile from "./elections/PromiseFile.js"
export * as ReplicationTracker from "./replication/ReplicationTracker.js"
export * from "./replication/subscriptionPosition.js"
export * from "./ClusterStatus.js"
export * from "./ClusterSettings.js"
export * as ClusterNode from "./ClusterNode.js"
export { Protocol } from "./network/ProtocolMux.js"
