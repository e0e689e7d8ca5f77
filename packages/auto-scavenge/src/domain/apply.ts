/**
 * Applying an event to the state: the one place the state changes, the same live and when a new leader
 * rebuilds the state from the streams. Events that do not concern the current cycle or the designated
 * node are ignored, as a late or repeated event must change nothing.
 */
import type { AutoScavengeEvent } from "./events.js"
import { nodeKey, nodesMissingFrom, sameNode } from "./NodeId.js"
import type { AutoScavengeState } from "./State.js"

export const apply = (state: AutoScavengeState, event: AutoScavengeEvent): AutoScavengeState => {
  switch (event._tag) {
    case "ConfigurationUpdated":
      return {
        ...state,
        schedule: event.schedule,
        startingPoint: event.updatedAt,
        anchor: event.updatedAt,
        status: state.status === "NotConfigured" ? "Waiting" : state.status
      }
    case "Initialized":
      return state.schedule === undefined ? state : { ...state, anchor: event.at }
    case "ClusterScavengeStarted":
      return {
        ...state,
        status: "ContinuingClusterScavenge",
        clusterScavenge: { id: event.clusterScavengeId, members: event.members, scavenged: [] }
      }
    case "NodeDesignated":
      // Designating and pausing need a cycle. Without one (its start aged out of the stream while later
      // events remain) the event is ignored, rather than leave a cycle-less InProgress that never ends.
      if (state.clusterScavenge === undefined) return state
      // A new designation has no scavenge yet: an id kept from before (the node restarted, or another node
      // before a pause) names a scavenge that is over, and stopping it would leave a new one running.
      return { ...state, status: "StartingNodeScavenge", designated: event.nodeId, nodeScavengeId: undefined }
    case "NodeScavengeStarted":
      if (!sameNode(event.nodeId, state.designated)) return state
      return { ...state, status: "MonitoringNodeScavenge", nodeScavengeId: event.scavengeId }
    case "NodeScavengeCompleted": {
      if (!sameNode(event.nodeId, state.designated)) return state
      const cycle = state.clusterScavenge
      return {
        ...state,
        status: "ContinuingClusterScavenge",
        designated: undefined,
        nodeScavengeId: undefined,
        clusterScavenge:
          cycle === undefined
            ? undefined
            : { ...cycle, scavenged: [...nodesMissingFrom(cycle.scavenged, [event.nodeId]), event.nodeId] }
      }
    }
    case "ClusterMembersChanged": {
      const cycle = state.clusterScavenge
      if (cycle === undefined) return state
      const removed = new Set(event.removed.map(nodeKey))
      const members = [
        ...cycle.members.filter((n) => !removed.has(nodeKey(n))),
        ...nodesMissingFrom(event.added, cycle.members)
      ]
      const scavenged = cycle.scavenged.filter((n) => !removed.has(nodeKey(n)))
      const designatedRemoved = state.designated !== undefined && removed.has(nodeKey(state.designated))
      return {
        ...state,
        clusterScavenge: { ...cycle, members, scavenged },
        ...(designatedRemoved
          ? {
              designated: undefined,
              nodeScavengeId: undefined,
              status: state.status === "Pausing" ? "Pausing" : "ContinuingClusterScavenge"
            }
          : {})
      }
    }
    case "ClusterScavengeCompleted":
      if (state.clusterScavenge?.id !== event.clusterScavengeId) return state
      return {
        ...state,
        status: "Waiting",
        anchor: event.completedAt,
        clusterScavenge: undefined,
        designated: undefined,
        nodeScavengeId: undefined
      }
    case "PauseRequested":
      return state.clusterScavenge === undefined ? state : { ...state, status: "Pausing" }
    case "Paused":
      return {
        ...state,
        designated: undefined,
        status: state.clusterScavenge !== undefined ? "PausedWhileScavengingCluster" : "PausedWhileIdle"
      }
    case "Resumed":
      return {
        ...state,
        status:
          state.clusterScavenge !== undefined
            ? "ContinuingClusterScavenge"
            : state.schedule !== undefined
              ? "Waiting"
              : "NotConfigured",
        anchor: state.schedule !== undefined ? event.resumedAt : state.anchor
      }
  }
}

export const applyAll = (state: AutoScavengeState, events: ReadonlyArray<AutoScavengeEvent>): AutoScavengeState =>
  events.reduce(apply, state)
