// @vellum/storage: one node's database — transaction log, table index, stream rules, the EventStore service.
export * from "./errors.js"
export * from "./EventStore.js"
export * from "./streams/names.js"
export * from "./streams/metadata.js"
export type { EventRecord, LogRecord, NewRecord } from "./log/records.js"
export { RecordKind, EventFlags, encodeRecord, decodeRecord, framedLength } from "./log/records.js"
export type { WriteResult } from "./streams/Writer.js"
export { streamHash64, type HashFn, type StreamHash } from "./tableindex/StreamHash.js"
