// The streams a projection owns and the records in them, as pure codecs.
export * from "./PersistedEvent.js"
export * from "./streamNames.js"
export * from "./definitionRecord.js"
export * from "./checkpointTag.js"
export * from "./emittedMetadata.js"
