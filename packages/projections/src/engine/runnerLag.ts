/**
 * How far behind the log a runner is (figures beyond the reference's): bytes, events and milliseconds between
 * its position and the committed end. Counting events and finding the first unprocessed one reads the log, so
 * those two are refreshed at most once a second; bytes and progress follow every batch.
 */
import { Clock, Effect } from "effect"
import { originalEvent } from "@vellum/storage"
import type { SourceBatch } from "../sources/SourceReader.js"
import type { BatchContext } from "./processBatch.js"

/** Events counted after the position at most (lagEvents stops there). */
export const lagEventsBound = 1000
const lagRefreshMs = 1000

export const refreshLag = ({ store, state }: BatchContext, batch: SourceBatch): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (batch.atEnd) {
      state.lagBytes = 0
      state.lagEvents = 0
      state.lagMilliseconds = 0
      state.progress = 100
      return
    }
    const committed = yield* store.committedPosition
    state.lagBytes = Math.max(0, committed - batch.logPosition)
    state.progress = committed > 0 ? Math.min(100, Math.max(0, (100 * batch.logPosition) / committed)) : -1
    const now = yield* Clock.currentTimeMillis
    if (now - state.lagRefreshedAtMs < lagRefreshMs) return
    state.lagRefreshedAtMs = now
    const page = yield* Effect.either(store.readAllForward(batch.logPosition, lagEventsBound + 1))
    if (page._tag === "Left") return
    const after = page.right.events.map(originalEvent).filter((record) => record.logPosition > batch.logPosition)
    state.lagEvents = Math.min(after.length, lagEventsBound)
    state.lagMilliseconds = after.length === 0 ? 0 : Math.max(0, now - Math.floor(after[0]!.createdMicros / 1000))
  })
