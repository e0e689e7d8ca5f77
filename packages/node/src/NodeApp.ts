/**
 * The composition root of one node, shared by `main` (real disk, real sockets) and the simulator (memory
 * disk, requests called in-process): from a loaded configuration, the layer of every service a node runs
 * (storage, users and authentication, stream ACLs, node identity, stats, metrics, shutdown, scavenging) and the HTTP
 * request handler over every route family.
 *
 * Which disk, which process figures and which metrics registry are parameters, so nothing here touches the
 * real world: `main.ts` passes the live ones.
 */
import { Effect, Layer, type Scope } from "effect"
import { Network, type Disk, type NetworkService } from "@vellum/platform"
import type { DiskError } from "@vellum/platform"
import { EventStore, type StorageConfig, type StorageCorrupt, type StorageLocked } from "@vellum/storage"
import { ScavengerLayer, type Scavenger, type StateCorrupt } from "@vellum/scavenge"
import {
  Authentication,
  Authenticator,
  logFailedAuthentication,
  makeAuthenticator,
  StreamAccessPolicy,
  Users,
  type StreamAccess,
  type UserStoreFailed
} from "@vellum/security"
import { ClusterNode, ClusterStatus, isSingleNode, type ClusterSettings } from "@vellum/cluster"
import { AutoScavenge, AutoScavengeLayer, autoScavengeRoutes } from "@vellum/auto-scavenge"
import { Subscriptions, SubscriptionsLayer, subscriptionRoutes } from "@vellum/subscriptions"
import { Projections, ProjectionsLayer, liveRunnerFactoryLayer, projectionRoutes } from "@vellum/projections"
import {
  NodeMetrics,
  makeHandler,
  selectNodeRoutes,
  NodeServices,
  singleNodeIdentity,
  streamRoutes,
  usersRoutes,
  livenessOf,
  nodeHealth,
  nodeRoleOf,
  nodeRoleNowOf,
  leaderForwardingOf,
  serveForwardedRequests as serveForwardedOn,
  NodeInfo,
  defaultHttpSettings,
  scavengeHistoryRoutes,
  scavengeRoutes,
  StatsStream,
  withClientAddress,
  withRequestLog,
  type HttpRequest,
  type HttpSettings,
  type RequestHandler,
  type NodeIdentity,
  type ProcessStats,
  type Reply,
  type RouteDef
} from "@vellum/http"
import { NodeConfig } from "./config/NodeConfig.js"
import { autoScavengeEnablement } from "./config/autoScavengeEnablement.js"
import type { LoadedConfig } from "./config/LoadedConfig.js"
import {
  toAdvertiseAs,
  toClusterSettings,
  toScavengerSettings,
  toSecurityConfig,
  toStorageConfig
} from "./config/derive.js"
import { infoOptionsRoute } from "./infoOptionsRoute.js"
import * as ScavengeMetrics from "./scavengeMetrics.js"
import * as AutoScavengeMetrics from "./autoScavengeMetrics.js"
import * as SubscriptionMetrics from "./subscriptionMetrics.js"
import * as ProjectionFigures from "./projectionFigures.js"
import { toProjectionsSettings } from "./config/projectionSettings.js"

export const VELLUM_VERSION = "0.1.0"

export type NodeAppServices =
  | EventStore
  | Users
  | Authenticator
  | StreamAccess
  | NodeServices.NodeServices
  | NodeConfig
  | Scavenger
  | AutoScavenge
  | Subscriptions
  | Projections

/**
 * Why a node cannot start: its store, its user store or its scavenge state cannot be opened, or another
 * node holds its data directory.
 */
export type NodeAppError = StorageCorrupt | StorageLocked | UserStoreFailed | StateCorrupt | DiskError

export interface NodeAppOptions {
  /** The directory the store lives in (the configured `Db`, resolved by the caller). */
  readonly dbDir: string
  /** This run's member id. */
  readonly instanceId: string
  /** Real process figures (live) instead of the deterministic ones. */
  readonly processStats?: Layer.Layer<ProcessStats>
  /** A metrics registry with the process's default metrics (live) instead of the bare one. */
  readonly metrics?: Layer.Layer<NodeMetrics>
  /**
   * The node-to-node network, which a cluster member needs (its gossip, elections and replication): the
   * live one in `main`, the simulated one in the simulator. A single node uses none.
   */
  readonly network?: NetworkService
}

/**
 * The store every service above it uses, with the node's place in its cluster (`ClusterStatus`), which the
 * HTTP API routes by (writes to the leader) and shows (`/info`, `/gossip`, `/metrics`). A single node's store
 * is the store; a member runs gossip, elections and replication over its network and clustered store, and
 * the store above it forwards the writes the node's own services make to the leader while it follows.
 */
