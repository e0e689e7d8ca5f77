/**
 * The options of a node's place in its cluster, part of the one option table (options.ts spreads them in):
 * who the members are, the internal (node-to-node) interface, the advertised HTTP endpoint, the cluster
 * secret, and the timings and limits of gossip, elections and replication. Names and defaults are the
 * reference's; older spellings are aliases. How they fit together is checked in clusterConsistency.ts, and
 * derive.ts turns them into the cluster's `ClusterSettings`.
 */
import { flag, MAX_INT32, millis, MiB, option } from "./optionDef.js"
import { endpointList, hostName, integer, ipAddress, text } from "./valueTypes.js"

/** The reference's floor for the election timeout. */
export const MIN_LEADER_ELECTION_TIMEOUT_MS = 1_000

export const clusterOptions = {
  // Cluster
  ClusterSize: option({
    group: "Cluster",
    description:
      "The number of voting nodes in the cluster (read-only replicas not counted). 1: a single node, with no gossip, " +
      "elections or replication.",
    type: integer({ min: 1, max: 99 }),
    default: 1
  }),
  NodePriority: option({
    group: "Cluster",
    description: "The node priority used during leader election (a hint, not a guarantee).",
    type: integer({ min: -MAX_INT32 - 1, max: MAX_INT32 }),
    default: 0
  }),
  GossipSeed: option({
    group: "Cluster",
    description:
      "The internal endpoints (ReplicationIp:ReplicationPort, or the advertised ones) of the cluster's other voting " +
      "nodes: ClusterSize - 1 of them on a voting node, ClusterSize on a read-only replica. Membership is fixed by " +
      "this list.",
    type: endpointList(),
    default: []
  }),
  GossipIntervalMs: millis("Cluster", "The interval, in ms, nodes should try to gossip with each other.", 2_000),
  GossipTimeoutMs: millis("Cluster", "The timeout, in ms, on gossip to another node.", 2_500),
  GossipAllowedDifferenceMs: millis(
    "Cluster",
    "The clock difference, in ms, between this node and a member it gossips with above which a warning is logged " +
      "(the gossip is still used, as in the reference).",
    60_000,
    0
  ),
  LeaderElectionTimeoutMs: millis(
    "Cluster",
    `The election timeout, in ms, at least ${MIN_LEADER_ELECTION_TIMEOUT_MS}: a follower that hears nothing from a leader for between 1 and 2 times this long stands for election.`,
    1_000,
    MIN_LEADER_ELECTION_TIMEOUT_MS
  ),
  DeadMemberRemovalPeriodSec: option({
    group: "Cluster",
    description: "The number of seconds a dead node remains in the gossip before being pruned.",
    type: integer({ min: 0, max: MAX_INT32, unit: "s" }),
    default: 1_800
  }),
  ReadOnlyReplica: flag(
    "Cluster",
    "Make this node a read-only replica: it replicates the leader's log and serves reads, but never votes, never " +
      "leads and does not count in ClusterSize."
  ),
  ClusterSecret: option({
    group: "Cluster",
    description:
      "Vellum: the secret every member of the cluster shares (at least 16 characters); peers prove they know it " +
      "before any gossip, election or replication message is taken, and it never travels. Required when ClusterSize " +
      "> 1. Environment or config file only (a command line is visible to every user of the machine).",
    type: text({ placeholder: "<secret>" }),
    default: "",
    sensitive: true,
    onlyFrom: ["env", "yaml"]
  }),

  // Database
  CommitTimeoutMs: millis(
    "Database",
    "The time, in ms, an append may wait for a quorum of the cluster to hold it; past it the client is answered " +
      "CommitTimeout (the append may still commit later).",
    2_000
  ),
  PrepareTimeoutMs: millis(
    "Database",
    "Prepare timeout, in ms. Vellum times an append with CommitTimeoutMs alone.",
    2_000
  ),
  MaxTruncation: option({
    group: "Database",
    description:
      "The most bytes a follower may cut from the end of its log to follow a new leader; a larger cut stops the node " +
      "for an operator to decide. -1: no limit.",
    type: integer({ min: -1, max: Number.MAX_SAFE_INTEGER }),
    default: 256 * MiB
  }),

  // Interface
  ReplicationIp: option({
    group: "Interface",
    description:
      "The IP address the internal (node-to-node) interface listens on: gossip, elections and replication. Keep it " +
      "on a private network.",
    type: ipAddress(),
    default: "127.0.0.1",
    aliases: ["IntIp"]
  }),
  ReplicationPort: option({
    group: "Interface",
    description: "The TCP port of the internal (node-to-node) interface.",
    type: integer({ min: 1, max: 65_535 }),
    default: 1112,
    aliases: ["IntTcpPort"]
  }),
  ReplicationHostAdvertiseAs: option({
    group: "Interface",
    description:
      "The host other nodes reach this node's internal interface at, when not ReplicationIp (which may be 0.0.0.0).",
    type: hostName(),
    default: "",
    aliases: ["IntHostAdvertiseAs"]
  }),
  ReplicationTcpPortAdvertiseAs: option({
    group: "Interface",
    description: "The internal port other nodes reach this node at, when not ReplicationPort. 0: ReplicationPort.",
    type: integer({ min: 0, max: 65_535 }),
    default: 0,
    aliases: ["IntTcpPortAdvertiseAs"]
  }),
  NodeHostAdvertiseAs: option({
    group: "Interface",
    description:
      "The host clients are told to use for this node, when not NodeIp (which may be 0.0.0.0): in absolute links, " +
      "in gossip, and in the other nodes' redirects when it leads.",
    type: hostName(),
    default: "",
    aliases: ["ExtHostAdvertiseAs"]
  }),
  NodePortAdvertiseAs: option({
    group: "Interface",
    description: "The HTTP port clients are told to use for this node, when not NodePort. 0: NodePort.",
    type: integer({ min: 0, max: 65_535 }),
    default: 0,
    aliases: ["HttpPortAdvertiseAs"]
  }),
  ReplicationHeartbeatInterval: option({
    group: "Interface",
    description:
      "How often, in ms, a leader sends a follower its replication checkpoint when it has nothing else to send " +
      "(the replication heartbeat).",
    type: integer({ min: 1, max: MAX_INT32, unit: "ms" }),
    default: 700,
    aliases: ["IntTcpHeartbeatInterval"]
  }),
  ReplicationHeartbeatTimeout: option({
    group: "Interface",
    description:
      "How long, in ms, a follower waits for its leader past a heartbeat interval before it drops the replication " +
      "connection and subscribes again.",
    type: integer({ min: 1, max: MAX_INT32, unit: "ms" }),
    default: 700,
    aliases: ["IntTcpHeartbeatTimeout"]
  })
}
