/**
 * ClusterSettings: how one node takes part in its cluster, as the configuration derives it. A node with
 * `clusterSize` 1 and no seeds runs alone (no gossip, elections or replication: it leads from its start).
 *
 * Membership is fixed by configuration: a voting member's `gossipSeeds` are the internal addresses of every
 * other voting member (so `clusterSize − 1` of them), and a read-only replica's are the voters'. Every voter
 * thus knows the same set of voters, which is what Raft's quorums need (docs/decisions.md).
 */
import type { PeerAddress } from "@vellum/platform"

export interface Endpoint {
  readonly host: string
  readonly port: number
}

export interface ClusterSettings {
  /** Voting members (read-only replicas not counted). */
  readonly clusterSize: number
  /** The other voting members' internal addresses, "host:port". */
  readonly gossipSeeds: ReadonlyArray<PeerAddress>
  /** This node's internal (node-to-node) endpoint: where peers reach it. */
  readonly internal: Endpoint
  /** Where the internal interface listens, when not at `internal` (e.g. 0.0.0.0 behind an advertised address). */
  readonly internalListen?: Endpoint
  /** The HTTP endpoint this node advertises to clients (redirects to the leader are built from the leader's). */
  readonly httpAdvertised: Endpoint
  readonly nodePriority: number
  /** Replicates, never votes, never leads. */
  readonly readOnlyReplica: boolean
  /** Peers prove they belong to the cluster with it (each side proves it knows it; it never travels). */
  readonly clusterSecret: string
  readonly gossipIntervalMs: number
  readonly gossipTimeoutMs: number
  /** A member's clock further than this from ours is logged, its gossip still used (the reference's 60000 if absent). */
  readonly gossipAllowedDifferenceMs?: number
  readonly deadMemberRemovalPeriodSec: number
  /** The election timeout's base (a follower that hears no leader for between 1× and 2× of it stands). */
  readonly leaderElectionTimeoutMs: number
  /** A write not on a quorum within this time is answered CommitTimeout (its outcome is unknown). */
  readonly commitTimeoutMs: number
  /** The leader's heartbeats, and how long a replication connection may stay silent. */
  readonly heartbeatIntervalMs: number
  readonly heartbeatTimeoutMs: number
  /** The most a follower cuts from its log's uncommitted tail to follow a leader; −1: no limit. */
  readonly maxTruncationBytes: number
}

/** An endpoint as a peer address, "host:port" with an IPv6 host in brackets: the one spelling of seeds. */
export const peerAddressOf = (endpoint: Endpoint): PeerAddress =>
  endpoint.host.includes(":") ? `[${endpoint.host}]:${endpoint.port}` : `${endpoint.host}:${endpoint.port}`

export const quorumOf = (clusterSize: number): number => Math.floor(clusterSize / 2) + 1

/** A node runs alone: no peers, and a cluster of one. */
export const isSingleNode = (settings: Pick<ClusterSettings, "clusterSize" | "readOnlyReplica">): boolean =>
  settings.clusterSize === 1 && !settings.readOnlyReplica
