/**
 * A user projection's handler alone, in-process (no node, no store, no HTTP): the execution phase of
 * `packages/projections` fed batches of ready-made source items, as `npm run bench:projections-execution` runs
 * it. `bench:projections` prints it as the ceiling of a user projection's catch-up on the node.
 */
import { Effect } from "effect"
import { EventFlags, RecordKind, type EventRecord } from "@vellum/storage"
import { loadScriptProjection, type SourceItem } from "@vellum/projections"
import { median, now } from "./benchSupport.js"

/** Source item `i`: a ~110-byte JSON event of stream `order-{i mod 1000}`. */
export const itemOf = (i: number): SourceItem => {
  const event: EventRecord = {
    kind: RecordKind.Event,
    logPosition: 1000 + i * 300,
    flags: EventFlags.Json,
    eventNumber: i,
    createdMicros: 1_700_000_000_000_000 + i * 1000,
    eventId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    stream: `order-${i % 1000}`,
    eventType: "OrderPlaced",
    data: Buffer.from(JSON.stringify({ orderId: `order-${i}`, amount: i % 977, currency: "EUR", lines: [1, 2, 3] })),
    metadata: Buffer.from('{"$correlationId":"c-1"}')
  }
  return {
    kind: "event",
    event,
    link: undefined,
    tag: { kind: "position", phase: 0, commit: event.logPosition, prepare: event.logPosition },
    logPosition: event.logPosition,
    category: null,
    partitionStream: event.stream
  }
}

/**
 * Events/s of `query`'s handler over `rounds` batches of `batch` items, one partition (the live state goes on
 * between batches): the fastest batch and the median one.
 */
export const handlerEventsPerSec = (query: string, batch: number, rounds: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sources = Array.from({ length: batch }, (_, i) => itemOf(i))
      const { handler } = yield* loadScriptProjection("bench", query, {
        compilationTimeoutMillis: 500,
        executionTimeoutMillis: 250
      })
      Effect.runSync(handler.process(sources.map((source) => ({ source, partition: "", state: "" }))))
      const seconds: Array<number> = []
      for (let round = 0; round < rounds; round++) {
        const start = now()
        Effect.runSync(handler.process(sources.map((source) => ({ source, partition: "" }))))
        seconds.push(now() - start)
      }
      return { best: Math.round(batch / Math.min(...seconds)), median: Math.round(batch / median(seconds)) }
    })
  )
