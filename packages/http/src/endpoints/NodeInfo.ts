/**
 * Who this node is and what state it is in: the input of `/info`, `/gossip` and `/health/live`. The static
 * part (`NodeIdentity`) is built once by the node from its configuration. The state a node shows is its
 * place in the cluster (`ClusterStatus`), except while the node itself starts or stops (`ShuttingDown` after
 * `/admin/shutdown`): that lifecycle state lives in a Ref here and wins over the cluster's.
 */
import { Context, Effect, Layer, MutableRef, Ref } from "effect"
import type { ClusterStatusService, VNodeState } from "@vellum/cluster"
import { ClusterStatus } from "@vellum/cluster"
import { randomUuid } from "@vellum/storage"
import type { NodeRole } from "../leaderRouting.js"

export interface NodeIdentity {
  /** Product version, reported as `dbVersion`/`esVersion` (/info) and `esVersion` (/gossip). */
  readonly version: string
  /** This run's member id (a UUID), stable for the life of the process. */
  readonly instanceId: string
  /** The address the HTTP server listens on. */
  readonly httpEndpoint: { readonly host: string; readonly port: number }
  /** `AdvertiseHostToClientAs` / `AdvertiseNodePortToClientAs`: what clients are told to use instead. */
  readonly advertiseHost?: string
  readonly advertisePort?: number
  /** `/info` `features` (projections, userManagement, atomPub, …), in output order. */
  readonly features: Readonly<Record<string, boolean>>
  /** `/info` `authentication`: provider name (`internal`, `insecure`) and its public properties. */
  readonly authentication: {
    readonly type: string
    readonly properties: ReadonlyArray<{ readonly key: string; readonly value: string }>
  }
  readonly nodePriority: number
  readonly isReadOnlyReplica: boolean
  /** Voting members (`--cluster-size`); 1 for a single node. */
  readonly clusterSize: number
}

export interface NodeInfoService {
  readonly identity: NodeIdentity
  /**
   * The node's own lifecycle: `Initializing`, `ShuttingDown` and `Shutdown` are shown as they are; any other
   * value (a running node's) defers to the cluster's state (`shownState`).
   */
  readonly state: Ref.Ref<VNodeState>
}

export class NodeInfo extends Context.Tag("@vellum/http/NodeInfo")<NodeInfo, NodeInfoService>() {
  /** A node starting in `initial` (a single node leads from its first moment). */
  static readonly layer = (identity: NodeIdentity, initial: VNodeState = "Leader"): Layer.Layer<NodeInfo> =>
    Layer.effect(
      NodeInfo,
      Effect.map(Ref.make(initial), (state) => ({ identity, state }))
    )
}

/** The states of a node starting or stopping, whatever its cluster says. */
const isLifecycleState = (state: VNodeState): boolean =>
  state === "Initializing" || state === "ShuttingDown" || state === "Shutdown"

/**
 * Is the node live for `/health/live`? The reference answers 5xx before the node has started and after it
 * has stopped; every state in between (including follower and election states) is live.
 */
export const isLive = (state: VNodeState): boolean => !isLifecycleState(state)

/** The state the node shows: its own while it starts or stops, otherwise its place in the cluster. */
export const shownState = (info: NodeInfoService, cluster: ClusterStatusService): Effect.Effect<VNodeState> =>
  Effect.map(Ref.get(info.state), (lifecycle) => (isLifecycleState(lifecycle) ? lifecycle : cluster.state()))

export const nodeState: Effect.Effect<VNodeState, never, NodeInfo | ClusterStatus> = Effect.flatMap(
  Effect.all([NodeInfo, ClusterStatus]),
  ([info, cluster]) => shownState(info, cluster)
)

/** The node's state and leader, for the pipeline's `HttpSettings.nodeRole` (leader routing). */
export const nodeRoleOf = (info: NodeInfoService, cluster: ClusterStatusService): Effect.Effect<NodeRole> =>
  Effect.map(shownState(info, cluster), (state) => ({ state, leader: cluster.leader() }))

/**
 * A Ref's value read without an Effect: Effect's Ref keeps it in a MutableRef field, `ref`; undefined if it
 * ever stops doing so (test/node-role-now.test.ts fails then), and the caller runs the Effect instead.
 */
const MutableRefTypeId = Symbol.for("effect/MutableRef")

export const peekRef = <A>(ref: Ref.Ref<A>): A | undefined => {
  const inner: unknown = (ref as unknown as { readonly ref?: unknown }).ref
  const isMutableRef = typeof inner === "object" && inner !== null && MutableRefTypeId in inner
  return isMutableRef ? MutableRef.get(inner as unknown as MutableRef.MutableRef<A>) : undefined
}

/**
 * `nodeRoleOf` in plain code, for the pipeline's `HttpSettings.nodeRoleNow` (leader routing of every write
 * without an Effect step); undefined when the lifecycle state cannot be read so.
 */
export const nodeRoleNowOf = (info: NodeInfoService, cluster: ClusterStatusService) => (): NodeRole | undefined => {
  const lifecycle = peekRef(info.state)
  if (lifecycle === undefined) return undefined
  return { state: isLifecycleState(lifecycle) ? lifecycle : cluster.state(), leader: cluster.leader() }
}

/** The node's liveness, for the pipeline's `HttpSettings.ready` (which takes an Effect with no requirements). */
export const livenessOf = (info: NodeInfoService, cluster: ClusterStatusService): Effect.Effect<boolean> =>
  Effect.map(shownState(info, cluster), isLive)

export const nodeIsLive: Effect.Effect<boolean, never, NodeInfo | ClusterStatus> = Effect.map(nodeState, isLive)

/** A fresh member id, from Effect's Random (deterministic under the simulator). */
export const makeInstanceId: Effect.Effect<string> = randomUuid

/** The defaults of a single Vellum node; the caller supplies version, id and endpoint. */
export const singleNodeIdentity = (
  options: Pick<NodeIdentity, "version" | "instanceId" | "httpEndpoint"> & Partial<NodeIdentity>
): NodeIdentity => ({
  features: { projections: false, userManagement: true, atomPub: true },
  authentication: { type: "internal", properties: [] },
  nodePriority: 0,
  isReadOnlyReplica: false,
  clusterSize: 1,
  ...options
})
