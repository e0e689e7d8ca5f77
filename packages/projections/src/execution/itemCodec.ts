// How items cross into the sandbox and outcomes come back: one JSON text per batch, each item a positional array
// (the layout executionPrelude.ts reads), so a batch of small events costs a few short strings per event.
import type { EventRecord } from "@vellum/storage"
import type { EmittedWrite, HandlerItem, HandlerOutcome } from "../engine/ProjectionHandler.js"
import type { SourceItem } from "../sources/SourceReader.js"

const JSON_FLAG = 0x01

const quote = JSON.stringify
const textOrNull = (bytes: Uint8Array): string =>
  bytes.length === 0 ? "null" : quote(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("utf8"))

export const isJsonEvent = (event: EventRecord): boolean => (event.flags & JSON_FLAG) !== 0

/** The event as the envelope's fields: type, stream, number, id, JSON flag, data, metadata, link metadata, category. */
const eventFields = (item: SourceItem): string => {
  const event = item.event
  const link = item.link === undefined ? "null" : textOrNull(item.link.metadata)
  return (
    `[${quote(event.eventType)},${quote(event.stream)},${event.eventNumber},${quote(event.eventId.toLowerCase())},` +
    `${isJsonEvent(event) ? 1 : 0},${textOrNull(event.data)},${textOrNull(event.metadata)},${link},` +
    `${item.category === null ? "null" : quote(item.category)}]`
  )
}

const optional = (text: string | undefined): string => (text === undefined ? "null" : quote(text))

/** One item for `__projectionProcess`: [index, kind, partition, state, shared, event]. */
export const processItemJson = (item: HandlerItem, index: number): string =>
  `[${index},${item.source.kind === "deleted" ? 1 : 0},${quote(item.partition)},${optional(item.state)},` +
  `${optional(item.shared)},${item.source.kind === "deleted" ? "null" : eventFields(item.source)}]`

/** One item for `__projectionPartition`: [index, event]. */
export const partitionItemJson = (item: SourceItem, index: number): string => `[${index},${eventFields(item)}]`

/** What `Date` reads during an item: the event's creation time, in whole milliseconds. */
export const clockOf = (item: SourceItem): number => Math.floor(item.event.createdMicros / 1000)

/** Where `Math.random` starts for an item: its log position, folded to 32 bits (both halves count). */
export const seedOf = (item: SourceItem): number => {
  const position = item.logPosition
  const high = Math.floor(position / 0x1_0000_0000)
  return (position ^ Math.imul(high, 0x9e3779b1)) >>> 0
}

/** A fault an item reported from inside the sandbox. */
export interface ItemFault {
  readonly f: string
  readonly s: string
}

export const isItemFault = (value: unknown): value is ItemFault =>
  typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as ItemFault).f === "string"

const emittedWriteOf = (entry: unknown): EmittedWrite | undefined => {
  if (!Array.isArray(entry) || entry.length !== 5) return undefined
  const [stream, eventType, isJson, data, members] = entry as [unknown, unknown, unknown, unknown, unknown]
  if (typeof stream !== "string" || typeof eventType !== "string" || typeof data !== "string") return undefined
  if (!Array.isArray(members)) return undefined
  const extraMetadata: Array<readonly [string, string]> = []
  for (const member of members) {
    if (!Array.isArray(member) || typeof member[0] !== "string" || typeof member[1] !== "string") return undefined
    extraMetadata.push([member[0], member[1]])
  }
  return { stream, eventType, isJson: isJson === 1, data, extraMetadata }
}

/** An outcome as the prelude wrote it, or undefined when it is not one (only a tampered runtime gives that). */
export const outcomeOf = (value: unknown, biState: boolean): HandlerOutcome | undefined => {
  if (!Array.isArray(value) || value.length !== 6) return undefined
  const [state, shared, changed, result, emitted, created] = value as Array<unknown>
  if (typeof state !== "string" || !Array.isArray(emitted)) return undefined
  if (biState && typeof shared !== "string") return undefined
  if (result !== null && result !== 1 && typeof result !== "string") return undefined
  const writes: Array<EmittedWrite> = []
  for (const entry of emitted) {
    const write = emittedWriteOf(entry)
    if (write === undefined) return undefined
    writes.push(write)
  }
  const base = { state, stateChanged: changed === 1, emitted: writes, created: created === 1 }
  const withShared = biState ? { ...base, shared: shared as string } : base
  return changed === 1 ? { ...withShared, result: result === 1 ? state : (result as string | null) } : withShared
}

// ---- nesting: what the interpreter's parser can take is bounded by the host's stack, so deeper data is refused
// before it reaches the sandbox.

/** Deepest nesting of arrays and objects an event's data or metadata may have. */
export const MAX_EVENT_NESTING = 300

const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Whether JSON-ish text nests arrays and objects deeper than `limit` (strings are skipped). */
export const nestsDeeperThan = (bytes: Uint8Array, limit: number): boolean => {
  if (bytes.length <= limit) return false
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (inString) {
      if (b === BACKSLASH) i++
      else if (b === QUOTE) inString = false
    } else if (b === QUOTE) inString = true
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > limit) return true
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--
  }
  return false
}

/** Why an item cannot be handed to the sandbox, or undefined when it can. */
export const tooDeepReason = (item: SourceItem): string | undefined => {
  if (item.kind === "deleted") return undefined
  const event = item.event
  const part =
    isJsonEvent(event) && nestsDeeperThan(event.data, MAX_EVENT_NESTING)
      ? "data"
      : nestsDeeperThan(event.metadata, MAX_EVENT_NESTING)
        ? "metadata"
        : item.link !== undefined && nestsDeeperThan(item.link.metadata, MAX_EVENT_NESTING)
          ? "link metadata"
          : undefined
  return part === undefined
    ? undefined
    : `The ${part} of event ${event.eventNumber}@${event.stream} nests arrays and objects more than ` +
        `${MAX_EVENT_NESTING} levels deep, more than projections accept`
}
