/**
 * A follower indexes what it received from the records it decoded to check them (ReceivedRecords.ts), not
 * by reading its log back; whatever it does not hold (a cut, a restart, more than it keeps) is read from
 * the log as before, and the index is the same either way.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryDisk, checkDiskOps } from "@vellum/platform"
import { ReceivedRecords } from "../src/replica/ReceivedRecords.js"
import { RecordKind, type LogRecord } from "../src/log/records.js"
import { evs, readAll, streamNumbers } from "./streams-harness.js"
import { ID_A, follow, openGate, openNode, pull } from "./replica-support.js"

/** A node whose disk reads are counted. */
const countingNode = Effect.gen(function* () {
  const mem = new MemoryDisk()
  const counter = { reads: 0 }
  const disk = checkDiskOps(mem.service, (op, path) =>
    Effect.sync(() => {
      if (op === "read" && path.includes("/chunk-")) counter.reads++
    })
  )
  return { node: yield* openNode({ mem, disk }), counter }
})

const epoch = (logPosition: number): LogRecord => ({
  kind: RecordKind.Epoch,
  logPosition,
  epochNumber: 1,
  prevEpochPosition: -1,
  epochId: ID_A,
  leaderInstanceId: ID_A,
  timeMicros: 0
})

describe("replica: indexing received records", () => {
  it.scoped("a follower commits what it received without reading its log", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const { node: b, counter } = yield* countingNode
      yield* a.replica.lead(1, ID_A, openGate)
      for (let i = 0; i < 30; i++) yield* a.store.append(`s-${i % 3}`, -2, evs(i * 2, 2))
      yield* pull(a.replica, b.replica)
      assert.isAbove(b.replica.writerCheckpoint(), b.replica.chunkSize, "across a chunk's end")
      const before = counter.reads
      yield* b.replica.commitTo(a.replica.committed())
      assert.strictEqual(counter.reads, before, "no read of the log to index")
      assert.strictEqual(b.replica.committed(), a.replica.committed())
      assert.deepStrictEqual(yield* readAll(b.store), yield* readAll(a.store))
      assert.deepStrictEqual(yield* streamNumbers(b.store, "s-1"), yield* streamNumbers(a.store, "s-1"))
    })
  )

  it.scoped("the leader reads the slices it sends past its block cache", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      for (let i = 0; i < 30; i++) yield* a.store.append(`s-${i % 3}`, -2, evs(i * 2, 2))
      const log = a.store.engine.log
      for (const chunk of log.chunks()) log.cache.evictFile(chunk.fileId)
      const cache = log.cache
      const before = cache.residentBytes
      const b = yield* openNode()
      yield* pull(a.replica, b.replica, 64 * 1024)
      assert.strictEqual(b.replica.writerCheckpoint(), a.replica.writerCheckpoint())
      assert.strictEqual(cache.residentBytes, before, "nothing cached for the slices")
    })
  )

  it.scoped("after a restart the follower indexes from its log, as before", () =>
    Effect.gen(function* () {
      const a = yield* openNode()
      const b = yield* openNode()
      yield* a.replica.lead(1, ID_A, openGate)
      for (let i = 0; i < 10; i++) yield* a.store.append("s", -2, evs(i * 2, 2))
      yield* pull(a.replica, b.replica)
      yield* b.restart
      yield* follow(a.replica, b.replica)
      assert.strictEqual(b.replica.committed(), a.replica.committed())
      assert.deepStrictEqual(yield* readAll(b.store), yield* readAll(a.store))
    })
  )

  it("serves pages from the record asked for, stopping at the limit, the count and a jump in positions", () => {
    const held = new ReceivedRecords(1_000)
    held.add([epoch(0), epoch(100)], 0, 200)
    held.add([epoch(200)], 200, 300)
    held.add([epoch(1000)], 1000, 1100) // the next chunk
    assert.deepStrictEqual(
      held.scan(100, 10_000, 10)?.records.map((r) => r.logPosition),
      [100, 200]
    )
    assert.strictEqual(held.scan(100, 10_000, 10)?.next, 300)
    assert.deepStrictEqual(held.scan(0, 250, 10), { records: [epoch(0), epoch(100)], next: 200, reachedEnd: true })
    assert.strictEqual(held.scan(0, 10_000, 1)?.next, 100)
    assert.isUndefined(held.scan(50, 10_000, 10), "not where a held record starts")
    assert.isUndefined(held.scan(0, 50, 10), "not one whole record below the limit")
    assert.deepStrictEqual(held.scan(300, 10_000, 10), { records: [], next: 1000, reachedEnd: false }, "a chunk's end")
    assert.strictEqual(held.scan(1000, 10_000, 10)?.next, 1100)
    assert.isUndefined(held.scan(0, 10_000, 10), "what was passed is dropped")
  })

  it("holds a run in log order only, and at most its bound", () => {
    const held = new ReceivedRecords(250)
    held.add([epoch(0)], 0, 100)
    held.add([epoch(100)], 100, 200)
    held.add([epoch(200)], 200, 300)
    assert.isUndefined(held.scan(0, 10_000, 10), "the oldest went past the bound")
    assert.strictEqual(held.scan(100, 10_000, 10)?.next, 300)
    held.add([epoch(150)], 150, 250) // written again after a cut the run did not see
    assert.isUndefined(held.scan(200, 10_000, 10))
    assert.strictEqual(held.scan(150, 10_000, 10)?.next, 250)
  })
})
