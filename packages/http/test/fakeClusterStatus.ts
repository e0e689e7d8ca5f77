/**
 * A ClusterStatus whose state and leader a test sets, and which records what the HTTP API asked of it
 * (resignations, priorities, received gossip). Its members are `self` plus the `others` a test gives it; a
 * received view is recorded and answered as `self` plus what was received.
 */
import { Effect, Layer } from "effect"
import { member } from "../../cluster/test/memberFixture.js"
import {
  ClusterStatus,
  type ClusterStatusService,
  type LeaderEndpoint,
  type MemberInfo,
  type VNodeState
} from "@vellum/cluster"

export interface FakeCluster extends ClusterStatusService {
  readonly set: (state: VNodeState, leader?: LeaderEndpoint) => void
  readonly resignations: () => number
  readonly received: () => ReadonlyArray<ReadonlyArray<MemberInfo>>
  readonly layer: Layer.Layer<ClusterStatus>
}

export const fakeCluster = (
  options: {
    readonly state?: VNodeState
    readonly leader?: LeaderEndpoint
    readonly others?: ReadonlyArray<MemberInfo>
  } = {}
): FakeCluster => {
  let state: VNodeState = options.state ?? "Leader"
  let leader = options.leader
  let priority = 0
  let resignations = 0
  const received: Array<ReadonlyArray<MemberInfo>> = []
  const others = options.others ?? []
  const service: Omit<FakeCluster, "layer"> = {
    clusterSize: 3,
    isReadOnlyReplica: false,
    failure: Effect.never,
    internal: undefined,
    state: () => state,
    leadingTerm: () => (state === "Leader" ? 0 : undefined),
    leader: () => leader,
    members: (self) => Effect.succeed([self, ...others]),
    receiveGossip: (self, members) =>
      Effect.sync(() => {
        received.push(members)
        return [self, ...members]
      }),
    resign: Effect.sync(() => {
      resignations++
    }),
    setPriority: (p) =>
      Effect.sync(() => {
        priority = p
      }),
    priority: () => priority,
    set: (s, l) => {
      state = s
      leader = l
    },
    resignations: () => resignations,
    received: () => received
  }
  return { ...service, layer: Layer.succeed(ClusterStatus, service) }
}

/** Another member, as gossip shows it: member n of the cluster tests' fixture, in `state`. */
export const otherMember = (n: number, state: VNodeState): MemberInfo =>
  member(n, { state, timeStamp: Date.UTC(2026, 0, 2, 3, 4, 5, 600), nodePriority: n })
