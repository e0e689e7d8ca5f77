/**
 * One batch of source items through the handler: the partition of each item, the states to load, the handler's
 * fold, and per outcome the checks (emit allowed, state size), the writes (emitted events and results, queued
 * with their cause) and the cache update. The handler keeps the live state of one partition, so a batch is cut
 * into segments in which no partition comes back after another one (its stored state would not be known yet).
 */
import { Clock, Effect, Either } from "effect"
import { parseJsonObject, utf8Text, type EventRecord, type EventStoreService } from "@vellum/storage"
import type { CheckpointTag } from "../persisted/checkpointTag.js"
import type { SourceBatch, SourceItem } from "../sources/SourceReader.js"
import { readPartitionCheckpointBefore, retryReads } from "./checkpointStreams.js"
import { emitNotAllowedReason, handlerFaultReason, stateSizeReason } from "./faultReasons.js"
import type { OutputWriter } from "./OutputWriter.js"
import { emptyEntry, type PartitionEntry } from "./PartitionCache.js"
import type { EmittedWrite, HandlerFault, HandlerItem, HandlerOutcome, ProjectionHandler } from "./ProjectionHandler.js"
import type { RunnerSpec } from "./ProjectionRunner.js"
import { producesRunningResults, runningResultWrites } from "./resultWrites.js"
import { runFault, type RunFault, type RunState } from "./RunState.js"

export interface BatchContext {
  readonly spec: RunnerSpec
  readonly store: EventStoreService
  readonly handler: ProjectionHandler
  readonly output: OutputWriter
  readonly state: RunState
}

/** `$correlationId` of an event's metadata, when it is a string. */
const correlationIdOf = (event: EventRecord): string | undefined => {
  if (event.metadata.length === 0) return undefined
  const value = parseJsonObject(utf8Text(event.metadata))?.$correlationId
  return typeof value === "string" ? value : undefined
}

const faultOf = (context: BatchContext, item: SourceItem, fault: HandlerFault): RunFault =>
  runFault(
    handlerFaultReason({
      name: context.spec.name,
      deletion: item.kind === "deleted",
      position: item.tag,
      eventType: item.event.eventType,
      message: fault.message,
      stack: fault.stack
    })
  )

/** Each item's partition ("" root, undefined: the item is skipped). */
const partitionsOf = (
  context: BatchContext,
  items: ReadonlyArray<SourceItem>
): Effect.Effect<ReadonlyArray<string | undefined>, RunFault> => {
  const definition = context.spec.definition
  if (definition.byStream) return Effect.succeed(items.map((item) => item.partitionStream))
  if (definition.byCustomPartitions)
    return Effect.mapError(context.handler.partitionsOf(items), (fault) => faultOf(context, items[fault.index]!, fault))
  return Effect.succeed(items.map(() => ""))
}

interface Routed {
  readonly item: SourceItem
  readonly partition: string
}

/**
 * Cuts the items so that within a segment a partition never comes back after another partition's items; for
 * bi-state, at every switch of partition (the shared state handed over with the next partition is the one
 * the previous item left).
 */
const segmentsOf = (routed: ReadonlyArray<Routed>, biState: boolean): ReadonlyArray<ReadonlyArray<Routed>> => {
  const segments: Array<Array<Routed>> = []
  let current: Array<Routed> = []
  let seen = new Set<string>()
  for (const entry of routed) {
    const previous = current[current.length - 1]?.partition
    if (previous !== undefined && previous !== entry.partition && (biState || seen.has(entry.partition))) {
      segments.push(current)
      current = []
      seen = new Set()
    }
    current.push(entry)
    seen.add(entry.partition)
  }
  if (current.length > 0) segments.push(current)
  return segments
}

/**
 * A partition's entry, loaded from its checkpoint stream when it is not cached (queries start it empty): the
 * checkpoint written before `first`, the partition's first item to process.
 */
const loadPartition = (
  context: BatchContext,
  partition: string,
  first: CheckpointTag
): Effect.Effect<PartitionEntry> => {
  const { spec, state } = context
  const cached = state.cache.get(partition)
  if (cached !== undefined) return Effect.succeed(cached)
  const load: Effect.Effect<PartitionEntry> =
    spec.stopOnEof || !spec.checkpointsEnabled
      ? Effect.succeed(emptyEntry())
      : Effect.map(
          retryReads(readPartitionCheckpointBefore(context.store, spec, partition, first)),
          ({ lastEventNumber, checkpoint }) =>
            checkpoint === undefined
              ? emptyEntry(lastEventNumber)
              : {
                  state: checkpoint.state,
                  result: checkpoint.result,
                  causedBy: checkpoint.tag,
                  dirty: false,
                  known: true,
                  checkpointStreamVersion: lastEventNumber
                }
        )
  return Effect.map(load, (entry) => {
    state.cache.set(partition, entry)
    // A state read from the store must reach the handler, whatever it holds live.
    if (state.livePartition === partition) state.livePartition = undefined
    return entry
  })
}

