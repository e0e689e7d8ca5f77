import { Schema } from "effect"

// What a projection's script declares, as the reference shows it (`definition` of a query with its config) and
// keeps it with the projection: where its events come from, which events, how they are partitioned, and the
// options that shape its results.

export const SourceDefinitionOptions = Schema.Struct({
  /** The root result stream, from `outputTo` or the `resultStreamName` option (null: the default name). */
  resultStreamName: Schema.NullOr(Schema.String),
  /** The per-partition result stream pattern from `outputTo` (`{0}` is the partition). */
  partitionResultStreamNamePattern: Schema.NullOr(Schema.String),
  reorderEvents: Schema.Boolean,
  /** Milliseconds of the reordering window. */
  processingLag: Schema.Number,
  isBiState: Schema.Boolean,
  definesStateTransform: Schema.Boolean,
  producesResults: Schema.Boolean,
  /** `when` was called (`on_event`/`on_any` alone do not count). */
  definesFold: Schema.Boolean,
  handlesDeletedNotifications: Schema.Boolean,
  /** `$includeLinks`: `fromAll` sees link events, unresolved. */
  includeLinks: Schema.Boolean
})
export type SourceDefinitionOptions = typeof SourceDefinitionOptions.Type

export const SourceDefinition = Schema.Struct({
  /** Every event type, or only `events`. */
  allEvents: Schema.Boolean,
  /** `fromAll`. */
  allStreams: Schema.Boolean,
  /** `foreachStream`: a partition per source stream. */
  byStream: Schema.Boolean,
  /** `partitionBy`. */
  byCustomPartitions: Schema.Boolean,
  /** A single `fromCategory`. */
  categories: Schema.Array(Schema.String),
  /** The event types with their own handler, in registration order. */
  events: Schema.Array(Schema.String),
  /** `fromStream`, `fromStreams`, and several categories as their `$ce-` streams. */
  streams: Schema.Array(Schema.String),
  options: SourceDefinitionOptions
})
export type SourceDefinition = typeof SourceDefinition.Type

/** The definition of a script that declares nothing: every event, no source, no options set. */
export const emptySourceDefinition: SourceDefinition = {
  allEvents: true,
  allStreams: false,
  byStream: false,
  byCustomPartitions: false,
  categories: [],
  events: [],
  streams: [],
  options: {
    resultStreamName: null,
    partitionResultStreamNamePattern: null,
    reorderEvents: false,
    processingLag: 0,
    isBiState: false,
    definesStateTransform: false,
    producesResults: false,
    definesFold: false,
    handlesDeletedNotifications: false,
    includeLinks: false
  }
}
