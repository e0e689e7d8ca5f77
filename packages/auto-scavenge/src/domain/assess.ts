/**
 * Assess: what the leader does next in each status, as pure decisions. A step either records events, or
 * asks the driver for one action (resign; start, poll or stop the designated node's scavenge); the
 * action's outcome is then decided here too (`afterStart`, `afterPoll`, `afterStop`), so the driver only
 * carries messages and every rule of the cycle is testable without a node.
 *
 * Membership changes are decided on gossip (`onGossip`), and only while the cluster is healthy.
 */
import type { AutoScavengeEvent, NodeScavengeResult } from "./events.js"
import { isHealthy, memberOf, type ClusterView } from "./ClusterView.js"
import { nodesMissingFrom, sameNode, type NodeId } from "./NodeId.js"
import type { NextOccurrence } from "./Schedule.js"
import { remainingMembers, type AutoScavengeState } from "./State.js"

export type Step =
  | { readonly _tag: "Wait"; readonly reason: string | undefined }
  | { readonly _tag: "Emit"; readonly events: ReadonlyArray<AutoScavengeEvent> }
  /** The designated node is this leader in a cluster: hand leadership over, then scavenge it as a follower. */
  | { readonly _tag: "Resign" }
  | { readonly _tag: "StartNodeScavenge"; readonly node: NodeId }
  | { readonly _tag: "PollNodeScavenge"; readonly node: NodeId; readonly scavengeId: string }
  /** `scavengeId` undefined: stop whatever runs there (the start may have happened without our knowing). */
  | { readonly _tag: "StopNodeScavenge"; readonly node: NodeId; readonly scavengeId: string | undefined }

export interface AssessContext {
  readonly view: ClusterView
  readonly now: number
  readonly next: NextOccurrence
  /** The id a cycle started now gets. */
  readonly newClusterScavengeId: () => string
}

const wait = (reason?: string): Step => ({ _tag: "Wait", reason })
const emit = (...events: ReadonlyArray<AutoScavengeEvent>): Step => ({ _tag: "Emit", events })

/** The next node of the cycle: the follower furthest behind; the leader only when no one else is left. */
export const nextCandidate = (remaining: ReadonlyArray<NodeId>, view: ClusterView): NodeId | undefined => {
  let best: { node: NodeId; checkpoint: number } | undefined
  let leader: NodeId | undefined
  for (const node of remaining) {
    const member = memberOf(view, node)
    if (member === undefined) continue
    if (member.isLeader) {
      leader = node
      continue
    }
    if (best === undefined || member.writerCheckpoint < best.checkpoint)
      best = { node, checkpoint: member.writerCheckpoint }
  }
  return best?.node ?? (remaining.length === 1 ? leader : undefined)
}

export const assess = (state: AutoScavengeState, ctx: AssessContext): Step => {
  const { view, now } = ctx
  switch (state.status) {
    case "NotConfigured":
    case "PausedWhileIdle":
    case "PausedWhileScavengingCluster":
      return wait()
    case "Waiting": {
      if (state.schedule === undefined) return wait()
      const due = ctx.next(state.schedule, state.anchor ?? state.startingPoint ?? now)
      if (due === undefined || now < due) return wait()
      if (!isHealthy(view)) return wait("Waiting for a healthy cluster")
      return emit({
        _tag: "ClusterScavengeStarted",
        clusterScavengeId: ctx.newClusterScavengeId(),
        members: view.members.map((m) => m.nodeId),
        startedAt: now
      })
    }
    case "ContinuingClusterScavenge": {
      const cycle = state.clusterScavenge
      if (cycle === undefined) return wait()
      if (!isHealthy(view)) return wait("Waiting for a healthy cluster")
      const remaining = remainingMembers(cycle)
      if (remaining.length === 0)
        return emit({
          _tag: "ClusterScavengeCompleted",
          clusterScavengeId: cycle.id,
          members: cycle.members,
          completedAt: now
        })
      const candidate = nextCandidate(remaining, view)
      if (candidate === undefined) return wait("No member left to scavenge is in gossip")
      return emit({ _tag: "NodeDesignated", nodeId: candidate, designatedAt: now })
    }
    case "StartingNodeScavenge": {
      const node = state.designated
      if (node === undefined) return wait()
      if (sameNode(node, view.self) && view.clusterSize > 1) return { _tag: "Resign" }
      return { _tag: "StartNodeScavenge", node }
    }
    case "MonitoringNodeScavenge": {
      const node = state.designated
      if (node === undefined || state.nodeScavengeId === undefined) return wait()
      return { _tag: "PollNodeScavenge", node, scavengeId: state.nodeScavengeId }
    }
    case "Pausing": {
      const node = state.designated
      if (node === undefined) return emit({ _tag: "Paused", pausedAt: now })
      return { _tag: "StopNodeScavenge", node, scavengeId: state.nodeScavengeId }
    }
  }
}

