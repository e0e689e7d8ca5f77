/**
 * What one record read from a source becomes: an event for the handlers, a deletion notice, or nothing (the
 * source, type and content filters, in that order, as the reference applies them before any handler runs).
 * Pure: the readers decide the order and the positions, this decides what each record is.
 */
import {
  EventFlags,
  EventTypes,
  isMetastream,
  isSystemStream,
  originalStreamOf,
  parseLinkTarget,
  utf8Text,
  type EventRecord,
  type ResolvedEvent
} from "@vellum/storage"
import type { SourceDefinition } from "../language/SourceDefinition.js"
import { parseJsonObject } from "../persisted/json.js"
import { deletedStreamOf } from "../system/streamDeletion.js"
import { fromEventRecord, readsEvent } from "../system/SystemEvent.js"

/** How a source reads: its definition plus the two choices its runner makes. */
export interface SourceRules {
  readonly definition: SourceDefinition
  /** Drop JSON-flagged events whose data is empty or no JSON (off for system projections). */
  readonly validateContent: boolean
  /** Give deletions of source streams as `deleted` items (`foreachStream` with a `$deleted` handler). */
  readonly deletions: boolean
}

/** A record's outcome, before the reader gives it a position. */
export type Classified =
  | { readonly kind: "skip" }
  | {
      readonly kind: "event" | "deleted"
      readonly event: EventRecord
      readonly link: EventRecord | undefined
      readonly partitionStream: string
    }

const skip: Classified = { kind: "skip" }

const isJsonFlagged = (record: EventRecord): boolean => (record.flags & EventFlags.Json) !== 0

/** An event flagged JSON must carry a JSON value; an empty body is no JSON. */
export const hasValidContent = (record: EventRecord): boolean => {
  if (!isJsonFlagged(record)) return true
  if (record.data.length === 0) return false
  try {
    JSON.parse(utf8Text(record.data))
    return true
  } catch {
    return false
  }
}

const passesType = (rules: SourceRules, eventType: string): boolean =>
  rules.definition.allEvents || rules.definition.events.includes(eventType)

const passesContent = (rules: SourceRules, record: EventRecord): boolean =>
  !rules.validateContent || hasValidContent(record)

/** `x` for an event of `$$x`, else the event's stream. */
const streamPartitionOf = (stream: string): string => (isMetastream(stream) ? originalStreamOf(stream) : stream)

/**
 * A record of `$all`, as it lies (links are not resolved). With only some event types handled the reference
 * reads the event-type indexes, which hold events of non-`$` streams only (no metastreams) and never a
 * deletion as an event; reading everything, it takes non-`$` streams and the metastreams of non-`$` streams.
 * A deletion is an event unless deletions are notified, then it is a notice and never an event.
 */
export const classifyAllRecord = (rules: SourceRules, record: EventRecord): Classified => {
  const { definition } = rules
  const includeLinks = definition.options.includeLinks
  const isLink = record.eventType === EventTypes.LinkTo
  const deleted = isLink ? undefined : deletedStreamOf(fromEventRecord(record))
  if (deleted !== undefined && rules.deletions) {
    // Only deletions of streams a projection can read: a `$` stream is never a source partition.
    return isSystemStream(deleted)
      ? skip
      : { kind: "deleted", event: record, link: undefined, partitionStream: deleted }
  }
  const byType = !definition.allEvents
  const inSource = byType
    ? !isSystemStream(record.stream) && (includeLinks || !isLink)
    : readsEvent(fromEventRecord(record), includeLinks)
  if (!inSource || (byType && deleted !== undefined)) return skip
  if (!passesType(rules, record.eventType) || !passesContent(rules, record)) return skip
  return { kind: "event", event: record, link: undefined, partitionStream: streamPartitionOf(record.stream) }
}

/** A link's metadata members (links written by projections carry `$o`, and `$deleted` for a deletion). */
const linkMetadataOf = (link: EventRecord): Record<string, unknown> | undefined =>
  link.metadata.length === 0 ? undefined : parseJsonObject(utf8Text(link.metadata))

/** The stream a deletion link announces: its `$o`, else the stream its target lies in. */
const deletedByLink = (link: EventRecord, metadata: Record<string, unknown>): string | undefined => {
  if (typeof metadata["$o"] === "string") return metadata["$o"]
  const target = parseLinkTarget(link.data)
  return target !== undefined && target !== "unreadable" ? streamPartitionOf(target.stream) : undefined
}

/**
 * A record of a source stream, links resolved. A single category takes only links (what `$by_category`
 * wrote). A link whose target cannot be read is dropped; a deletion (a link marked `$deleted`, or a deletion
 * record reached) is never an event, only a notice when deletions are notified. The partition is the link's
 * `$o` when it names one, else the event's stream (`x` for `$$x`).
 */
export const classifyStreamRecord = (rules: SourceRules, resolved: ResolvedEvent, linksOnly: boolean): Classified => {
  const { link, event } = resolved
  if (linksOnly && link === undefined) return skip
  const metadata = link === undefined ? undefined : linkMetadataOf(link)
  if (link !== undefined && metadata !== undefined && "$deleted" in metadata) {
    const deleted = deletedByLink(link, metadata)
    return rules.deletions && deleted !== undefined
      ? { kind: "deleted", event: event ?? link, link, partitionStream: deleted }
      : skip
  }
  if (event === undefined) return skip
  const deleted = deletedStreamOf(fromEventRecord(event))
  if (deleted !== undefined) return rules.deletions ? { kind: "deleted", event, link, partitionStream: deleted } : skip
  if (!passesType(rules, event.eventType) || !passesContent(rules, event)) return skip
  const original = metadata?.["$o"]
  const partitionStream = typeof original === "string" ? original : streamPartitionOf(event.stream)
  return { kind: "event", event, link, partitionStream }
}
