/**
 * Who this node is and what state it is in: the input of `/info`, `/gossip` and `/health/live`. The static
 * part (`NodeIdentity`) is built once by the node from its configuration; the state changes at run time
 * (`ShuttingDown` after `/admin/shutdown`), so it lives in a Ref.
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { VNodeState } from "@vellum/cluster"
import { randomUuid } from "@vellum/storage"

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
  /** Always 1 until clustering exists. */
  readonly clusterSize: number
}

export interface NodeInfoService {
  readonly identity: NodeIdentity
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

/**
 * Is the node live for `/health/live`? The reference answers 5xx before the node has started and after it
 * has stopped; every state in between (including follower and election states) is live.
 */
export const isLive = (state: VNodeState): boolean =>
  state !== "Initializing" && state !== "ShuttingDown" && state !== "Shutdown"

/** The node's liveness, for the pipeline's `HttpSettings.ready` (which takes an Effect with no requirements). */
export const livenessOf = (info: NodeInfoService): Effect.Effect<boolean> => Effect.map(Ref.get(info.state), isLive)

export const nodeIsLive: Effect.Effect<boolean, never, NodeInfo> = Effect.flatMap(NodeInfo, livenessOf)

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
