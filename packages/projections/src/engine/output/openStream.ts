/**
 * Before its first write to a stream, the output writer reads the stream's last event to learn where the
 * stream is and whose it is: its own (this epoch: the position of the last write, for skipping what was
 * written before a restart), its own from an older epoch or no event at all (a new logical stream: older
 * output is truncated), another projection's, or written from outside (both faults).
 */
import { Effect } from "effect"
import { assert } from "@vellum/platform"
import { originalEvent, type EventStoreService } from "@vellum/storage"
import type { CheckpointTag, ProjectionVersion } from "../../persisted/checkpointTag.js"
import {
  multipleProjectionsReason,
  startsNewEpoch,
  streamOwnership,
  writtenFromOutsideReason
} from "../../persisted/emittedMetadata.js"
import type { OutputFault } from "../OutputWriter.js"
import { newLogicalStreamMetadata } from "./newStreamMetadata.js"
import { outputFault, withStorageRetry } from "./storageFailures.js"

export interface StreamHead {
  /** The stream's last event number (-1: none): the exact expected version of the next append. */
  readonly version: number
  /**
   * The position of the last event this epoch wrote to the stream: writes caused at or before it were made
   * before a restart. Undefined for a new logical stream (nothing of this epoch is in it).
   */
  readonly lastTag: CheckpointTag | undefined
}

export interface OpenStreamDeps {
  readonly store: EventStoreService
  readonly writer: EventStoreService
  /** Wraps an append, to count it in flight. */
  readonly appending: <A>(append: Effect.Effect<A, OutputFault>) => Effect.Effect<A, OutputFault>
}

/**
 * Reads `stream`'s head for projection `version`. `keepOlderEpochs`: the stream is never truncated (the
 * tracked-streams catalogue, which must keep naming the streams older epochs wrote).
 */
export const openStream = (
  deps: OpenStreamDeps,
  stream: string,
  version: ProjectionVersion,
  keepOlderEpochs: boolean
): Effect.Effect<StreamHead, OutputFault> =>
  Effect.gen(function* () {
    const last = yield* withStorageRetry(stream, deps.store.readEvent(stream, -1))
    switch (last._tag) {
      case "StreamDeleted":
        return yield* Effect.fail(outputFault(`Stream : ${stream} is deleted. Cannot emit events to it`))
      case "NoStream":
        yield* startLogicalStream(deps, stream, 0)
        return { version: -1, lastTag: undefined }
      case "NotFound": {
        // Events exist but are hidden (truncated, expired): nothing of them is this epoch's.
        const lastNumber = yield* withStorageRetry(stream, deps.store.lastEventNumber(stream))
        yield* startLogicalStream(deps, stream, keepOlderEpochs ? 0 : lastNumber + 1)
        return { version: lastNumber, lastTag: undefined }
      }
      case "Success": {
        const event = originalEvent(last.event)
        const ownership = streamOwnership(event.metadata.toString("utf8"), version.projectionId)
        if (ownership.kind === "outside")
          return yield* Effect.fail(outputFault(writtenFromOutsideReason(stream, version.projectionId)))
        if (ownership.kind === "another")
          return yield* Effect.fail(
            outputFault(multipleProjectionsReason(stream, ownership.projectionId, version.projectionId))
          )
        assert(ownership.kind === "this", "an event read has a writer")
        if (keepOlderEpochs) return { version: event.eventNumber, lastTag: undefined }
        if (startsNewEpoch(ownership, version.epoch)) {
          yield* startLogicalStream(deps, stream, event.eventNumber + 1)
          return { version: event.eventNumber, lastTag: undefined }
        }
        return { version: event.eventNumber, lastTag: ownership.tag }
      }
    }
  })

/** Writes the metadata of a new logical stream starting at `truncateBefore`, when it changes anything. */
const startLogicalStream = (
  deps: OpenStreamDeps,
  stream: string,
  truncateBefore: number
): Effect.Effect<void, OutputFault> =>
  Effect.gen(function* () {
    const metastream = `$$${stream}`
    const current = yield* withStorageRetry(metastream, deps.store.getStreamMetadata(stream))
    const metadata = newLogicalStreamMetadata(stream, current.metadata.raw, truncateBefore)
    if (metadata === undefined) return
    yield* deps.appending(
      withStorageRetry(
        metastream,
        deps.writer.setStreamMetadata(stream, current.metaLastEventNumber, Buffer.from(metadata, "utf8"))
      )
    )
  })
