/**
 * How far behind the log a runner is (figures beyond the reference's): bytes, events and milliseconds between
 * what it processed and the committed end. Counting events and finding the first unprocessed one reads the log, so
 * those two are refreshed at most once a second; bytes and progress follow every batch. A faulted runner reads no
 * more batches: `refreshFaultedLag` keeps its lag growing with the log, so a stuck projection shows as one.
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
    state.progress = committed > 0 ? Math.min(100, Math.max(0, (100 * batch.logPosition) / committed)) : -1
    yield* measureLag(store, state, batch.logPosition, false)
  })

/** Bytes, events and age of what the log holds after `from` (events and age at most once a second, or now). */
const measureLag = (store: BatchContext["store"], state: BatchContext["state"], from: number, now_: boolean) =>
  Effect.gen(function* () {
    const committed = yield* store.committedPosition
    state.lagBytes = Math.max(0, committed - from)
    const now = yield* Clock.currentTimeMillis
    if (!now_ && now - state.lagRefreshedAtMs < lagRefreshMs) return
    state.lagRefreshedAtMs = now
    // readAllForward starts at a record: `from` is one (a record processed, or where a read ended).
    const page = yield* Effect.either(store.readAllForward(Math.max(0, from), lagEventsBound + 1))
    if (page._tag === "Left") return
    const after = page.right.events.map(originalEvent).filter((record) => record.logPosition > from)
    state.lagEvents = Math.min(after.length, lagEventsBound)
    state.lagMilliseconds = after.length === 0 ? 0 : Math.max(0, now - Math.floor(after[0]!.createdMicros / 1000))
  })

/** For a faulted runner: its lag from what it processed before the fault, against the log as it is now. */
export const refreshFaultedLag = (context: Pick<BatchContext, "store" | "state">): Effect.Effect<void> =>
  Effect.suspend(() =>
    context.state.status === "Faulted" && context.state.processedLogPosition >= 0
      ? measureLag(context.store, context.state, context.state.processedLogPosition, true)
      : Effect.void
  )
