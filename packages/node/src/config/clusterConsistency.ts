/**
 * The rules between the cluster's options, checked once each value is valid on its own (consistency.ts
 * runs them with the others). A node whose cluster options cannot work together does not start, and says
 * which option to change and why; a single node with no cluster options set passes every rule.
 */
import { peerAddressOf } from "@vellum/cluster"
import { type ConfigProblem, problem } from "./ConfigError.js"
import { httpAdvertisedOf, internalEndpointOf, isUnspecifiedAddress, normalisePeerAddress } from "./clusterEndpoints.js"
import type { ConfigSources } from "./LoadedConfig.js"
import type { Config, OptionName } from "./options.js"

/** The shortest cluster secret accepted: a shorter one could be guessed offline from a recorded handshake. */
export const MIN_CLUSTER_SECRET_LENGTH = 16

/** Whether the node takes part in a cluster (and so runs gossip, elections or replication). */
export const isClustered = (config: Pick<Config, "ClusterSize" | "ReadOnlyReplica">): boolean =>
  config.ClusterSize > 1 || config.ReadOnlyReplica

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`

export const checkClusterConsistency = (
  config: Config,
  sources: ConfigSources
): { readonly problems: ReadonlyArray<ConfigProblem>; readonly warnings: ReadonlyArray<string> } => {
  const problems: Array<ConfigProblem> = []
  const warnings: Array<string> = []
  const report = (option: OptionName, reason: string) => problems.push(problem(option, sources[option], reason))

  if (!isClustered(config)) {
    if (config.GossipSeed.length > 0) {
      report(
        "GossipSeed",
        "a single node (ClusterSize 1) has no peers to gossip with: leave GossipSeed empty, or set ClusterSize to the " +
          "number of voting nodes"
      )
    }
    if (config.ClusterSecret !== "") warnings.push("ClusterSecret has no effect on a single node (ClusterSize 1)")
    return { problems, warnings }
  }

  if (config.ReadOnlyReplica && config.ClusterSize === 1) {
    report(
      "ReadOnlyReplica",
      "a read-only replica follows the leader of a cluster, and ClusterSize 1 is a single node, which runs without " +
        "gossip or replication and so serves no replica: set ClusterSize to the number of voting nodes it follows"
    )
  }
  checkSeeds(config, report)

  if (config.ClusterSecret === "") {
    report(
      "ClusterSecret",
      "a cluster needs a secret its members share, so that only they can gossip, vote and replicate with this node: " +
        "set VELLUM_CLUSTER_SECRET (or ClusterSecret in the config file) to the same value on every node"
    )
  } else if (config.ClusterSecret.length < MIN_CLUSTER_SECRET_LENGTH) {
    report("ClusterSecret", `must be at least ${MIN_CLUSTER_SECRET_LENGTH} characters long`)
  }

  if (config.MemDb && !config.ReadOnlyReplica) {
    report(
      "MemDb",
      "a voting node must keep its log and its votes across restarts: in memory, a restarted node would forget " +
        "appends the cluster acknowledged on its word, and could vote twice in one term (a read-only replica may use MemDb)"
    )
  }

  const internal = internalEndpointOf(config)
  if (isUnspecifiedAddress(internal.host)) {
    report(
      "ReplicationIp",
      `peers cannot be sent to ${internal.host}: set ReplicationHostAdvertiseAs to the address they reach this node at`
    )
  }
  if (isUnspecifiedAddress(httpAdvertisedOf(config).host)) {
    report(
      "NodeIp",
      `clients redirected to this node when it leads cannot be sent to ${config.NodeIp}: set NodeHostAdvertiseAs ` +
        "to the address they reach it at"
    )
  }
  const sharedAddress =
    config.ReplicationIp === config.NodeIp ||
    isUnspecifiedAddress(config.ReplicationIp) ||
    isUnspecifiedAddress(config.NodeIp)
  if (config.ReplicationPort === config.NodePort && sharedAddress) {
    report(
      "ReplicationPort",
      `the internal interface cannot listen on the HTTP server's port (${config.NodePort}, NodePort) on the same ` +
        "address: give it a port of its own (the default is 1112)"
    )
  }

  if (!config.ReadOnlyReplica && config.ClusterSize % 2 === 0) {
    warnings.push(
      `a cluster of ${config.ClusterSize} voting nodes survives no more failed nodes than one of ` +
        `${config.ClusterSize - 1} (a quorum is ${config.ClusterSize / 2 + 1}): an odd ClusterSize is better`
    )
  }
  return { problems, warnings }
}

/**
 * Membership is fixed by configuration: a voting node lists every other voting node, a read-only replica
 * every voting node, so all voters count their majorities over the same set.
 */
const checkSeeds = (config: Config, report: (option: OptionName, reason: string) => void): void => {
  const seeds = config.GossipSeed.map(normalisePeerAddress)
  const voters = config.ClusterSize
  const expected = config.ReadOnlyReplica ? voters : voters - 1
  const whom = config.ReadOnlyReplica
    ? `a read-only replica lists the internal endpoints of all ${plural(voters, "voting node")}`
    : `a voting node of a cluster of ${voters} lists the internal endpoints of the other ${expected}`
  if (seeds.length === 0) {
    report(
      config.ReadOnlyReplica ? "GossipSeed" : "ClusterSize",
      `a cluster of ${plural(voters, "voting node")} needs GossipSeed: ${whom} (their ` +
        "ReplicationIp:ReplicationPort), since members are fixed by configuration; with none, this node " +
        "would find no one and never reach a quorum"
    )
    return
  }
  const self = peerAddressOf(internalEndpointOf(config))
  const seen = new Set<string>()
  let unusable = false
  for (const seed of seeds) {
    if (seed === self) {
      report("GossipSeed", `lists this node's own internal endpoint ${seed}: list only the other members`)
      unusable = true
    } else if (seen.has(seed)) {
      report("GossipSeed", `lists ${seed} more than once: list each member once`)
      unusable = true
    }
    seen.add(seed)
  }
  if (!unusable && seeds.length !== expected) {
    report(
      "GossipSeed",
      `lists ${plural(seeds.length, "endpoint")}, but ${whom}: members are fixed ` +
        "by configuration, and every voting node must know the same voters, or two of them could each count a " +
        "different majority and both lead"
    )
  }
}
