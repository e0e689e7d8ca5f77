/**
 * The stamp on every event a projection writes (emitted events, links, results, partition checkpoints): the
 * metadata is the position that caused the write, as JSON with the projection's version stamp first, then the
 * event's own metadata members, then `$causedBy` (the id of the causing event) and `$correlationId` (unless
 * the event's own metadata has one). Before its first write to a stream a projection reads the stream's last
 * event's stamp to learn whether the stream is its own, another projection's, or written from outside.
 */
import type { CheckpointTag, ProjectionVersion } from "./checkpointTag.js"
import { decodeCheckpointTag, encodeCheckpointTag } from "./checkpointTag.js"

/** What an emitted event adds to the causing position. */
export interface EmittedEventStamp {
  /** The event's own metadata members, name and JSON text, in order (a `$causedBy` among them is dropped). */
  readonly extra?: ReadonlyArray<readonly [string, string]>
  /** The id of the event whose handling emitted this one, if known. */
  readonly causedBy?: string | undefined
  /** The correlation id of the causing event, if any. */
  readonly correlationId?: string | undefined
}

/** The metadata JSON of an event a projection writes. */
export const encodeEmittedMetadata = (
  causedByTag: CheckpointTag,
  version: ProjectionVersion,
  stamp: EmittedEventStamp = {}
): string => {
  const own = (stamp.extra ?? []).filter(([name]) => name !== "$causedBy")
  const members: Array<readonly [string, string]> = [...own]
  if (stamp.causedBy !== undefined && stamp.causedBy !== "") members.push(["$causedBy", JSON.stringify(stamp.causedBy)])
  const hasCorrelationId = own.some(([name]) => name === "$correlationId")
  if (!hasCorrelationId && stamp.correlationId !== undefined && stamp.correlationId !== "")
    members.push(["$correlationId", JSON.stringify(stamp.correlationId)])
  return encodeCheckpointTag(causedByTag, version, members)
}

/** Who wrote a stream's last event, as far as a projection about to write to it is concerned. */
export type StreamOwnership =
  /** No event yet: the projection may start the stream. */
  | { readonly kind: "new" }
  /** Written by this projection; `epoch`/`version` tell whether by an older epoch of it, `tag` where it was. */
  | { readonly kind: "this"; readonly tag: CheckpointTag; readonly epoch: number; readonly version: number }
  /** Written by another projection (fault: several projections emitting to one stream). */
  | { readonly kind: "another"; readonly projectionId: number }
  /** Written by something not a projection (fault: written to from the outside). */
  | { readonly kind: "outside" }

/**
 * Classifies a stream's last event (undefined = the stream has none) for projection `projectionId`. As in the
 * reference, a position without a version stamp counts as this projection's; metadata that is empty, not
 * JSON, or no position counts as written from outside.
 */
export const streamOwnership = (lastEventMetadata: string | undefined, projectionId: number): StreamOwnership => {
  if (lastEventMetadata === undefined) return { kind: "new" }
  const decoded = lastEventMetadata === "" ? undefined : decodeCheckpointTag(lastEventMetadata)
  if (decoded === undefined) return { kind: "outside" }
  const writer = decoded.projectionId ?? projectionId
  if (writer !== projectionId) return { kind: "another", projectionId: writer }
  return { kind: "this", tag: decoded.tag, epoch: decoded.epoch, version: decoded.version }
}

/** The fault text when a stream was written to from outside. */
export const writtenFromOutsideReason = (stream: string, projectionId: number): string =>
  `The '${stream}' stream managed by projection ${projectionId} has been written to from the outside.`

/** The fault text when another projection wrote a stream's last event. */
export const multipleProjectionsReason = (stream: string, lastWriter: number, projectionId: number): string =>
  `Multiple projections emitting to the same stream detected.  Stream: '${stream}'. Last event projection: '${lastWriter}'.  Emitting projection: '${projectionId}'`

/**
 * Whether this projection's write into a stream it owns starts the stream over: the last event was written
 * before the projection's current epoch began (a reset), so older output is to be truncated.
 */
export const startsNewEpoch = (ownership: StreamOwnership, currentEpoch: number): boolean =>
  ownership.kind !== "this" || currentEpoch > ownership.version
