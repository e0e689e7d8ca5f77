/**
 * Auto-scavenge's state on the leader: the internal statuses of the state machine, the schedule, and the
 * cycle under way. Only the leader holds one; every change comes from applying an event (apply.ts), so the
 * state a new leader rebuilds from the streams is the state the old leader had.
 */
import type { NodeId } from "./NodeId.js"

export type Status =
  | "NotConfigured"
  | "Waiting"
  | "PausedWhileIdle"
  | "ContinuingClusterScavenge"
  | "StartingNodeScavenge"
  | "MonitoringNodeScavenge"
  | "Pausing"
  | "PausedWhileScavengingCluster"

/** The state `GET /auto-scavenge/status` shows for each status. */
export type PublicState = "NotConfigured" | "Waiting" | "InProgress" | "Pausing" | "Paused"

export const publicStateOf = (status: Status): PublicState => {
  switch (status) {
    case "NotConfigured":
    case "Waiting":
    case "Pausing":
      return status
    case "PausedWhileIdle":
    case "PausedWhileScavengingCluster":
      return "Paused"
    case "ContinuingClusterScavenge":
    case "StartingNodeScavenge":
    case "MonitoringNodeScavenge":
      return "InProgress"
  }
}

/** A cycle: every member scavenged once, followers first, the leader last. */
export interface ClusterScavenge {
  readonly id: string
  /** The nodes the cycle covers (gossip's members when it started, then as membership changed). */
  readonly members: ReadonlyArray<NodeId>
  /** Those done with this cycle, whatever their node scavenge's result. */
  readonly scavenged: ReadonlyArray<NodeId>
}

export interface AutoScavengeState {
  readonly status: Status
  /** The CRON schedule in its expanded rendering; undefined until configured. */
  readonly schedule: string | undefined
  /** When the schedule was last configured. */
  readonly startingPoint: number | undefined
  /** The time the next cycle is counted from (strictly after it); the starting point when undefined. */
  readonly anchor: number | undefined
  readonly clusterScavenge: ClusterScavenge | undefined
  /** The node whose scavenge is being started or watched. */
  readonly designated: NodeId | undefined
  /** The designated node's scavenge, once it started. Left as it was by a pause. */
  readonly nodeScavengeId: string | undefined
}

export const initialState: AutoScavengeState = {
  status: "NotConfigured",
  schedule: undefined,
  startingPoint: undefined,
  anchor: undefined,
  clusterScavenge: undefined,
  designated: undefined,
  nodeScavengeId: undefined
}

/** The cycle's members not yet scavenged, in membership order. */
export const remainingMembers = (cycle: ClusterScavenge): ReadonlyArray<NodeId> => {
  const done = new Set(cycle.scavenged.map((n) => `${n.address}:${n.port}`))
  return cycle.members.filter((n) => !done.has(`${n.address}:${n.port}`))
}
