/**
 * The catalogue of the streams a projection wrote to (`$projections-{name}-emittedstreams`, kept when asked
 * with `trackEmittedStreams`): one `$StreamTracked` event per stream, which deleting the projection reads to
 * delete its output. The writer reads the catalogue once, and adds a stream the first time it is written to
 * if it is not there yet; the catalogue is never truncated, so it goes on naming what older epochs wrote.
 */
import { Effect } from "effect"
import { originalEvent, type EventStoreService } from "@vellum/storage"
import { projectionEventTypes } from "../../persisted/streamNames.js"
import type { EmittedWrite } from "../ProjectionHandler.js"
import type { OutputFault } from "../OutputWriter.js"
import { withStorageRetry } from "./storageFailures.js"

const pageSize = 500

/** The record of `stream` in the catalogue: not JSON, the stream id as its data. */
export const streamTrackedWrite = (catalogue: string, stream: string): EmittedWrite => ({
  stream: catalogue,
  eventType: projectionEventTypes.streamTracked,
  isJson: false,
  data: stream,
  extraMetadata: []
})

/** The streams the catalogue names. */
export const readTrackedStreams = (
  store: EventStoreService,
  catalogue: string
): Effect.Effect<Set<string>, OutputFault> =>
  Effect.gen(function* () {
    const tracked = new Set<string>()
    for (let from = 0; ;) {
      const page = yield* withStorageRetry(catalogue, store.readStreamForward(catalogue, from, pageSize))
      if (page._tag !== "Success") return tracked
      for (const resolved of page.events) tracked.add(originalEvent(resolved).data.toString("utf8"))
      if (page.isEndOfStream || page.events.length === 0) return tracked
      from = page.nextEventNumber
    }
  })
