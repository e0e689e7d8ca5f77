/**
 * The definitions the system projections are created with: continuous, emitting, checkpointed, run as
 * `$system`, disabled (the node enables them when it starts with `--start-standard-projections`), with the
 * reference's native handler type as their handler type.
 */
import { emptyDefinition, projectionSubsystemVersion, type DefinitionRecord } from "../persisted/definitionRecord.js"
import type { SystemProjectionDefinition } from "../system/index.js"

/** The reference's handler type names (`native:` + the .NET type). */
const nativeTypes: Readonly<Record<string, string>> = {
  $streams: "IndexStreams",
  $stream_by_category: "CategorizeStreamByPath",
  $by_category: "CategorizeEventsByStreamPath",
  $by_event_type: "IndexEventsByEventType",
  $by_correlation_id: "ByCorrelationId"
}

export const systemAccount = { name: "$system", roles: [] } as const

export const systemDefinitionRecord = (projection: SystemProjectionDefinition, version: number): DefinitionRecord => ({
  ...emptyDefinition,
  handlerType: `native:EventStore.Projections.Core.Standard.${nativeTypes[projection.name] ?? projection.name}`,
  query: projection.defaultQuery,
  mode: "Continuous",
  enabled: false,
  emitEnabled: true,
  checkpointsDisabled: false,
  trackEmittedStreams: false,
  epoch: -1,
  version,
  runAs: systemAccount,
  projectionSubsystemVersion
})
