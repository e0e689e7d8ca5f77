/**
 * Shared fixtures of the state machine's tests: nodes, a state in each status reached by applying events
 * (never built by hand, so a fixture can't hold a state the events could not produce), gossip views, and a
 * schedule that fires every N minutes so the tests need no CRON parser.
 */
import {
  applyAll,
  initialState,
  type AutoScavengeEvent,
  type AutoScavengeState,
  type ClusterView,
  type GossipMember,
  type NextOccurrence,
  type NodeId,
  type Status
} from "../src/index.js"

export const A: NodeId = { address: "10.0.0.1", port: 2113 }
export const B: NodeId = { address: "10.0.0.2", port: 2113 }
export const C: NodeId = { address: "10.0.0.3", port: 2113 }
export const D: NodeId = { address: "10.0.0.4", port: 2113 }
export const R: NodeId = { address: "10.0.0.9", port: 2113 }

export const Minute = 60_000
export const T0 = Date.UTC(2026, 0, 1, 0, 0, 0)

/** `every N`: at every multiple of N minutes since the epoch, strictly after the base. `never` never fires. */
export const everyMinutes: NextOccurrence = (schedule, after) => {
  if (schedule === "never") return undefined
  const step = Number(schedule.split(" ")[1]) * Minute
  return (Math.floor(after / step) + 1) * step
}

export const Every10 = "every 10"
export const CycleId = "cycle-1"

export const configured: ReadonlyArray<AutoScavengeEvent> = [
  { _tag: "ConfigurationUpdated", schedule: Every10, updatedAt: T0 }
]
export const started: ReadonlyArray<AutoScavengeEvent> = [
  ...configured,
  { _tag: "ClusterScavengeStarted", clusterScavengeId: CycleId, members: [A, B, C], startedAt: T0 + 10 * Minute }
]
export const designatedA: ReadonlyArray<AutoScavengeEvent> = [
  ...started,
  { _tag: "NodeDesignated", nodeId: A, designatedAt: T0 + 11 * Minute }
]
export const monitoringA: ReadonlyArray<AutoScavengeEvent> = [
  ...designatedA,
  { _tag: "NodeScavengeStarted", nodeId: A, scavengeId: "scav-a", startedAt: T0 + 12 * Minute }
]

/** The events that lead to each status from the initial state. */
export const eventsTo: Record<Status, ReadonlyArray<AutoScavengeEvent>> = {
  NotConfigured: [],
  Waiting: configured,
  PausedWhileIdle: [...configured, { _tag: "Paused", pausedAt: T0 + 5 * Minute }],
  ContinuingClusterScavenge: started,
  StartingNodeScavenge: designatedA,
  MonitoringNodeScavenge: monitoringA,
  Pausing: [...monitoringA, { _tag: "PauseRequested", requestedAt: T0 + 13 * Minute }],
  PausedWhileScavengingCluster: [
    ...monitoringA,
    { _tag: "PauseRequested", requestedAt: T0 + 13 * Minute },
    { _tag: "Paused", pausedAt: T0 + 14 * Minute }
  ]
}

export const stateIn = (status: Status): AutoScavengeState => {
  const state = applyAll(initialState, eventsTo[status])
  if (state.status !== status) throw new Error(`fixture for ${status} reached ${state.status}`)
  return state
}

export const AllStatuses: ReadonlyArray<Status> = Object.keys(eventsTo) as Array<Status>

export const member = (nodeId: NodeId, options: Partial<Omit<GossipMember, "nodeId">> = {}): GossipMember => ({
  nodeId,
  instanceId: `instance-${nodeId.address}:${nodeId.port}`,
  isLeader: false,
  isReadOnlyReplica: false,
  writerCheckpoint: 1000,
  ...options
})

/** A healthy three-node view led by `leader`, each node at the writer checkpoint given. */
export const viewOf = (
  leader: NodeId,
  checkpoints: ReadonlyArray<readonly [NodeId, number]> = [
    [A, 100],
    [B, 200],
    [C, 300]
  ],
  extra: ReadonlyArray<GossipMember> = []
): ClusterView => ({
  self: leader,
  clusterSize: checkpoints.length,
  members: [
    ...checkpoints.map(([n, writerCheckpoint]) =>
      member(n, { writerCheckpoint, isLeader: n.address === leader.address && n.port === leader.port })
    ),
    ...extra
  ]
})
