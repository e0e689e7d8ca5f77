// @vellum/cluster: a node's place in its cluster — node states, members, the gossip merge rules and the
// gossip service over the Network, the election state machine and its service. None is wired into the node
// yet; replication and client routing are not built yet (docs/architecture.md).
export * from "./VNodeState.js"
export * from "./MemberInfo.js"
export * from "./gossipMerge.js"
export * as Election from "./elections/Election.js"
export * as Gossip from "./gossip/Gossip.js"
export * as ElectionService from "./elections/ElectionService.js"
export * as PromiseFile from "./elections/PromiseFile.js"
