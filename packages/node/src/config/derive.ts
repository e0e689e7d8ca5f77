/**
 * What the node's components take from the configuration: the storage engine's and the security
 * package's settings, the cluster's, the log level. Components never see the whole Config; the composition root hands
 * each its slice.
 */
import { LogLevel } from "effect"
import { defaultSecurityConfig, productionHashParams, type SecurityConfig } from "@vellum/security"
import { defaultStorageConfig, type StorageConfig } from "@vellum/storage"
import type { ScavengerLayerSettings } from "@vellum/scavenge"
import type { ServeOptions } from "@vellum/http"
import type { ClusterSettings } from "@vellum/cluster"
import { httpAdvertisedOf, internalEndpointOf, normalisePeerAddress } from "./clusterEndpoints.js"
import type { Config } from "./options.js"

/**
 * The storage engine's settings. `Db` is used as given (main resolves it against the working directory;
 * with MemDb it names a directory on the in-memory disk). Settings without an option keep the engine's
 * defaults.
 */
export const toStorageConfig = (config: Config): StorageConfig => ({
  ...defaultStorageConfig(config.Db),
  chunkSize: config.ChunkSize,
  readCacheBytes: config.ChunksCacheSize,
  memtableMaxEntries: config.MaxMemTableSize,
  streamInfoCacheCapacity: config.StreamInfoCacheCapacity,
  maxEventSize: config.MaxAppendEventSize,
  verifyChunksOnOpen: !config.SkipDbVerify,
  verifyIndexOnOpen: !config.SkipIndexVerify
})

/** The scavenger's settings; `dbDir` is the resolved database directory. */
export const toScavengerSettings = (config: Config, dbDir: string): ScavengerLayerSettings => ({
  dbDir,
  nodeEndpoint: `${config.NodeIp}:${config.NodePort}`,
  historyMaxAgeDays: config.ScavengeHistoryMaxAge,
  disableMerging: config.DisableScavengeMerging,
  unsafeIgnoreHardDeletes: config.UnsafeIgnoreHardDelete,
  statePageBytes: config.ScavengeBackendPageSize * 1024,
  stateCacheBytes: config.ScavengeBackendCacheSize
})

/**
 * The security settings. `PasswordHashCost` is scrypt's log2(N); the other scrypt parameters stay the
 * production ones. Insecure mode is not here: it selects a different authentication layer.
 */
export const toSecurityConfig = (config: Config): SecurityConfig => ({
  ...defaultSecurityConfig,
  passwordHash:
    productionHashParams.algorithm === "scrypt"
      ? { ...productionHashParams, logN: config.PasswordHashCost }
      : productionHashParams,
  defaultAdminPassword: config.DefaultAdminPassword,
  defaultOpsPassword: config.DefaultOpsPassword,
  enableTrustedAuth: config.EnableTrustedAuth
})

/** The HTTP server's limits: the body limit is MaxAppendSize; timeouts and the connection cap. */
export const toServeLimits = (
  config: Config
): Required<
  Pick<
    ServeOptions<never>,
    | "maxRequestBodyBytes"
    | "headersTimeoutMillis"
    | "requestTimeoutMillis"
    | "keepAliveTimeoutMillis"
    | "maxConnections"
  >
> => ({
  maxRequestBodyBytes: config.MaxAppendSize,
  headersTimeoutMillis: config.HttpHeadersTimeout,
  requestTimeoutMillis: config.HttpRequestTimeout,
  keepAliveTimeoutMillis: config.HttpKeepAliveTimeout,
  maxConnections: config.HttpMaxConnections
})

/**
 * How the node takes part in its cluster. With the defaults it is a single node (`isSingleNode`): no
 * seeds, no secret, nothing started for the cluster. Seeds come in one spelling ("host:port"); the
 * internal interface listens apart from its advertised endpoint only when ReplicationIp is not it.
 */
export const toClusterSettings = (config: Config): ClusterSettings => {
  const internal = internalEndpointOf(config)
  const listen = { host: config.ReplicationIp, port: config.ReplicationPort }
  return {
    clusterSize: config.ClusterSize,
    gossipSeeds: config.GossipSeed.map(normalisePeerAddress),
    internal,
    ...(listen.host === internal.host && listen.port === internal.port ? {} : { internalListen: listen }),
    httpAdvertised: httpAdvertisedOf(config),
    nodePriority: config.NodePriority,
    readOnlyReplica: config.ReadOnlyReplica,
    clusterSecret: config.ClusterSecret,
    gossipIntervalMs: config.GossipIntervalMs,
    gossipTimeoutMs: config.GossipTimeoutMs,
    gossipAllowedDifferenceMs: config.GossipAllowedDifferenceMs,
    deadMemberRemovalPeriodSec: config.DeadMemberRemovalPeriodSec,
    leaderElectionTimeoutMs: config.LeaderElectionTimeoutMs,
    commitTimeoutMs: config.CommitTimeoutMs,
    heartbeatIntervalMs: config.ReplicationHeartbeatInterval,
    heartbeatTimeoutMs: config.ReplicationHeartbeatTimeout,
    maxTruncationBytes: config.MaxTruncation
  }
}

/**
 * What clients are told to use instead of the address they reached: absolute links in responses and this
 * node's HTTP endpoint in /gossip. Nothing when NodeHostAdvertiseAs and NodePortAdvertiseAs are unset.
 */
export const toAdvertiseAs = (
  config: Config
): { readonly advertiseHost?: string; readonly advertisePort?: number } => ({
  ...(config.NodeHostAdvertiseAs !== "" ? { advertiseHost: config.NodeHostAdvertiseAs } : {}),
  ...(config.NodePortAdvertiseAs > 0 ? { advertisePort: config.NodePortAdvertiseAs } : {})
})

/** The reference's level names (Serilog's) as Effect log levels; `Default` is Information. */
export const toLogLevel = (level: Config["LogLevel"]): LogLevel.LogLevel => {
  switch (level) {
    case "Verbose":
      return LogLevel.Trace
    case "Debug":
      return LogLevel.Debug
    case "Default":
    case "Information":
      return LogLevel.Info
    case "Warning":
      return LogLevel.Warning
    case "Error":
      return LogLevel.Error
    case "Fatal":
      return LogLevel.Fatal
  }
}