const storeInCluster = (
  storage: Layer.Layer<EventStore, StorageCorrupt | StorageLocked | DiskError, Disk>,
  identity: NodeIdentity,
  settings: ClusterSettings,
  dataDir: string,
  network: NetworkService | undefined
): Layer.Layer<EventStore | ClusterStatus, StorageCorrupt | StorageLocked | DiskError, Disk> => {
  if (isSingleNode(settings)) return Layer.merge(storage, NodeServices.singleNodeStatus(identity))
  if (network === undefined) return Layer.die(new Error("a cluster member needs a node-to-node network"))
  const member = Layer.provide(
    ClusterNode.layer({ settings, instanceId: identity.instanceId, version: VELLUM_VERSION, dataDir }),
    Layer.succeed(Network, network)
  )
  // The member's forwarding store replaces the plain one for everything above.
  return Layer.provideMerge(member, storage)
}

/** Every service of a node, over a Disk. Fails when the store or the user store cannot be opened. */
export const layer = (
  loaded: LoadedConfig,
  options: NodeAppOptions
): Layer.Layer<NodeAppServices, NodeAppError, Disk> =>
  layerWithStorage(loaded, { ...toStorageConfig(loaded.config), dir: options.dbDir }, options)

/**
 * `layer` over explicit storage settings: for the simulator, whose swarm picks settings no option can
 * express (chunks of a few hundred bytes, memtables of a few entries, a degenerate stream hash).
 */
export const layerWithStorage = (
  loaded: LoadedConfig,
  storageConfig: StorageConfig,
  options: Omit<NodeAppOptions, "dbDir">
): Layer.Layer<NodeAppServices, NodeAppError, Disk> => {
  const config = loaded.config
  const clusterSettings = toClusterSettings(config)
  // A member indexes only what a quorum holds, and writes only while it leads.
  const storage = EventStore.layer(
    isSingleNode(clusterSettings)
      ? storageConfig
      : { ...storageConfig, clustered: true, commitTimeoutMillis: clusterSettings.commitTimeoutMs }
  )
  const users = Users.layer(toSecurityConfig(config))
  const authenticator = Effect.map(makeAuthenticator({ enableTrustedAuth: config.EnableTrustedAuth }), (service) =>
    config.LogFailedAuthenticationAttempts ? logFailedAuthentication(service) : service
  )
  const authentication = config.Insecure ? Authentication.layerInsecure : Layer.effect(Authenticator, authenticator)
  const identity = singleNodeIdentity({
    version: VELLUM_VERSION,
    instanceId: options.instanceId,
    httpEndpoint: { host: config.NodeIp, port: config.NodePort },
    // The reference's rules: user management needs authentication; projections are on unless `--run-projections None`.
    features: {
      projections: config.RunProjections !== "None",
      userManagement: !config.Insecure,
      atomPub: config.EnableAtomPubOverHttp
    },
    authentication: { type: config.Insecure ? "insecure" : "internal", properties: [] },
    nodePriority: config.NodePriority,
    ...toAdvertiseAs(config)
  })
  const store = storeInCluster(storage, identity, clusterSettings, storageConfig.dir, options.network)
  const node = NodeServices.layer(identity, {
    // Built with the store (storeInCluster); the node's services take it from there.
    cluster: Layer.effect(ClusterStatus, ClusterStatus),
    ...(options.processStats !== undefined ? { process: options.processStats } : {}),
    ...(options.metrics !== undefined ? { metrics: options.metrics } : {})
  })
  const aboveStorage = Layer.mergeAll(
    Layer.provideMerge(authentication, users),
    StreamAccessPolicy.layer,
    node,
    ScavengerLayer.layer(toScavengerSettings(config, storageConfig.dir)),
    Layer.succeed(NodeConfig, loaded)
  )
  const statsStream = config.WriteStatsToDb
    ? StatsStream.layer({ endpoint: `${config.NodeIp}:${config.NodePort}`, periodSeconds: config.StatsPeriodSec })
    : Layer.empty
  // Every member answers the leader's node scavenge calls; the driver (and its metrics) runs only where
  // auto-scavenge is on.
  const autoScavenge = Layer.merge(
    autoScavengeEnablement(config).enabled
      ? Layer.provideMerge(AutoScavengeMetrics.layer, AutoScavengeLayer.layer({ tickMillis: config.GossipIntervalMs }))
      : AutoScavengeLayer.layerDisabled,
    AutoScavengeLayer.layerNodeScavengeServer
  )
  return Layer.provideMerge(
    Layer.mergeAll(
      ScavengeMetrics.layer,
      statsStream,
      autoScavenge,
      Layer.provideMerge(SubscriptionMetrics.layer, SubscriptionsLayer.layer()),
      Layer.provideMerge(ProjectionFigures.layer, projections(toProjectionsSettings(config)))
    ),
    Layer.provideMerge(aboveStorage, store)
  )
}

