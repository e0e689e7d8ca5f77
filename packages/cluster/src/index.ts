// @vellum/cluster: a node's place in its cluster — node states, members and gossip, and the election
// state machine. The services that run them, replication and client routing are not built yet
// (docs/architecture.md).
export * from "./VNodeState.js"
export * from "./MemberInfo.js"
export * from "./gossipMerge.js"
export * as Election from "./elections/Election.js"
