/**
 * What the service shows of a projection: its statistics, its query and config documents, and a partition's
 * state and result (from its runner, else from its last checkpoint).
 */
import { Effect } from "effect"
import { resultStream } from "../persisted/streamNames.js"
import { figuresOf, type Lifecycle, type Managed } from "./projectionLifecycle.js"
import { noFigures, statusText } from "./projectionStatus.js"
import type { ProjectionConfig, ProjectionQuery, ProjectionStatistics, StateView } from "./Projections.js"
import type { RunnerFactory } from "./RunnerFactory.js"

/** Version and epoch are -1 until there are figures (as the reference shows before its worker reported). */
export const statisticsOf = (m: Managed): ProjectionStatistics => {
  const figures = figuresOf(m)
  const version = m.active?.runner.spec.version
  return {
    name: m.name,
    mode: m.record.mode,
    status: statusText(m.state, figures, m.record.enabled),
    stateReason: m.state === "Faulted" ? m.faultReason : "",
    enabled: m.record.enabled,
    version: figures === undefined ? -1 : (version?.version ?? m.record.version ?? 0),
    epoch: figures === undefined ? -1 : (version?.epoch ?? m.record.epoch ?? -1),
    resultStreamName: m.definition?.options.resultStreamName ?? null,
    runner: figures ?? noFigures
  }
}

export const queryOf = (m: Managed): ProjectionQuery => {
  const r = m.record
  return {
    name: m.name,
    query: r.query ?? "",
    mode: r.mode,
    emitEnabled: r.emitEnabled === true,
    trackEmittedStreams: r.trackEmittedStreams === true,
    checkpointsEnabled: r.checkpointsDisabled !== true,
    definition: r.sourceDefinition,
    resultStreamName: m.definition === undefined ? "" : resultStream(m.name, m.definition.options.resultStreamName)
  }
}

export const configOf = (m: Managed): ProjectionConfig => {
  const r = m.record
  return {
    emitEnabled: r.emitEnabled === true,
    trackEmittedStreams: r.trackEmittedStreams === true,
    checkpointAfterMs: r.checkpointAfterMs,
    checkpointHandledThreshold: r.checkpointHandledThreshold,
    checkpointUnhandledBytesThreshold: r.checkpointUnhandledBytesThreshold,
    pendingEventsThreshold: r.pendingEventsThreshold,
    maxWriteBatchLength: r.maxWriteBatchLength,
    maxAllowedWritesInFlight: r.maxAllowedWritesInFlight,
    projectionExecutionTimeout: r.projectionExecutionTimeout ?? null
  }
}

export interface PartitionTexts {
  readonly state: StateView
  readonly result: StateView
}

export const partitionOf = (
  m: Managed,
  partition: string,
  factory: RunnerFactory,
  lifecycle: Lifecycle
): Effect.Effect<PartitionTexts> =>
  Effect.gen(function* () {
    // Nothing ran or was loaded yet (preparing, or faulted before it had a definition): nothing to show.
    const definition = m.definition
    if (m.state === "Preparing" || m.state === "Starting" || (m.active === undefined && definition === undefined))
      return { state: { text: "", position: undefined }, result: { text: "", position: undefined } }
    const view =
      m.active !== undefined
        ? yield* m.active.runner.partition(partition)
        : yield* factory.storedPartition(lifecycle.specOf(m, definition!), partition)
    // A completed query answers without a position, as the reference does.
    const position = m.state === "Completed" ? undefined : view.position
    return { state: { text: view.state, position }, result: { text: view.result ?? "", position } }
  })
