/**
 * Parked messages, as the reference writes them to the group's parked stream (streamNames.ts): each a link
 * (`$>`, not JSON) whose data is `{eventNumber}@{stream}` of the parked event (an unresolvable link's own
 * data as it was), with JSON metadata `{added, reason, subscriptionEventNumber}` (default values left out).
 * When parked messages are replayed the stream is truncated through its metadata, admins only.
 */
import { dotNetDate, field, parseObject, writeDotNetJson } from "./dotNetJson.js"
import type { PersistedEvent } from "./PersistedEvent.js"
import { linkEventType } from "./streamNames.js"

export interface ParkedMessage {
  /** The link's data: `linkData(…)` of the parked event, or an unresolvable link's data. */
  readonly linkData: string
  /** When it was parked (milliseconds since the epoch). */
  readonly addedMillis: number
  readonly reason: string
  /** The parked event's number in the group's own stream (a link's number when the group resolves links). */
  readonly subscriptionEventNumber: number
}

/** `{eventNumber}@{stream}`. */
export const linkData = (eventNumber: number, stream: string): string => `${eventNumber}@${stream}`

/** The target of a link's data, or undefined when it is no `{number}@{stream}`. */
export const parseLinkData = (data: string): { readonly eventNumber: number; readonly stream: string } | undefined => {
  const at = data.indexOf("@")
  if (at <= 0) return undefined
  const number = data.slice(0, at)
  if (!/^\d+$/.test(number) || !Number.isSafeInteger(Number(number))) return undefined
  return { eventNumber: Number(number), stream: data.slice(at + 1) }
}

export const encodeParkedMessage = (message: ParkedMessage): PersistedEvent => ({
  eventType: linkEventType,
  isJson: false,
  data: message.linkData,
  metadata: writeDotNetJson({
    members: [
      ["added", dotNetDate(message.addedMillis)],
      ["reason", message.reason],
      ["subscriptionEventNumber", message.subscriptionEventNumber]
    ]
  })
})

export interface ParkedMetadata {
  /** As written. */
  readonly added: string | undefined
  readonly reason: string | undefined
  readonly subscriptionEventNumber: number
}

/** A parked link's metadata, or undefined when it is not a JSON object. */
export const decodeParkedMetadata = (metadata: string): ParkedMetadata | undefined => {
  const record = parseObject(metadata)
  if (record === undefined) return undefined
  const added = field(record, "added")
  const reason = field(record, "reason")
  const number = field(record, "subscriptionEventNumber")
  return {
    added: typeof added === "string" ? added : undefined,
    reason: typeof reason === "string" ? reason : undefined,
    subscriptionEventNumber: typeof number === "number" && Number.isSafeInteger(number) ? number : 0
  }
}

/** The parked stream's metadata when its messages before `truncateBefore` have been replayed. */
export const parkedStreamMetadata = (truncateBefore: number): string =>
  `{"$tb":${truncateBefore},"$acl":{"$r":"$admins","$w":"$admins","$d":"$admins","$mr":"$admins","$mw":"$admins"}}`