/** The projections subsystem over the node's store, starting runners with the node's own factory. */
const projections = (settings: ReturnType<typeof toProjectionsSettings>) =>
  Layer.provide(ProjectionsLayer.layer(settings), liveRunnerFactoryLayer(settings))

/**
 * The route families a node serves, as the reference registers its controllers: streams only with AtomPub
 * on; persistent subscriptions always; projections unless `--run-projections None`; the users API not in insecure mode; auto-scavenge while it is enabled; stats and metrics, gossip, and the
 * admin endpoints (shutdown, scavenge, the scavenge history's reads) each unless their `Disable…` switch is set.
 * A route left out answers 404.
 */
export const nodeRouteList = (loaded: LoadedConfig): ReadonlyArray<RouteDef<NodeAppServices>> => {
  const config = loaded.config
  return [
    ...(config.EnableAtomPubOverHttp ? streamRoutes : []),
    ...selectNodeRoutes({
      stats: !config.DisableStatsOnHttp,
      gossip: !config.DisableGossipOnHttp,
      anonymousGossip: config.OverrideAnonymousEndpointAccessForGossip,
      admin: !config.DisableAdminUi
    }),
    ...(config.Insecure ? [] : usersRoutes),
    ...subscriptionRoutes,
    // As the reference registers its projections controller only with the subsystem: `None` leaves 404s.
    ...(config.RunProjections === "None" ? [] : projectionRoutes),
    ...(autoScavengeEnablement(config).enabled ? autoScavengeRoutes : []),
    ...(config.DisableAdminUi ? [] : scavengeRoutes),
    // With AtomPub on, the stream routes serve these paths (and the run page's template would shadow their
    // `/streams/$scavenges/{event}/forward/{count}`).
    ...(config.DisableAdminUi || config.EnableAtomPubOverHttp ? [] : scavengeHistoryRoutes),
    infoOptionsRoute
  ]
}

/**
 * The HTTP settings from the configuration, with readiness and the metrics hook from the node's services;
 * `live` carries what only the live node has (the off-thread append body parser).
 */
export const httpSettingsFor = (
  loaded: LoadedConfig,
  live: Pick<HttpSettings, "appendBodyParser"> = {}
): Effect.Effect<HttpSettings, never, NodeInfo | NodeMetrics | EventStore | ClusterStatus> =>
  Effect.gen(function* () {
    const config = loaded.config
    const info = yield* NodeInfo
    const cluster = yield* ClusterStatus
    const metrics = yield* NodeMetrics
    const store = yield* EventStore
    const leaderForwarding = leaderForwardingOf(cluster)
    return {
      ...defaultHttpSettings,
      allowAnonymousEndpointAccess: config.AllowAnonymousEndpointAccess,
      allowAnonymousStreamAccess: config.AllowAnonymousStreamAccess,
      disableHttpCaching: config.DisableHttpCaching,
      maxRequestBodyBytes: config.MaxAppendSize,
      ready: livenessOf(info, cluster),
      nodeRole: nodeRoleOf(info, cluster),
      nodeRoleNow: nodeRoleNowOf(info, cluster),
      ...(leaderForwarding !== undefined ? { leaderForwarding } : {}),
      health: Effect.sync(() => nodeHealth(store.stats())),
      observeRequest: metrics.observeRequest,
      ...toAdvertiseAs(config),
      ...live
    }
  })

/**
 * The node's request handler: callable in-process (simulator, tests) or served by `serveHttp`. With
 * `LogHttpRequests` each answer is logged; with either logging option every log line of a request names
 * the client's address. `live` carries what only the live node has (the off-thread append body parser).
 */
export const makeNodeHandler = (
  loaded: LoadedConfig,
  live: Pick<HttpSettings, "appendBodyParser"> = {}
): Effect.Effect<RequestHandler<NodeAppServices>, never, NodeInfo | NodeMetrics | EventStore | ClusterStatus> =>
  Effect.map(httpSettingsFor(loaded, live), (settings) => {
    const config = loaded.config
    const handle = makeHandler(nodeRouteList(loaded), settings)
    const logged = config.LogHttpRequests ? withRequestLog(handle) : handle
    return config.LogHttpRequests || config.LogFailedAuthenticationAttempts ? withClientAddress(logged) : logged
  })

/**
 * A cluster member answers, with `handle` (the node's request handler, the one its HTTP server uses), the
 * requests other members pass to it as their leader (`forwardsToLeader` routes), until the scope closes. A
 * single node has nobody to answer.
 */
export const serveForwardedRequests = (
  handle: (request: HttpRequest) => Effect.Effect<Reply, never, NodeAppServices>
): Effect.Effect<void, never, ClusterStatus | NodeAppServices | Scope.Scope> =>
  Effect.flatMap(ClusterStatus, (cluster) => {
    const forwarding = leaderForwardingOf(cluster)
    return forwarding === undefined ? Effect.void : serveForwardedOn(forwarding.network, handle)
  })
