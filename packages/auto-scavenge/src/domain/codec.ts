/**
 * The persisted form of auto-scavenge's events: the reference's stream names, event types and camelCase
 * JSON payloads, so tools that read these streams work unchanged. Times are written as ISO-8601 with
 * seven fraction digits and an offset (Vellum writes UTC: `+00:00`), and read back from any offset.
 */
import type { AutoScavengeEvent, NodeScavengeResult } from "./events.js"
import type { NodeId } from "./NodeId.js"

export const ConfigurationStream = "$auto-scavenge-configuration"
export const ScavengesStream = "$auto-scavenges"

export const EventTypes = {
  ConfigurationUpdated: "$configuration-updated",
  ClusterScavengeStarted: "$cluster-scavenge-started",
  NodeDesignated: "$node-designated",
  NodeScavengeStarted: "$node-scavenge-started",
  NodeScavengeCompleted: "$node-scavenge-completed",
  ClusterMembersChanged: "$cluster-members-changed",
  ClusterScavengeCompleted: "$cluster-scavenge-completed",
  PauseRequested: "$pause-requested",
  Paused: "$paused",
  Resumed: "$resumed"
} as const

export interface PersistedEvent {
  readonly eventType: string
  readonly data: string
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** `2025-03-28T17:00:14.1230000+00:00`: .NET's round-trip format of a UTC time. */
export const formatTime = (millis: number): string => {
  const d = new Date(millis)
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}0000+00:00`
  )
}

/** ISO-8601 with its offset (or Z): without one, the time would be read in the reading machine's zone. */
const IsoTimeWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

const parseTime = (value: unknown): number | undefined => {
  if (typeof value !== "string" || !IsoTimeWithOffset.test(value)) return undefined
  const millis = Date.parse(value)
  return Number.isNaN(millis) ? undefined : millis
}

/** A persisted `{"address": ..., "port": n}`, or undefined when it is not one. */
export const parseNode = (value: unknown): NodeId | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const { address, port } = value as Record<string, unknown>
  return typeof address === "string" && typeof port === "number" ? { address, port } : undefined
}

const parseNodes = (value: unknown): Array<NodeId> | undefined => {
  if (!Array.isArray(value)) return undefined
  const nodes = value.map(parseNode)
  return nodes.every((n) => n !== undefined) ? (nodes as Array<NodeId>) : undefined
}

const node = (n: NodeId) => ({ address: n.address, port: n.port })

/** The stream an event belongs to. `Initialized` is never written. */
export const streamOf = (event: AutoScavengeEvent): string | undefined =>
  event._tag === "ConfigurationUpdated"
    ? ConfigurationStream
    : event._tag === "Initialized"
      ? undefined
      : ScavengesStream

export const encodeEvent = (event: Exclude<AutoScavengeEvent, { _tag: "Initialized" }>): PersistedEvent => {
  const of = (payload: Record<string, unknown>): PersistedEvent => ({
    eventType: EventTypes[event._tag],
    data: JSON.stringify(payload)
  })
  switch (event._tag) {
    case "ConfigurationUpdated":
      return of({ schedule: event.schedule, updatedAt: formatTime(event.updatedAt) })
    case "ClusterScavengeStarted":
      return of({
        clusterScavengeId: event.clusterScavengeId,
        members: event.members.map(node),
        startedAt: formatTime(event.startedAt)
      })
    case "NodeDesignated":
      return of({ nodeId: node(event.nodeId), designatedAt: formatTime(event.designatedAt) })
    case "NodeScavengeStarted":
      return of({ nodeId: node(event.nodeId), scavengeId: event.scavengeId, startedAt: formatTime(event.startedAt) })
    case "NodeScavengeCompleted":
      return of({ nodeId: node(event.nodeId), completedAt: formatTime(event.completedAt), result: event.result })
    case "ClusterMembersChanged":
      return of({ added: event.added.map(node), removed: event.removed.map(node) })
    case "ClusterScavengeCompleted":
      return of({
        clusterScavengeId: event.clusterScavengeId,
        members: event.members.map(node),
        completedAt: formatTime(event.completedAt)
      })
    case "PauseRequested":
      return of({ requestedAt: formatTime(event.requestedAt) })
    case "Paused":
      return of({ pausedAt: formatTime(event.pausedAt) })
    case "Resumed":
      return of({ resumedAt: formatTime(event.resumedAt) })
  }
}

const Results: ReadonlyArray<string> = ["Success", "Stopped", "Errored"]

/** An event read back, or undefined for a type this version does not know or a payload it cannot read. */
export const decodeEvent = (eventType: string, data: string): AutoScavengeEvent | undefined => {
  let json: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(data)
    if (typeof parsed !== "object" || parsed === null) return undefined
    json = parsed as Record<string, unknown>
  } catch {
    return undefined
  }
  const str = (v: unknown) => (typeof v === "string" ? v : undefined)
  const all = <T extends Record<string, unknown>>(
    fields: T
  ): { [K in keyof T]: Exclude<T[K], undefined> } | undefined =>
    Object.values(fields).every((v) => v !== undefined) ? (fields as never) : undefined
  switch (eventType) {
    case EventTypes.ConfigurationUpdated: {
      const f = all({ schedule: str(json.schedule), updatedAt: parseTime(json.updatedAt) })
      return f && { _tag: "ConfigurationUpdated", ...f }
    }
    case EventTypes.ClusterScavengeStarted: {
      const f = all({
        clusterScavengeId: str(json.clusterScavengeId),
        members: parseNodes(json.members),
        startedAt: parseTime(json.startedAt)
      })
      return f && { _tag: "ClusterScavengeStarted", ...f }
    }
    case EventTypes.NodeDesignated: {
      const f = all({ nodeId: parseNode(json.nodeId), designatedAt: parseTime(json.designatedAt) })
      return f && { _tag: "NodeDesignated", ...f }
    }
    case EventTypes.NodeScavengeStarted: {
      const f = all({
        nodeId: parseNode(json.nodeId),
        scavengeId: str(json.scavengeId),
        startedAt: parseTime(json.startedAt)
      })
      return f && { _tag: "NodeScavengeStarted", ...f }
    }
    case EventTypes.NodeScavengeCompleted: {
      const result = str(json.result)
      const f = all({
        nodeId: parseNode(json.nodeId),
        completedAt: parseTime(json.completedAt),
        result: result !== undefined && Results.includes(result) ? (result as NodeScavengeResult) : undefined
      })
      return f && { _tag: "NodeScavengeCompleted", ...f }
    }
    case EventTypes.ClusterMembersChanged: {
      const f = all({ added: parseNodes(json.added), removed: parseNodes(json.removed) })
      return f && { _tag: "ClusterMembersChanged", ...f }
    }
    case EventTypes.ClusterScavengeCompleted: {
      const f = all({
        clusterScavengeId: str(json.clusterScavengeId),
        members: parseNodes(json.members),
        completedAt: parseTime(json.completedAt)
      })
      return f && { _tag: "ClusterScavengeCompleted", ...f }
    }
    case EventTypes.PauseRequested: {
      const f = all({ requestedAt: parseTime(json.requestedAt) })
      return f && { _tag: "PauseRequested", ...f }
    }
    case EventTypes.Paused: {
      const f = all({ pausedAt: parseTime(json.pausedAt) })
      return f && { _tag: "Paused", ...f }
    }
    case EventTypes.Resumed: {
      const f = all({ resumedAt: parseTime(json.resumedAt) })
      return f && { _tag: "Resumed", ...f }
    }
    default:
      return undefined
  }
}
