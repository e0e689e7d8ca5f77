/**
 * The auto-scavenge protocol on the members' internal channel: the leader starts, watches and stops a
 * member's node scavenge, and a member passes a user's command to the leader. One JSON request, one JSON
 * answer. A malformed message is a defect of the sender (the receiver gives no answer, as if lost).
 */
import type { ScavengeProgress } from "@vellum/scavenge"
import type { AutoScavengeReply } from "../AutoScavenge.js"
import type { UserCommand } from "../domain/commands.js"
import { parseNode } from "../domain/codec.js"
import type { NodeId } from "../domain/NodeId.js"

/**
 * A scavenge call names the member the leader means (its HTTP endpoint, as auto-scavenge names members): a
 * member replaced by a node at another endpoint keeps its internal address, and the new node must not take
 * calls meant for the old one.
 */
export type NodeAdminRequest =
  | { readonly op: "startScavenge"; readonly node: NodeId }
  | { readonly op: "lastScavenge"; readonly node: NodeId }
  /** "current" stops whatever runs. */
  | { readonly op: "stopScavenge"; readonly node: NodeId; readonly scavengeId: string }
  | { readonly op: "command"; readonly command: UserCommand }

export type LastResult = "Unknown" | "InProgress" | "Success" | "Stopped" | "Errored"

export type NodeAdminAnswer =
  | { readonly op: "startScavenge"; readonly started: { readonly scavengeId: string } | { readonly refused: string } }
  | {
      readonly op: "lastScavenge"
      readonly scavengeId: string
      readonly result: LastResult
      /** Where the running scavenge is, if one runs. */
      readonly progress: ScavengeProgress | undefined
    }
  | { readonly op: "stopScavenge"; readonly outcome: "Stopped" | "NotFound" }
  | { readonly op: "command"; readonly reply: AutoScavengeReply }

const encoder = new TextEncoder()
const decoder = new TextDecoder()

export const encodeMessage = (message: NodeAdminRequest | NodeAdminAnswer): Uint8Array =>
  encoder.encode(JSON.stringify(message))

const parse = (bytes: Uint8Array): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes))
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

const Commands: ReadonlyArray<string> = ["Configure", "Pause", "Resume", "GetStatus"]

const isCommand = (value: unknown): value is UserCommand => {
  if (typeof value !== "object" || value === null) return false
  const tag = (value as { _tag?: unknown })._tag
  if (typeof tag !== "string" || !Commands.includes(tag)) return false
  return tag !== "Configure" || typeof (value as { schedule?: unknown }).schedule === "string"
}

export const decodeRequest = (bytes: Uint8Array): NodeAdminRequest | undefined => {
  const m = parse(bytes)
  const node = parseNode(m?.node)
  switch (m?.op) {
    case "startScavenge":
    case "lastScavenge":
      return node === undefined ? undefined : { op: m.op, node }
    case "stopScavenge":
      return typeof m.scavengeId === "string" && node !== undefined
        ? { op: "stopScavenge", node, scavengeId: m.scavengeId }
        : undefined
    case "command":
      return isCommand(m.command) ? { op: "command", command: m.command } : undefined
    default:
      return undefined
  }
}

/** The answer to `request`, or undefined when it is not one (a peer of another version, a defect). */
export const decodeAnswer = <Op extends NodeAdminRequest["op"]>(
  op: Op,
  bytes: Uint8Array
): Extract<NodeAdminAnswer, { op: Op }> | undefined => {
  const m = parse(bytes)
  return m?.op === op ? (m as unknown as Extract<NodeAdminAnswer, { op: Op }>) : undefined
}
