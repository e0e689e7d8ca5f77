/**
 * A group's checkpoint, as the reference writes it to the group's checkpoint stream (streamNames.ts): a JSON
 * event whose data is the position as a JSON string (`"42"` for an event number, `"C:…/P:…"` on `$all`), no
 * metadata. Before the first checkpoint the stream gets metadata keeping two records, readable and writable
 * by admins only (its metadata readable by all).
 */
import type { PersistedEvent } from "./PersistedEvent.js"
import { checkpointEventType, legacyCheckpointEventType } from "./streamNames.js"

/** The checkpoint event for a position (an event number's text, or an `$all` position's). */
export const encodeCheckpoint = (position: string): PersistedEvent => ({
  eventType: checkpointEventType,
  isJson: true,
  data: JSON.stringify(position),
  metadata: ""
})

/** The checkpoint of a group on a stream: the event number last processed. */
export const encodeStreamCheckpoint = (eventNumber: number): PersistedEvent => encodeCheckpoint(String(eventNumber))

/** A checkpoint event's position, or undefined when the event is no checkpoint. */
export const decodeCheckpoint = (eventType: string, data: string): string | undefined => {
  if (eventType !== checkpointEventType && eventType !== legacyCheckpointEventType) return undefined
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return undefined
  }
  return typeof value === "string" ? value : undefined
}

/** A checkpoint of a group on a stream as its event number, or undefined. */
export const decodeStreamCheckpoint = (eventType: string, data: string): number | undefined => {
  const position = decodeCheckpoint(eventType, data)
  if (position === undefined || !/^-?\d+$/.test(position)) return undefined
  const eventNumber = Number(position)
  return Number.isSafeInteger(eventNumber) ? eventNumber : undefined
}

/** The checkpoint stream's metadata, written before its first checkpoint. */
export const checkpointStreamMetadata = `{"$maxCount":2,"$acl":{"$r":"$admins","$w":"$admins","$d":"$admins","$mr":"$all","$mw":"$admins"}}`
