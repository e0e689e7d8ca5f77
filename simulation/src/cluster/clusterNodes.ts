/**
 * The members of a simulated cluster and how each one opens: its addresses, its configuration (built with
 * `loadConfig` from the options a user would give, as simNode.ts does for the single node), and one
 * lifetime of the unmodified NodeApp over its own MemoryDisk and the world's SimNetwork.
 *
 * Member i (from 1) is `n{i}`: HTTP at 10.0.0.{i}:2113 (what it advertises, so a 307 names it), internal
 * endpoint 10.0.1.{i}:1112. Voters' seeds are the other voters; the read-only replica's are all voters.
 */
import { Context, Effect, Layer, Option, Scope } from "effect"
import { Disk, type DiskService, type NetworkService } from "@vellum/platform"
import type { HttpRequest } from "@vellum/http"
import { ClusterStatus, type ClusterStatusService } from "@vellum/cluster"
import { Scavenger, type ScavengerService } from "@vellum/scavenge"
import { EventStore, type EventStoreService, type ReplicaLog, type StorageConfig } from "@vellum/storage"
import * as NodeApp from "@vellum/node/app"
import { loadConfig, type LoadedConfig } from "@vellum/node/config"
import type { NodeHandler } from "../httpStore.js"

export interface Member {
  readonly name: string
  /** 1-based. */
  readonly index: number
  readonly voter: boolean
  /** The advertised HTTP endpoint, "host:port". */
  readonly http: string
  /** The internal (node-to-node) endpoint, "host:port". */
  readonly internal: string
}

/** Timings of the cluster: options a user could set, small so that a seed sees many elections. */
export interface ClusterTimings {
  readonly gossipIntervalMs: number
  readonly gossipTimeoutMs: number
  readonly leaderElectionTimeoutMs: number
  readonly commitTimeoutMs: number
  readonly heartbeatIntervalMs: number
  readonly heartbeatTimeoutMs: number
}

export const membersOf = (voters: number, readOnlyReplica: boolean): Array<Member> =>
  Array.from({ length: voters + (readOnlyReplica ? 1 : 0) }, (_, i) => ({
    name: `n${i + 1}`,
    index: i + 1,
    voter: i < voters,
    http: `10.0.0.${i + 1}:2113`,
    internal: `10.0.1.${i + 1}:1112`
  }))

const ClusterSecret = "simulated-cluster-secret"

/** The command line (and environment: the secret is never an argument) of one member. */
export const memberArguments = (
  member: Member,
  members: ReadonlyArray<Member>,
  timings: ClusterTimings,
  autoScavenge: boolean
): { readonly argv: Array<string>; readonly env: Record<string, string> } => {
  const [host, port] = member.http.split(":") as [string, string]
  // Auto-scavenge is on by default; seeds without its workload turn it off, so its idle driver's ticks do
  // not reshuffle them (their scenarios replay as they failed).
  const base = [
    "--password-hash-cost",
    "4",
    "--node-ip",
    host,
    "--node-port",
    port,
    ...(autoScavenge ? [] : ["--auto-scavenge-enabled=false"])
  ]
  const voters = members.filter((m) => m.voter)
  if (voters.length === 1 && members.length === 1) return { argv: base, env: {} }
  const [internalHost, internalPort] = member.internal.split(":") as [string, string]
  const seeds = voters.filter((m) => m.name !== member.name).map((m) => m.internal)
  return {
    argv: [
      ...base,
      "--cluster-size",
      String(voters.length),
      "--gossip-seed",
      seeds.join(","),
      "--replication-ip",
      internalHost,
      "--replication-port",
      internalPort,
      "--gossip-interval-ms",
      String(timings.gossipIntervalMs),
      "--gossip-timeout-ms",
      String(timings.gossipTimeoutMs),
      "--leader-election-timeout-ms",
      String(timings.leaderElectionTimeoutMs),
      "--commit-timeout-ms",
      String(timings.commitTimeoutMs),
      "--replication-heartbeat-interval",
      String(timings.heartbeatIntervalMs),
      "--replication-heartbeat-timeout",
      String(timings.heartbeatTimeoutMs),
      ...(member.voter ? [] : ["--read-only-replica"])
    ],
    env: { VELLUM_CLUSTER_SECRET: ClusterSecret }
  }
}

/** The member's configuration, loaded as the node loads its own; the reason when it does not load. */
export const memberConfig = (
  member: Member,
  members: ReadonlyArray<Member>,
  timings: ClusterTimings,
  autoScavenge: boolean
): LoadedConfig | string => {
  const { argv, env } = memberArguments(member, members, timings, autoScavenge)
  const outcome = Effect.runSync(
    Effect.either(
      loadConfig({ argv, env, readFile: () => Effect.succeed(Option.none()), version: NodeApp.VELLUM_VERSION })
    )
  )
  if (outcome._tag === "Left") return `${member.name}'s configuration did not load: ${String(outcome.left)}`
  if (outcome.right._tag !== "Start") {
    return `${member.name}'s configuration did not load: ${outcome.right._tag} ${JSON.stringify(outcome.right).slice(0, 400)}`
  }
  return outcome.right.loaded
}

/** One open lifetime of a member: what the clients and the checkers reach. */
export interface OpenMember {
  readonly store: EventStoreService
  readonly handler: NodeHandler
  /** Undefined on a node that has no cluster (a single node without the cluster wiring). */
  readonly status: ClusterStatusService | undefined
  /** The end of what the node serves. */
  readonly committed: () => number
  readonly replica: ReplicaLog | undefined
  /** The node's scavenger, which the checkers watch (who scavenges when). */
  readonly scavenger: ScavengerService
}

/** The clustered store's replica log, when the store has one. */
const replicaOf = (store: EventStoreService): ReplicaLog | undefined =>
  (store as EventStoreService & { readonly replica?: ReplicaLog }).replica

/** The member's instance id for one lifetime (a restarted process gets a new one). */
export const instanceIdOf = (member: Member, incarnation: number): string =>
  `00000000-0000-4000-8000-${(member.index * 100_000 + incarnation).toString(16).padStart(12, "0")}`

/** Opens one lifetime of the member in `scope`; fails with the reason it did not open. */
export const openMember = (
  loaded: LoadedConfig,
  storage: StorageConfig,
  disk: DiskService,
  network: NetworkService,
  instanceId: string,
  scope: Scope.Scope
): Effect.Effect<OpenMember, string> =>
  Effect.mapError(
    Effect.gen(function* () {
      // `network` reaches the node's cluster services (the node wires them for a cluster member).
      const options = { instanceId, network }
      const layer = Layer.provide(NodeApp.layerWithStorage(loaded, storage, options), Layer.succeed(Disk, disk))
      const context = yield* Layer.buildWithScope(layer, scope)
      const handle = yield* Effect.provide(NodeApp.makeNodeHandler(loaded), context)
      // It answers what other members pass to it as their leader, as the live node does.
      yield* Effect.provide(Scope.extend(NodeApp.serveForwardedRequests(handle), scope), context)
      const store = Context.get(context, EventStore)
      const replica = replicaOf(store)
      const status = Option.getOrUndefined(Context.getOption(context as Context.Context<never>, ClusterStatus))
      const opened: OpenMember = {
        store,
        handler: (request: HttpRequest) => Effect.provide(handle(request), context),
        status,
        committed: replica === undefined ? () => store.stats().committedPosition : () => replica.committed(),
        replica,
        scavenger: Context.get(context, Scavenger)
      }
      return opened
    }),
    (e) => e.message
  )
