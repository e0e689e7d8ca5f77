/**
 * The swarm's choices for one multi-node seed: how many voters (1, 3 or 5) and whether a read-only replica
 * joins, each node's clock skew, the cluster's timings (options a user could set), the storage settings,
 * the network's faults, the clients, and how long the safety phase runs and how often the fault driver acts.
 * Seeds stay short: the CI batch runs hundreds of them.
 */
import type { Prng, SimNetworkFaults } from "@vellum/platform"
import type { ClusterTimings } from "./clusterNodes.js"

export type VoterCount = 1 | 3 | 5

export interface ClusterSimOptions {
  readonly voters: VoterCount
  readonly readOnlyReplica: boolean
  /** Each member's wall-clock skew, ms (bounded: ±200). */
  readonly clockSkewMs: ReadonlyArray<number>
  readonly timings: ClusterTimings
  readonly chunkSize: number
  readonly memtableMaxEntries: number
  readonly network: SimNetworkFaults
  readonly clients: number
  readonly streamsPerClient: number
  /** Simulated time the clients and the fault driver run, ms. */
  readonly safetyMs: number
  /** The fault driver acts every so often (drawn between these, ms). */
  readonly faultGapMs: readonly [number, number]
  /** The liveness phase must converge within this, ms of simulated time. */
  readonly livenessMs: number
  /** Issue 19's workload and faults (auto-scavenge seeds); undefined in the plain cluster seeds. */
  readonly autoScavenge: AutoScavengeSimOptions | undefined
}

/** What an auto-scavenge seed adds to the cluster seed. */
export interface AutoScavengeSimOptions {
  /** The fault driver may replace a member by an empty node at another HTTP endpoint (the operator's way). */
  readonly replaceNodes: boolean
  /** The CRON schedule the operator configures (every minute or every other); none: nothing is configured. */
  readonly schedule: string | undefined
  /**
   * The world's clock starts this long before a minute boundary that both schedules hit (00:02:00 UTC), so
   * the first cycle comes due a few simulated seconds in rather than after a minute of idling.
   */
  readonly firstDueMs: number
  /** The operator acts every so often (drawn between these, ms): pause, resume, ask for the status. */
  readonly operatorGapMs: readonly [number, number]
  /** How likely an operator's step pauses (it resumes a pause it made with the same chance). */
  readonly pauseChance: number
  /** The fault driver aims faults at auto-scavenge's moments (a scavenging follower, the leader mid-cycle). */
  readonly targetedFaults: boolean
}

/** The share of the swarm's multi-voter seeds that run the auto-scavenge workload. */
export const AutoScavengeShare = 0.25

/**
 * The auto-scavenge options, from a fork of their own (so the cluster seeds' other choices stay as they
 * were): on for a share of the multi-voter seeds, or always when `forced`.
 */
export const chooseAutoScavengeOptions = (
  prng: Prng,
  voters: VoterCount,
  forced: boolean | undefined
): AutoScavengeSimOptions | undefined => {
  const on = prng.chance(AutoScavengeShare)
  if (forced === false || (forced === undefined && (!on || voters === 1))) return undefined
  return {
    replaceNodes: voters > 1 && prng.chance(0.6),
    schedule: prng.pick(["* * * * *", "*/2 * * * *"]),
    firstDueMs: prng.int(3_000, 8_000),
    operatorGapMs: [prng.int(300, 1_000), prng.int(1_500, 5_000)],
    pauseChance: prng.pick([0, 0.15, 0.3]),
    targetedFaults: prng.chance(0.8)
  }
}

/** The world's epoch for an auto-scavenge seed: `firstDueMs` before 2026-01-01T00:02:00Z. */
export const autoScavengeEpochMs = (options: AutoScavengeSimOptions): number =>
  Date.UTC(2026, 0, 1, 0, 2, 0) - options.firstDueMs

/**
 * An auto-scavenge seed's safety phase runs past its first due cycle long enough for one cycle under
 * faults; its liveness phase waits for the next cycle (up to a schedule period) and the cycle itself.
 */
export const withAutoScavengeTimes = (options: ClusterSimOptions, prng: Prng): ClusterSimOptions => {
  const auto = options.autoScavenge
  if (auto === undefined || auto.schedule === undefined) return options
  const period = auto.schedule === "* * * * *" ? 60_000 : 120_000
  return {
    ...options,
    safetyMs: auto.firstDueMs + prng.int(6_000, 20_000),
    livenessMs: period + 60_000
  }
}

export const MaxClockSkewMs = 200

export const chooseClusterOptions = (prng: Prng, voters?: VoterCount, autoScavenge?: boolean): ClusterSimOptions => {
  // Drawn whatever `voters` says, so that `--nodes N` replays the swarm's seed exactly when it picked N.
  const swarmVoters = prng.pick([1, 3, 3, 3, 5] as const)
  const chosen: VoterCount = voters ?? swarmVoters
  const readOnlyReplica = prng.chance(0.25) && chosen > 1
  const members = chosen + (readOnlyReplica ? 1 : 0)
  const skews = prng.fork("clock-skews")
  const lossy = prng.chance(0.3)
  const options: ClusterSimOptions = {
    voters: chosen,
    readOnlyReplica,
    clockSkewMs: Array.from({ length: members }, () => skews.int(-MaxClockSkewMs, MaxClockSkewMs)),
    timings: {
      gossipIntervalMs: prng.pick([100, 200, 500]),
      gossipTimeoutMs: prng.pick([200, 500]),
      leaderElectionTimeoutMs: 1000,
      commitTimeoutMs: prng.pick([1000, 2000]),
      heartbeatIntervalMs: prng.pick([50, 100]),
      heartbeatTimeoutMs: prng.pick([500, 1000])
    },
    chunkSize: prng.pick([1024, 4096, 16384]),
    memtableMaxEntries: prng.pick([4, 64, 1000]),
    network: lossy
      ? {
          lossChance: prng.pick([0.001, 0.01, 0.05]),
          duplicateChance: prng.pick([0, 0.01]),
          breakChance: prng.pick([0, 0.001, 0.01])
        }
      : { lossChance: 0, duplicateChance: 0, breakChance: 0 },
    clients: prng.int(1, 3),
    streamsPerClient: prng.int(2, 4),
    safetyMs: prng.int(2_000, 5_000),
    faultGapMs: [prng.int(100, 300), prng.int(400, 1_500)],
    livenessMs: 30_000,
    autoScavenge: chooseAutoScavengeOptions(prng.fork("auto-scavenge"), chosen, autoScavenge)
  }
  return withAutoScavengeTimes(options, prng.fork("auto-scavenge-times"))
}
