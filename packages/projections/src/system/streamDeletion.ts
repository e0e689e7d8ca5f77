/** Recognises the event that deletes a stream: a hard delete's tombstone or a soft delete's `$tb`. */
import { EventTypes, isMetastream, isSoftDeleted, originalStreamOf, parseMetadata } from "@vellum/storage"
import type { SystemEvent } from "./SystemEvent.js"

/** The stream this event deletes, or undefined when it deletes none. */
export const deletedStreamOf = (event: SystemEvent): string | undefined => {
  if (isMetastream(event.stream)) {
    if (event.eventType !== EventTypes.Metadata) return undefined
    // Metadata that does not parse deletes nothing (the reference would fault the projection instead).
    return isSoftDeleted(parseMetadata(event.data, event.isJson)) ? originalStreamOf(event.stream) : undefined
  }
  return event.eventType === EventTypes.StreamDeleted ? event.stream : undefined
}