/** Applies one successful outcome: checks, writes, cache. */
const applyOutcome = (
  context: BatchContext,
  { item, partition }: Routed,
  outcome: HandlerOutcome
): Effect.Effect<void, RunFault> => {
  const { spec, state, output } = context
  if (outcome.emitted.length > 0 && !spec.emitEnabled) return Effect.fail(runFault(emitNotAllowedReason))
  const entry = state.cache.get(partition)!
  const result = outcome.stateChanged ? (outcome.result ?? null) : entry.result
  const size = outcome.state.length + (result?.length ?? 0)
  if (size > spec.maxStateSizeBytes)
    return Effect.fail(runFault(stateSizeReason(spec.name, partition, size, spec.maxStateSizeBytes)))
  if (outcome.shared !== undefined && partition !== "" && outcome.shared.length > spec.maxStateSizeBytes)
    return Effect.fail(runFault(stateSizeReason(spec.name, "", outcome.shared.length, spec.maxStateSizeBytes)))
  const writes: Array<EmittedWrite> = []
  const running = producesRunningResults(spec)
  if (running) writes.push(...runningResultWrites(spec, partition, !entry.known, false, result))
  writes.push(...outcome.emitted)
  if (running && result !== entry.result) writes.push(...runningResultWrites(spec, partition, false, true, result))
  if (writes.length > 0)
    output.enqueue({ tag: item.tag, eventId: item.event.eventId, correlationId: correlationIdOf(item.event) }, writes)
  if (outcome.state !== entry.state || result !== entry.result || outcome.created) {
    entry.state = outcome.state
    entry.result = result
    entry.causedBy = item.tag
    entry.dirty = true
  }
  entry.known = true
  if (outcome.shared !== undefined && partition !== "") {
    const root = state.cache.root
    if (root.state !== outcome.shared) {
      root.state = outcome.shared
      root.causedBy = item.tag
    }
  }
  state.position = item.tag
  state.processedLogPosition = item.logPosition
  state.eventsProcessedAfterRestart++
  state.handledSinceCheckpoint++
  state.bufferedEvents = Math.max(0, state.bufferedEvents - 1)
  return Effect.void
}

const processSegment = (context: BatchContext, segment: ReadonlyArray<Routed>): Effect.Effect<void, RunFault> =>
  Effect.gen(function* () {
    const { spec, state, handler } = context
    for (const { item, partition } of segment) yield* loadPartition(context, partition, item.tag)
    let live = state.livePartition
    const items = segment.map(({ item, partition }): HandlerItem => {
      const load = partition !== live
      live = partition
      if (!load) return { source: item, partition }
      const stored = state.cache.peek(partition)!.state
      return spec.definition.options.isBiState
        ? { source: item, partition, state: stored, shared: state.cache.root.state }
        : { source: item, partition, state: stored }
    })
    const started = yield* Clock.currentTimeMillis
    const processed = yield* Effect.either(handler.process(items))
    state.coreProcessingTime += (yield* Clock.currentTimeMillis) - started
    state.livePartition = live
    const outcomes = Either.isRight(processed) ? processed.right : processed.left.done
    for (let index = 0; index < outcomes.length; index++)
      yield* applyOutcome(context, segment[index]!, outcomes[index]!)
    if (Either.isLeft(processed)) {
      handler.forgetLiveState()
      state.livePartition = undefined
      return yield* Effect.fail(faultOf(context, segment[processed.left.index]!.item, processed.left))
    }
  })

/** Processes a batch's items; the position moves with each item, and to the batch's end once all are done. */
export const processBatch = (context: BatchContext, batch: SourceBatch): Effect.Effect<void, RunFault> =>
  Effect.gen(function* () {
    const { state } = context
    state.bufferedEvents = batch.items.length
    if (batch.items.length > 0) {
      const partitions = yield* partitionsOf(context, batch.items)
      const routed: Array<Routed> = []
      batch.items.forEach((item, index) => {
        const partition = partitions[index]
        if (partition !== undefined) routed.push({ item, partition })
      })
      for (const segment of segmentsOf(routed, context.spec.definition.options.isBiState))
        yield* processSegment(context, segment)
    }
    state.bufferedEvents = 0
    state.position = batch.next
    state.processedLogPosition = batch.logPosition
    state.skippedBytesSinceCheckpoint += batch.skippedBytes
  })
