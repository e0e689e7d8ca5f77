// The read index's stream-info caches against a commit that lands while a lookup is reading: the lookup may answer
// what it read (a read sees the log as it was), but it must not cache that answer over the newer one the commit
// cached, or a writer checking an expected version later would be refused against a stale last event number.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { RecordKind, type EventRecord } from "../src/index.js"
import { ReadIndex } from "../src/streams/ReadIndex.js"
import type { TableIndex } from "../src/tableindex/TableIndex.js"
import type { TransactionLog } from "../src/log/TransactionLog.js"

const event = (stream: string, eventNumber: number, logPosition: number, data = "{}"): EventRecord => ({
  kind: RecordKind.Event,
  logPosition,
  flags: 1,
  eventNumber,
  createdMicros: 0,
  eventId: "00000000-0000-4000-8000-000000000001",
  stream,
  eventType: stream.startsWith("$$") ? "$metadata" : "E",
  data: Buffer.from(data),
  metadata: Buffer.alloc(0)
})

/** An index whose lookups wait for `gate`, then answer with `entries`; a log that holds `records` by position. */
const fakes = (gate: Deferred.Deferred<void>, latest: number, records: Map<number, EventRecord>) => {
  const lookupLatest = () => Effect.as(Deferred.await(gate), [{ exact: true, eventNumber: latest, position: 100 }])
  const index = {
    latest: lookupLatest,
    latestNow: lookupLatest,
    range: () => Effect.succeed([]),
    rangeNow: () => Effect.succeed([]),
    addBatch: () => undefined
  } as unknown as TableIndex
  const log = {
    writerPosition: () => 1_000_000,
    readRecordCached: (position: number) => records.get(position),
    readRecord: (position: number) => Effect.succeed(records.get(position))
  } as unknown as TransactionLog
  return { index, log }
}

describe("the read index's stream-info caches", () => {
  it.effect("a last event number looked up while a batch is applied is not cached over the batch's", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const { index, log } = fakes(gate, 8, new Map())
      const readIndex = new ReadIndex(log, index, { streamInfoCacheCapacity: 100 }, 0)
      const lookup = yield* Effect.fork(readIndex.lastEventNumber("s"))
      yield* Effect.yieldNow()
      readIndex.applyCommitted([event("s", 9, 200)], 300)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(lookup)).toBe(8)
      expect(readIndex.cachedLastEventNumber("s")).toBe(9)
    })
  )

  it.effect("metadata looked up while a batch is applied is not cached over the batch's", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const { index, log } = fakes(gate, 0, new Map([[100, event("$$s", 0, 100, '{"$maxCount":1}')]]))
      const readIndex = new ReadIndex(log, index, { streamInfoCacheCapacity: 100 }, 0)
      const lookup = yield* Effect.fork(readIndex.metaInfo("s"))
      yield* Effect.yieldNow()
      readIndex.applyCommitted([event("$$s", 1, 200, '{"$maxCount":5}')], 300)
      yield* Deferred.succeed(gate, undefined)
      expect((yield* Fiber.join(lookup)).metaLastEventNumber).toBe(0)
      expect(readIndex.cachedMetaInfo("s")?.metaLastEventNumber).toBe(1)
    })
  )
})
