/**
 * A ClusterStatus whose state and leader a test sets, and which records what the HTTP API asked of it
 * (resignations, priorities, received gossip). Its members are `self` plus the `others` a test gives it; a
 * received view is recorded and answered as `self` plus what was received.
 */
import { Effect, Layer } from "effect"
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
    state: () => state,
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

/** Another member, as gossip shows it. */
export const otherMember = (n: number, state: VNodeState): MemberInfo => ({
  instanceId: `00000000-0000-4000-8000-00000000000${n}`,
  timeStamp: Date.UTC(2026, 0, 2, 3, 4, 5, 600),
  state,
  isAlive: true,
  internalTcpIp: `10.0.0.${n}`,
  internalTcpPort: 1112,
  internalSecureTcpPort: 0,
  externalTcpIp: `10.0.0.${n}`,
  externalTcpPort: 0,
  externalSecureTcpPort: 0,
  internalHttpEndPointIp: `10.0.0.${n}`,
  internalHttpEndPointPort: 2113,
  httpEndPointIp: `10.0.0.${n}`,
  httpEndPointPort: 2113,
  lastCommitPosition: 100 * n,
  writerCheckpoint: 110 * n,
  chaserCheckpoint: 100 * n,
  epochPosition: 0,
  epochNumber: 2,
  epochId: `10000000-0000-4000-8000-00000000000${n}`,
  nodePriority: n,
  isReadOnlyReplica: false,
  esVersion: "0.1.0"
})
