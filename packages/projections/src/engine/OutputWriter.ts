/**
 * Writes what a projection emits (its handlers' writes, its results, its partition catalogue and tracked
 * streams) exactly once across restarts. Each processed item's writes are queued with the position that
 * caused them; the writer stamps each event's metadata (the causing position with the `$v` stamp, the
 * write's own members, `$causedBy`, `$correlationId`), and writes every stream's queued events in order,
 * appending to different streams concurrently, one append in flight per stream, never splitting one item's
 * writes to a stream across two appends.
 *
 * Before its first write to a stream it reads the stream's last event: a stream written from outside, or by
 * another projection, faults the projection (the reference's reasons); a stream last written by an older
 * epoch of this projection is started anew (`$tb` metadata first); new `$`-streams get metadata readable by
 * all. Writes whose causing position is at or before the stream's last stamped position in this epoch were
 * written before a restart, and are skipped: this is what makes re-processing after a checkpoint harmless.
 */
import type { Effect, Scope } from "effect"
import type { CheckpointTag, ProjectionVersion } from "../persisted/checkpointTag.js"
import type { EmittedWrite } from "./ProjectionHandler.js"

/** The event whose processing caused a write. */
export interface WriteCause {
  /** The position the projection is at once the event is processed. */
  readonly tag: CheckpointTag
  /** The causing event's id (`$causedBy`); "" when there is none (a query's final results). */
  readonly eventId: string
  /** `$correlationId` of the causing event's metadata, when it has one. */
  readonly correlationId: string | undefined
}

/** The projection's run is over: a reason the reference gives (written to from the outside, ...). */
export interface OutputFault {
  readonly _tag: "OutputFault"
  readonly reason: string
}

export interface OutputWriter {
  /** Queues one item's writes, in order. Causes only move forward. */
  readonly enqueue: (cause: WriteCause, writes: ReadonlyArray<EmittedWrite>) => void
  /** Completes once everything queued so far is durable (or fails with the fault that stopped the writer). */
  readonly flush: Effect.Effect<void, OutputFault>
  /** Events queued and not yet durable. */
  readonly pendingEvents: () => number
  /** Appends in flight. */
  readonly writesInFlight: () => number
  /** The fault that stopped the writer, if any (the runner checks it between batches). */
  readonly fault: () => OutputFault | undefined
}

/** What an output writer is made for. */
export interface OutputWriterSpec {
  readonly name: string
  /** Stamped as `$v`; the epoch decides which earlier output counts as this run's. */
  readonly version: ProjectionVersion
  /** Record every stream written to in `$projections-{name}-emittedstreams` (`$StreamTracked`). */
  readonly trackEmittedStreams: boolean
  /** Events per append at most (an item's writes to one stream are never split, even past this). */
  readonly maxWriteBatchLength: number
  /** Appends in flight at most; 0 = unbounded. */
  readonly maxAllowedWritesInFlight: number
}

/** Starts a writer for one run of a projection (in the scope's lifetime). `engine/output/` implements it. */
export type MakeOutputWriter = (spec: OutputWriterSpec) => Effect.Effect<OutputWriter, never, Scope.Scope>