export type StartOutcome =
  { readonly _tag: "Started"; readonly scavengeId: string } | { readonly _tag: "Failed"; readonly message: string }

/** A started scavenge is recorded; a failed start (unreachable, already running) is retried next tick. */
export const afterStart = (
  state: AutoScavengeState,
  node: NodeId,
  outcome: StartOutcome,
  now: number
): ReadonlyArray<AutoScavengeEvent> =>
  outcome._tag === "Started" && state.status === "StartingNodeScavenge" && sameNode(node, state.designated)
    ? [{ _tag: "NodeScavengeStarted", nodeId: node, scavengeId: outcome.scavengeId, startedAt: now }]
    : []

export type PollOutcome =
  /** The node did not answer: retried next tick; nothing is cancelled. */
  | { readonly _tag: "Unreachable"; readonly message: string }
  /** What the node's `GET /admin/scavenge/last` said (its id may differ from ours: the status is used). */
  | {
      readonly _tag: "Last"
      readonly scavengeId: string
      readonly result: "InProgress" | NodeScavengeResult
    }
  /**
   * The node knows no last scavenge (it restarted): what the scavenge's history stream recorded as its
   * completion, if anything.
   */
  | { readonly _tag: "Restarted"; readonly recorded: NodeScavengeResult | "Interrupted" | undefined }

export const afterPoll = (
  state: AutoScavengeState,
  node: NodeId,
  outcome: PollOutcome,
  now: number
): ReadonlyArray<AutoScavengeEvent> => {
  if (state.status !== "MonitoringNodeScavenge" || !sameNode(node, state.designated)) return []
  const completed = (result: NodeScavengeResult): ReadonlyArray<AutoScavengeEvent> => [
    { _tag: "NodeScavengeCompleted", nodeId: node, completedAt: now, result }
  ]
  switch (outcome._tag) {
    case "Unreachable":
      return []
    case "Last":
      return outcome.result === "InProgress" ? [] : completed(outcome.result)
    case "Restarted":
      // Interrupted or never completed: start it again; it resumes from its own checkpoint.
      return outcome.recorded === undefined || outcome.recorded === "Interrupted"
        ? [{ _tag: "NodeDesignated", nodeId: node, designatedAt: now }]
        : completed(outcome.recorded)
  }
}

export type StopOutcome = "Stopped" | "NotFound" | { readonly failed: string }

/** Stopped, or nothing to stop: paused. Anything else is retried next tick. */
export const afterStop = (
  state: AutoScavengeState,
  outcome: StopOutcome,
  now: number
): ReadonlyArray<AutoScavengeEvent> =>
  state.status === "Pausing" && (outcome === "Stopped" || outcome === "NotFound")
    ? [{ _tag: "Paused", pausedAt: now }]
    : []

/**
 * Gossip on the leader: while the cluster is healthy and a cycle exists (paused or not), members that came
 * or went are recorded. A member gone while it was designated is dropped from the cycle unstopped.
 */
export const onGossip = (state: AutoScavengeState, view: ClusterView): ReadonlyArray<AutoScavengeEvent> => {
  const cycle = state.clusterScavenge
  if (cycle === undefined || !isHealthy(view)) return []
  const inGossip = view.members.map((m) => m.nodeId)
  const added = nodesMissingFrom(inGossip, cycle.members)
  const removed = nodesMissingFrom(cycle.members, inGossip)
  return added.length === 0 && removed.length === 0 ? [] : [{ _tag: "ClusterMembersChanged", added, removed }]
}
