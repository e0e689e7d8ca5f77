/**
 * What the node does with every option of the table, in one place. Each option is either
 *
 * - `honoured`: its value is read by the code named in `readIn` and changes what the node does, which the
 *   test file `provedBy` shows; or
 * - `refused`: the node cannot honour any value but the default yet, so it refuses to start with another
 *   one and says why (typically: the feature comes with a later issue).
 *
 * There is no third kind: an option accepted and then ignored is what this table exists to prevent. The
 * `Record` over every option name makes a new option without an entry a type error, and
 * packages/node/test/config-support.test.ts checks each entry (the named file reads the option, the named test mentions
 * it, a refused value stops the node with the reason).
 */
import { type ConfigProblem, problem } from "./ConfigError.js"
import type { ConfigSources } from "./LoadedConfig.js"
import { type Config, type OptionName, optionSpecs } from "./options.js"

export type OptionSupport =
  | {
      readonly _tag: "Honoured"
      /** Source files (from the repository root) that read the option's value. */
      readonly readIn: ReadonlyArray<string>
      /** The test file (from the repository root) that shows the option's effect. */
      readonly provedBy: string
    }
  | {
      readonly _tag: "Refused"
      /** Why a value other than the default cannot be honoured; ends the error message. */
      readonly reason: string
      /** A value the node refuses, for the test (command-line text). */
      readonly example: string
    }

const CONFIG = "packages/node/src/config/"
const DERIVE = `${CONFIG}derive.ts`
const CLUSTER_ENDPOINTS = `${CONFIG}clusterEndpoints.ts`
/** The cluster's options take effect in the cluster service, through the settings derive.ts makes of them. */
const CLUSTER_TEST = "config-cluster.test.ts"
const LOAD = `${CONFIG}load.ts`
const NODE_APP = "packages/node/src/NodeApp.ts"
const MAIN = "packages/node/src/main.ts"
const LOGGING = "packages/node/src/logging.ts"

const honoured = (readIn: string | ReadonlyArray<string>, provedBy: string): OptionSupport => ({
  _tag: "Honoured",
  readIn: typeof readIn === "string" ? [readIn] : readIn,
  provedBy: `packages/node/test/${provedBy}`
})

const refused = (reason: string, example: string): OptionSupport => ({ _tag: "Refused", reason, example })

const PROJECTION_SETTINGS = `${CONFIG}projectionSettings.ts`

