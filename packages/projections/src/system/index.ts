/**
 * The five system projections, native and pure: each turns one `$all` event into the writes it asks
 * for. The engine feeds them, stamps and writes their output, and checkpoints them.
 */
import { Either } from "effect"
import { byCategory } from "./byCategory.js"
import { byCorrelationId } from "./byCorrelationId.js"
import { byEventType } from "./byEventType.js"
import { streamByCategory } from "./streamByCategory.js"
import { streams } from "./streams.js"
import { SystemProjectionConfigInvalid } from "./SystemProjectionConfigInvalid.js"
import type { SystemProjectionDefinition, SystemProjectionHandler } from "./SystemProjection.js"

export { byCategory, byCorrelationId, byEventType, streamByCategory, streams }
export { byEventTypeCheckpoint } from "./byEventType.js"
export { eventTimestamp } from "./byCorrelationId.js"
export { SystemProjectionConfigInvalid }
export type { SystemProjectionDefinition, SystemProjectionHandler }
export { fromEventRecord, readsEvent, type SystemEvent } from "./SystemEvent.js"
export { extraMetadataJson, type SystemWrite } from "./SystemWrite.js"

/** In the order the reference creates them. */
export const SystemProjections: ReadonlyArray<SystemProjectionDefinition> = [
  streams,
  streamByCategory,
  byCategory,
  byEventType,
  byCorrelationId
]

export const isSystemProjectionName = (name: string): boolean => SystemProjections.some((p) => p.name === name)

/** The handler of system projection `name` under `query`, or why that query faults it. */
export const configureSystemProjection = (
  definition: SystemProjectionDefinition,
  query: string
): Either.Either<SystemProjectionHandler, SystemProjectionConfigInvalid> =>
  Either.mapLeft(
    definition.configure(query),
    (message) => new SystemProjectionConfigInvalid({ projection: definition.name, message })
  )
