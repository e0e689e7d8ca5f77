// --write-stats-to-db: the node appends its stats to $stats-<ip>:<port> every --stats-period-sec, on the
// test clock (the period is an Effect sleep), with the stream's $maxAge set first.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { EventStore, type StreamRead } from "@vellum/storage"
import { STATS_EVENT_TYPE, STATS_STREAM_MAX_AGE_SECONDS } from "@vellum/http"
import * as NodeApp from "../src/NodeApp.js"
import { load } from "./configSupport.js"

const STREAM = "$stats-127.0.0.1:2113"

const nodeLayer = (argv: ReadonlyArray<string>, disk = new MemoryDisk()) =>
  Layer.provide(
    NodeApp.layer(load({ argv: ["--mem-db", "--password-hash-cost", "4", ...argv] }), {
      dbDir: "/db",
      instanceId: "00000000-0000-4000-8000-000000000001"
    }),
    MemoryDisk.layer(disk)
  ).pipe(Layer.orDie)

const readStats = Effect.flatMap(EventStore, (store) => Effect.orDie(store.readStreamForward(STREAM, 0, 100)))
const countOf = (read: StreamRead) => (read._tag === "Success" ? read.events.length : 0)

/** Lets the writer fiber run after the clock moved (its append goes through the store's writer). */
const settle = (expected: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1000 && countOf(yield* readStats) < expected; i++) yield* Effect.yieldNow()
    return yield* readStats
  })

describe("--write-stats-to-db", () => {
  it.effect("appends a $statsCollected event every StatsPeriodSec, under a $maxAge of ten days", () =>
    Effect.gen(function* () {
      const store = yield* EventStore
      yield* TestClock.adjust("4 seconds")
      expect(countOf(yield* settle(0))).toBe(0)
      const metadata = yield* Effect.orDie(store.getStreamMetadata(STREAM))
      expect(metadata.metadata.maxAge).toBe(STATS_STREAM_MAX_AGE_SECONDS)
      expect(STATS_STREAM_MAX_AGE_SECONDS).toBe(864_000)

      yield* TestClock.adjust("1 second")
      const first = yield* settle(1)
      expect(countOf(first)).toBe(1)
      const event = first._tag === "Success" ? first.events[0]!.event! : undefined
      expect(event!.eventType).toBe(STATS_EVENT_TYPE)
      expect(event!.eventType).toBe("$statsCollected")
      const data = JSON.parse(event!.data.toString("utf8")) as Record<string, unknown>
      // The flat document, as /stats?group=false gives it.
      expect(Object.keys(data)).toContain("proc-startTime")
      expect(Object.values(data).every((value) => value === null || typeof value !== "object")).toBe(true)

      yield* TestClock.adjust("10 seconds")
      expect(countOf(yield* settle(3))).toBe(3)
    }).pipe(Effect.provide(nodeLayer(["--write-stats-to-db", "--stats-period-sec", "5"])))
  )

  it.effect("writes nothing without the option", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust("60 seconds")
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow()
      expect((yield* readStats)._tag).toBe("NoStream")
    }).pipe(Effect.provide(nodeLayer(["--stats-period-sec", "5"])))
  )

  it.effect("sets the metadata once: a restart finds it and leaves it alone", () =>
    Effect.gen(function* () {
      const disk = new MemoryDisk()
      const argv = ["--write-stats-to-db", "--stats-period-sec", "5"]
      const run = (expected: number) =>
        Effect.gen(function* () {
          yield* TestClock.adjust("5 seconds")
          const read = yield* settle(expected)
          const metadata = yield* Effect.flatMap(EventStore, (store) => Effect.orDie(store.getStreamMetadata(STREAM)))
          return { events: countOf(read), metaLastEventNumber: metadata.metaLastEventNumber }
        }).pipe(Effect.provide(nodeLayer(argv, disk)))
      expect(yield* run(1)).toEqual({ events: 1, metaLastEventNumber: 0 })
      expect(yield* run(2)).toEqual({ events: 2, metaLastEventNumber: 0 })
    })
  )
})
