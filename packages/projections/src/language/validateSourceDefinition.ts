import { Either } from "effect"
import { SourceDefinitionInvalid } from "./languageErrors.js"
import type { SourceDefinition } from "./SourceDefinition.js"

// The checks made when a projection is prepared to run, in the reference's order: the first that fails is the
// fault. A script that compiles (even an empty one) may still declare something that cannot be read.

const MIN_REORDER_LAG_MS = 50

const problemOf = (d: SourceDefinition): string | undefined => {
  const hasStreams = d.streams.length > 0
  const hasCategories = d.categories.length > 0
  const hasEvents = d.events.length > 0
  if (!d.allStreams && !hasCategories && !hasStreams) return "None of streams and categories are included"
  if (!d.allEvents && !hasEvents) return "None of events are included"
  if (hasStreams && hasCategories) return "Streams and categories cannot be included in a filter at the same time"
  if (d.allStreams && (hasCategories || hasStreams)) return "Both FromAll and specific categories/streams cannot be set"
  if (d.allEvents && hasEvents) return "Both AllEvents and specific event filters cannot be set"
  if (d.byStream && hasStreams) return "foreachStream projections are not supported on stream based sources"
  if (d.options.reorderEvents) {
    if (d.allStreams) return "Event reordering cannot be used with fromAll()"
    if (d.streams.length < 2) return "Event reordering is only available in fromStreams([]) projections"
    if (d.options.processingLag < MIN_REORDER_LAG_MS) return "Event reordering requires processing lag at least of 50ms"
  }
  if (d.options.handlesDeletedNotifications && !d.byStream)
    return "Deleted stream notifications are only supported with foreachStream()"
  return undefined
}

/** The definition if a projection can run it, else the reference's reason it cannot. */
export const validateSourceDefinition = (
  definition: SourceDefinition
): Either.Either<SourceDefinition, SourceDefinitionInvalid> => {
  const problem = problemOf(definition)
  return problem === undefined
    ? Either.right(definition)
    : Either.left(new SourceDefinitionInvalid({ message: problem }))
}
