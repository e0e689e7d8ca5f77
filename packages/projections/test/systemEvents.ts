import { Either } from "effect"
import { DeletedStreamNumber } from "@vellum/storage"
import {
  configureSystemProjection,
  extraMetadataJson,
  type SystemEvent,
  type SystemProjectionDefinition,
  type SystemProjectionHandler,
  type SystemWrite
} from "../src/index.js"

const bytes = (text: string): Uint8Array => Buffer.from(text, "utf8")

export const anEvent = (stream: string, eventNumber: number, options: Partial<SystemEvent> = {}): SystemEvent => ({
  stream,
  eventNumber,
  eventId: "5f2c1a7e-0000-4000-8000-000000000001",
  eventType: "thing-happened",
  data: bytes("{}"),
  metadata: bytes(""),
  isJson: true,
  logPosition: 1000,
  createdMicros: 1_700_000_000_123_456,
  ...options
})

export const aLink = (stream: string, eventNumber: number, target: string, metadata = ""): SystemEvent =>
  anEvent(stream, eventNumber, { eventType: "$>", data: bytes(target), metadata: bytes(metadata), isJson: false })

export const aTombstone = (stream: string): SystemEvent =>
  anEvent(stream, DeletedStreamNumber, { eventType: "$streamDeleted", data: bytes(""), isJson: false })

export const aMetadataEvent = (stream: string, eventNumber: number, metadata: string): SystemEvent =>
  anEvent(`$$${stream}`, eventNumber, { eventType: "$metadata", data: bytes(metadata) })

export const withMetadata = (event: SystemEvent, metadata: string): SystemEvent => ({
  ...event,
  metadata: bytes(metadata)
})

export const handlerOf = (
  definition: SystemProjectionDefinition,
  query = definition.defaultQuery
): SystemProjectionHandler => Either.getOrThrow(configureSystemProjection(definition, query))

/** A write as one readable line: `stream eventType data metadata`. */
export const show = (write: SystemWrite): string =>
  `${write.stream} ${write.eventType} ${write.data} ${extraMetadataJson(write)}`

export const faultOf = (definition: SystemProjectionDefinition, query: string): string =>
  Either.match(configureSystemProjection(definition, query), {
    onLeft: (error) => `${error._tag} ${error.projection}: ${error.message}`,
    onRight: () => "configured"
  })
