// @vellum/cluster: a node's place in its cluster — node states, members, the gossip merge rules and the
// gossip service over the Network, and the election state machine. The election service, replication and
// client routing are not built yet (docs/architecture.md).
export * from "./VNodeState.js"
export * from "./MemberInfo.js"
export * from "./gossipMerge.js"
export * as Election from "./elections/Election.js"
export * as Gossip from "./gossip/Gossip.js"
