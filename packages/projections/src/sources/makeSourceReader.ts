/** The reader of a projection's source, chosen by what its definition selects. */
import type { EventStoreService } from "@vellum/storage"
import type { SourceDefinition } from "../language/SourceDefinition.js"
import { makeAllSourceReader } from "./allSourceReader.js"
import type { SourceReader } from "./SourceReader.js"
import { makeStreamsSourceReader } from "./streamsSourceReader.js"

export interface SourceReaderOptions {
  /** Drop JSON-flagged events whose data is empty or no JSON (system projections read with this off). */
  readonly validateContent: boolean
  /** `foreachStream` with a `$deleted` handler: deletions of source streams come as `deleted` items. */
  readonly deletions: boolean
}

/** A definition that passed validation: `fromAll`, one category, or one or more streams. */
export const makeSourceReader = (
  store: EventStoreService,
  definition: SourceDefinition,
  options: SourceReaderOptions
): SourceReader => {
  const rules = { definition, validateContent: options.validateContent, deletions: options.deletions }
  if (definition.allStreams) return makeAllSourceReader(store, rules)
  if (definition.categories.length === 1) {
    const category = definition.categories[0]!
    return makeStreamsSourceReader(store, rules, { streams: [`$ce-${category}`], category })
  }
  return makeStreamsSourceReader(store, rules, { streams: [...new Set(definition.streams)], category: null })
}
