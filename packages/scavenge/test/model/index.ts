// The pure reference model of node scavenging and its test-log builder.
export * from "./types.js"
export { scavengeModel, executeWithThreshold, keptWithThreshold, type ThresholdExecution } from "./scavengeModel.js"
export { parseScavengeMetadata } from "./scavengeMetadata.js"
export { LogBuilder, type LogBuilderOptions, type EventOptions, type ScavengePointOptions } from "./logBuilder.js"
export { keptEventNumbers, indexedEventNumbers } from "./inspect.js"
