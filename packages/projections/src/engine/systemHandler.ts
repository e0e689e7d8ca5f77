/**
 * A system projection run by the engine like any other: its native handler behind the `ProjectionHandler`
 * contract (no state, no results, no partitions; its writes are what it emits) and its source (`fromAll`,
 * every event, links as the projection reads them).
 */
import { Effect, Either } from "effect"
import { emptySourceDefinition, type SourceDefinition } from "../language/SourceDefinition.js"
import type { SourceItem } from "../sources/SourceReader.js"
import { fromEventRecord, readsEvent } from "../system/SystemEvent.js"
import type { SystemProjectionDefinition } from "../system/SystemProjection.js"
import type { HandlerOutcome, ProjectionHandler } from "./ProjectionHandler.js"

/** The `$all` record as it lies in the log: the link itself when the item came through one. */
const recordOf = (item: SourceItem) => item.link ?? item.event

/** The handler a query (config) text gives, or the fault message the reference gives for it. */
export const systemProjectionHandler = (
  definition: SystemProjectionDefinition,
  query: string
): Either.Either<ProjectionHandler, string> =>
  Either.map(definition.configure(query), (handle) => ({
    partitionsOf: (items) => Effect.succeed(items.map(() => "")),
    process: (items) =>
      Effect.sync(() =>
        items.map((item): HandlerOutcome => {
          const event = fromEventRecord(recordOf(item.source))
          const writes = readsEvent(event, definition.includeLinks) ? handle(event) : []
          return {
            state: "",
            stateChanged: false,
            created: false,
            emitted: writes.map((write) => ({
              stream: write.stream,
              eventType: write.eventType,
              isJson: false,
              data: write.data,
              extraMetadata: write.extraMetadata
            }))
          }
        })
      ),
    forgetLiveState: () => {},
    memoryBytes: () => 0
  }))

/**
 * What a system projection reads: all of `$all`, every event type, links only when it handles them. Its
 * source must pass events through unvalidated (a JSON-flagged event with broken data is still a stream's
 * event to link).
 */
export const systemSourceDefinition = (definition: SystemProjectionDefinition): SourceDefinition => ({
  ...emptySourceDefinition,
  allStreams: true,
  options: { ...emptySourceDefinition.options, includeLinks: definition.includeLinks }
})
