/**
 * ClusterStatus: what the rest of a node (the HTTP API, the scavenger) needs to know of its place in the
 * cluster, and the few things it may ask of it. A single node is its own leader from the moment it opens
 * (`ClusterStatus.layerSingleNode`); a cluster member's status comes from its gossip, election and
 * replication (ClusterNode.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { MemberInfo } from "./MemberInfo.js"
import type { VNodeState } from "./VNodeState.js"
import type { NetworkService, PeerAddress } from "@vellum/platform"
import type { Protocol } from "./network/ProtocolMux.js"

/**
 * The members' internal channel, for a node's own services that talk to other members (auto-scavenge
 * starts and watches node scavenges and passes commands to the leader over it). Authenticated by the
 * cluster secret like replication.
 */
export interface InternalChannel {
  /** A protocol of its own on the member's internal address. */
  readonly protocol: (id: Protocol) => NetworkService
  /** The internal address of a member gossip knows. */
  readonly addressOf: (member: MemberInfo) => PeerAddress
  /** The internal address of the leader this node follows, if it follows one (none while it leads). */
  readonly leaderAddress: () => PeerAddress | undefined
}

/** Where clients reach the leader: its advertised HTTP endpoint. */
export interface LeaderEndpoint {
  readonly instanceId: string
  readonly httpHost: string
  readonly httpPort: number
}

export interface ClusterStatusService {
  /** Voting members the cluster has (`--cluster-size`; 1 for a single node). */
  readonly clusterSize: number
  readonly isReadOnlyReplica: boolean
  /** This node's state now. */
  readonly state: () => VNodeState
  /**
   * The term this node leads in, while it leads (undefined otherwise; a single node leads term 0): services
   * that run on the leader alone start afresh in a new term, since another leader may have acted in between.
   */
  readonly leadingTerm: () => number | undefined
  /** The leader this node follows (itself when it leads), if it knows one. */
  readonly leader: () => LeaderEndpoint | undefined
  /**
   * Every member this node knows, itself included, as `/gossip` shows them. `self` is this node's own
   * record (its figures change with its log); a single node knows only itself.
   */
  readonly members: (self: MemberInfo) => Effect.Effect<ReadonlyArray<MemberInfo>>
  /** Merges the members a peer sent (`POST /gossip`) into this node's view and returns the merged view. */
  readonly receiveGossip: (
    self: MemberInfo,
    received: ReadonlyArray<MemberInfo>
  ) => Effect.Effect<ReadonlyArray<MemberInfo>>
  /** A leader drains, steps down and lets the others elect a new one; on any other node it does nothing. */
  readonly resign: Effect.Effect<void>
  /** This node's priority in elections from now on (`POST /admin/node/priority/{n}`). */
  readonly setPriority: (priority: number) => Effect.Effect<void>
  readonly priority: () => number
  /**
   * Resolves with the reason if this node cannot go on as a member (following its leader would cut more
   * of its log than MaxTruncation allows); the node then stops. Never, for a single node.
   */
  readonly failure: Effect.Effect<string>
  /** The internal channel to other members; none for a single node. */
  readonly internal: InternalChannel | undefined
}

export class ClusterStatus extends Context.Tag("@vellum/cluster/ClusterStatus")<ClusterStatus, ClusterStatusService>() {
  /**
   * A node alone: the leader once open, and its only member. Resigning has no one to hand over to (the
   * reference's single node stays leader), so it does nothing.
   */
  static layerSingleNode = (options: { readonly priority: number; readonly self: () => LeaderEndpoint }) =>
    Layer.sync(ClusterStatus, () => {
      let priority = options.priority
      const service: ClusterStatusService = {
        clusterSize: 1,
        isReadOnlyReplica: false,
        leadingTerm: () => 0,
        state: () => "Leader",
        leader: options.self,
        members: (self) => Effect.succeed([self]),
        receiveGossip: (self) => Effect.succeed([self]),
        resign: Effect.void,
        setPriority: (p) =>
          Effect.sync(() => {
            priority = p
          }),
        priority: () => priority,
        failure: Effect.never,
        internal: undefined
      }
      return service
    })
}
