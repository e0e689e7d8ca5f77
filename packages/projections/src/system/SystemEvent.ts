/**
 * The input of a system projection: one `$all` record as it lies in the log (a link is the link itself,
 * not its target). A hard delete shows as a `$streamDeleted` event in the stream itself (event number
 * long.MaxValue); a soft delete as a `$metadata` event in `$$stream` whose `$tb` is long.MaxValue.
 */
import {
  DeletedStreamNumber,
  EventFlags,
  EventTypes,
  LongMaxValueText,
  isMetastream,
  isSystemStream,
  originalStreamOf,
  utf8Text,
  type EventRecord
} from "@vellum/storage"

export interface SystemEvent {
  readonly stream: string
  /** DeletedStreamNumber for a tombstone. */
  readonly eventNumber: number
  readonly eventId: string
  readonly eventType: string
  readonly data: Uint8Array
  readonly metadata: Uint8Array
  readonly isJson: boolean
  readonly logPosition: number
  /** µs since the Unix epoch. */
  readonly createdMicros: number
}

export const fromEventRecord = (record: EventRecord): SystemEvent => ({
  stream: record.stream,
  eventNumber: record.eventNumber,
  eventId: record.eventId,
  eventType: record.eventType,
  data: record.data,
  metadata: record.metadata,
  isJson: (record.flags & EventFlags.Json) !== 0,
  logPosition: record.logPosition,
  createdMicros: record.createdMicros
})

export const isLink = (event: SystemEvent): boolean => event.eventType === EventTypes.LinkTo

/** The `{n}@{stream}` text a link carries. */
export const linkTargetOf = (event: SystemEvent): string => utf8Text(event.data)

/** An event number as the wire writes it: the tombstone's is long.MaxValue. */
export const eventNumberText = (eventNumber: number): string =>
  eventNumber === DeletedStreamNumber ? LongMaxValueText : String(eventNumber)

/** The `{n}@{stream}` text of a link to this event. */
export const pointerTo = (event: SystemEvent): string => `${eventNumberText(event.eventNumber)}@${event.stream}`

/**
 * Which `$all` events a system projection is fed: those of non-`$` streams and of the metastreams of
 * non-`$` streams; links only when it reads links.
 */
export const readsEvent = (event: SystemEvent, includeLinks: boolean): boolean => {
  if (!includeLinks && isLink(event)) return false
  if (!isSystemStream(event.stream)) return true
  return isMetastream(event.stream) && !isSystemStream(originalStreamOf(event.stream))
}
