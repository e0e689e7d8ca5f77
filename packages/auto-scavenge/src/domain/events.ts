/**
 * What auto-scavenge records: the events of its two streams, as the state machine applies them. Times are
 * milliseconds since the Unix epoch here; `codec.ts` writes them as the reference's ISO-8601 texts.
 *
 * `Initialized` is never written: it is applied last when a new leader loads the state, so that cycles
 * missed while no node led are skipped rather than run at once.
 */
import type { NodeId } from "./NodeId.js"

/** How a node scavenge ended, as the leader saw it. Any of them counts the node as done for the cycle. */
export type NodeScavengeResult = "Success" | "Stopped" | "Errored"

export type AutoScavengeEvent =
  | { readonly _tag: "ConfigurationUpdated"; readonly schedule: string; readonly updatedAt: number }
  | { readonly _tag: "Initialized"; readonly at: number }
  | {
      readonly _tag: "ClusterScavengeStarted"
      readonly clusterScavengeId: string
      readonly members: ReadonlyArray<NodeId>
      readonly startedAt: number
    }
  | { readonly _tag: "NodeDesignated"; readonly nodeId: NodeId; readonly designatedAt: number }
  | {
      readonly _tag: "NodeScavengeStarted"
      readonly nodeId: NodeId
      readonly scavengeId: string
      readonly startedAt: number
    }
  | {
      readonly _tag: "NodeScavengeCompleted"
      readonly nodeId: NodeId
      readonly completedAt: number
      readonly result: NodeScavengeResult
    }
  | {
      readonly _tag: "ClusterMembersChanged"
      readonly added: ReadonlyArray<NodeId>
      readonly removed: ReadonlyArray<NodeId>
    }
  | {
      readonly _tag: "ClusterScavengeCompleted"
      readonly clusterScavengeId: string
      readonly members: ReadonlyArray<NodeId>
      readonly completedAt: number
    }
  | { readonly _tag: "PauseRequested"; readonly requestedAt: number }
  | { readonly _tag: "Paused"; readonly pausedAt: number }
  | { readonly _tag: "Resumed"; readonly resumedAt: number }

export type EventTag = AutoScavengeEvent["_tag"]
