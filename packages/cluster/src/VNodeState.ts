/**
 * A node's state in its cluster, by the reference's names and numbers. The number of a state is its index
 * here: it travels in gossip, so states are only ever appended. A single node goes Initializing → Unknown →
 * (elected at once) Leader; a cluster member goes through DiscoverLeader and elections first.
 */
export const VNodeStates = [
  "Initializing",
  "DiscoverLeader",
  "Unknown",
  "PreReplica",
  "CatchingUp",
  "Clone",
  "Follower",
  "PreLeader",
  "Leader",
  "Manager",
  "ShuttingDown",
  "Shutdown",
  "ReadOnlyLeaderless",
  "PreReadOnlyReplica",
  "ReadOnlyReplica",
  "ResigningLeader"
] as const
export type VNodeState = (typeof VNodeStates)[number]

/** The state's number on the wire. */
export const vNodeStateNumber = (state: VNodeState): number => VNodeStates.indexOf(state)

/** The state with that number, or undefined for a number no version of the protocol uses. */
export const vNodeStateOf = (n: number): VNodeState | undefined => VNodeStates[n]

/** States in which the node knows no leader, so it keeps every member it has heard of, dead or not. */
export const isLeaderless = (state: VNodeState): boolean =>
  state === "Initializing" || state === "DiscoverLeader" || state === "Unknown" || state === "ReadOnlyLeaderless"
