// @vellum/cluster: a node's place in its cluster — node states, members and gossip. Elections,
// replication and client routing are not built yet (docs/architecture.md).
export * from "./VNodeState.js"
export * from "./MemberInfo.js"
export * from "./gossipMerge.js"