export const optionSupport: { readonly [K in OptionName]: OptionSupport } = {
  // Application
  Help: honoured(LOAD, "config-info.test.ts"),
  Version: honoured(LOAD, "config-load.test.ts"),
  Config: honoured(LOAD, "config-load.test.ts"),
  WhatIf: honoured(LOAD, "node-process.test.ts"),
  AllowUnknownOptions: honoured(LOAD, "config-load.test.ts"),
  DisableHttpCaching: honoured(NODE_APP, "node-options.test.ts"),
  StatsPeriodSec: honoured(NODE_APP, "node-stats-stream.test.ts"),
  LogHttpRequests: honoured(NODE_APP, "node-logging.test.ts"),
  LogFailedAuthenticationAttempts: honoured(NODE_APP, "node-logging.test.ts"),
  MaxAppendSize: honoured([NODE_APP, DERIVE], "http-limits-config.test.ts"),
  MaxAppendEventSize: honoured(DERIVE, "config-info.test.ts"),
  Insecure: honoured(NODE_APP, "node-app.test.ts"),
  AllowAnonymousEndpointAccess: honoured(NODE_APP, "node-options.test.ts"),
  AllowAnonymousStreamAccess: honoured(NODE_APP, "node-options.test.ts"),
  OverrideAnonymousEndpointAccessForGossip: honoured(NODE_APP, "node-options.test.ts"),

  // Default users
  DefaultAdminPassword: honoured(DERIVE, "config-info.test.ts"),
  DefaultOpsPassword: honoured(DERIVE, "config-info.test.ts"),

  // Logging
  LogLevel: honoured(LOGGING, "node-process.test.ts"),
  LogConsoleFormat: honoured(LOGGING, "node-process.test.ts"),
  Log: honoured(MAIN, "node-process.test.ts"),

  // Authentication
  EnableTrustedAuth: honoured(DERIVE, "config-info.test.ts"),
  PasswordHashCost: honoured(DERIVE, "config-info.test.ts"),

  // Cluster
  ClusterSize: honoured(DERIVE, CLUSTER_TEST),
  NodePriority: honoured([NODE_APP, DERIVE], "node-options.test.ts"),
  GossipSeed: honoured(DERIVE, CLUSTER_TEST),
  GossipIntervalMs: honoured(DERIVE, CLUSTER_TEST),
  GossipTimeoutMs: honoured(DERIVE, CLUSTER_TEST),
  GossipAllowedDifferenceMs: honoured(DERIVE, CLUSTER_TEST),
  LeaderElectionTimeoutMs: honoured(DERIVE, CLUSTER_TEST),
  DeadMemberRemovalPeriodSec: honoured(DERIVE, CLUSTER_TEST),
  ReadOnlyReplica: honoured(DERIVE, CLUSTER_TEST),
  ClusterSecret: honoured(DERIVE, CLUSTER_TEST),
  CommitTimeoutMs: honoured(DERIVE, CLUSTER_TEST),
  PrepareTimeoutMs: refused(
    "Vellum times an append with CommitTimeoutMs alone (from its arrival until a quorum holds it); leave it at its default",
    "3000"
  ),
  MaxTruncation: honoured(DERIVE, CLUSTER_TEST),
  ReplicationIp: honoured([DERIVE, CLUSTER_ENDPOINTS], CLUSTER_TEST),
  ReplicationPort: honoured([DERIVE, CLUSTER_ENDPOINTS], CLUSTER_TEST),
  ReplicationHostAdvertiseAs: honoured(CLUSTER_ENDPOINTS, CLUSTER_TEST),
  ReplicationTcpPortAdvertiseAs: honoured(CLUSTER_ENDPOINTS, CLUSTER_TEST),
  NodeHostAdvertiseAs: honoured([CLUSTER_ENDPOINTS, DERIVE], "node-options.test.ts"),
  NodePortAdvertiseAs: honoured([CLUSTER_ENDPOINTS, DERIVE], "node-options.test.ts"),
  ReplicationHeartbeatInterval: honoured(DERIVE, CLUSTER_TEST),
  ReplicationHeartbeatTimeout: honoured(DERIVE, CLUSTER_TEST),

  // Database
  Db: honoured(MAIN, "node-process.test.ts"),
  MemDb: honoured(MAIN, "node-process.test.ts"),
  ChunkSize: honoured(DERIVE, "config-info.test.ts"),
  ChunksCacheSize: honoured(DERIVE, "config-info.test.ts"),
  MaxMemTableSize: honoured(DERIVE, "config-info.test.ts"),
  StreamInfoCacheCapacity: honoured(DERIVE, "config-info.test.ts"),
  SkipDbVerify: honoured(DERIVE, "config-info.test.ts"),
  SkipIndexVerify: honoured(DERIVE, "config-info.test.ts"),
  WriteStatsToDb: honoured(NODE_APP, "node-stats-stream.test.ts"),
  DisableScavengeMerging: honoured(DERIVE, "config-info.test.ts"),
  UnsafeIgnoreHardDelete: honoured(DERIVE, "config-info.test.ts"),
  ScavengeHistoryMaxAge: honoured(DERIVE, "config-info.test.ts"),
  ScavengeBackendPageSize: honoured(DERIVE, "config-info.test.ts"),
  ScavengeBackendCacheSize: honoured(DERIVE, "config-info.test.ts"),
  ScavengeHashUsersCacheCapacity: refused(
    "Vellum's scavenge state finds collisions without a hash-users table, so there is no such cache to size; leave it at its default",
    "200000"
  ),

  // Interface
  NodeIp: honoured([MAIN, NODE_APP], "node-process.test.ts"),
  NodePort: honoured(MAIN, "node-process.test.ts"),
  EnableAtomPubOverHttp: honoured(NODE_APP, "node-options.test.ts"),
  DisableAdminUi: honoured(NODE_APP, "node-options.test.ts"),
  DisableStatsOnHttp: honoured(NODE_APP, "node-options.test.ts"),
  DisableGossipOnHttp: honoured(NODE_APP, "node-options.test.ts"),
  HttpHeadersTimeout: honoured(DERIVE, "http-limits-config.test.ts"),
  HttpRequestTimeout: honoured(DERIVE, "http-limits-config.test.ts"),
  HttpKeepAliveTimeout: honoured(DERIVE, "http-limits-config.test.ts"),
  HttpMaxConnections: honoured(DERIVE, "http-limits-config.test.ts"),

  // Projections
  RunProjections: honoured([NODE_APP, PROJECTION_SETTINGS], "node-projections.test.ts"),
  StartStandardProjections: honoured(PROJECTION_SETTINGS, "node-projections.test.ts"),
  ProjectionsQueryExpiry: honoured(PROJECTION_SETTINGS, "node-projections.test.ts"),
  // Vellum's sources never see a stream's events out of order or with gaps they cannot explain (a stream's
  // events read in order from its index; truncations are read past), so there is nothing to fault on.
  FaultOutOfOrderProjections: refused(
    "Vellum's projections read each stream in order from its index and never meet an unexpected event number; leave it at its default",
    "true"
  ),
  ProjectionCompilationTimeout: honoured(PROJECTION_SETTINGS, "node-projections.test.ts"),
  ProjectionExecutionTimeout: honoured(PROJECTION_SETTINGS, "node-projections.test.ts"),
  MaxProjectionStateSize: honoured(PROJECTION_SETTINGS, "node-projections.test.ts"),

  // Auto-scavenge
  AutoScavengeEnabled: honoured(`${CONFIG}autoScavengeEnablement.ts`, "config-auto-scavenge.test.ts")
}

/** A problem for every refused option set to something other than its default. */
export const refusedSettings = (config: Config, sources: ConfigSources): ReadonlyArray<ConfigProblem> =>
  optionSpecs.flatMap((spec) => {
    const support = optionSupport[spec.name]
    if (support._tag !== "Refused" || spec.encode(config[spec.name]) === spec.defaultText) return []
    return [
      problem(spec.name, sources[spec.name], `${spec.encode(config[spec.name])} is not supported: ${support.reason}`)
    ]
  })
