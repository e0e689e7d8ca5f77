/**
 * The index's background flush meets a full disk: it is retried on a backoff (Effect's Clock) rather than
 * stopped for good; meanwhile waiting for it fails at once and reads keep answering from the memtables; once
 * space is freed the flush goes through and the index is as if nothing had happened.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Either, TestClock } from "effect"
import { Disk, MemoryDisk } from "@vellum/platform"
import { open } from "../src/tableindex/TableIndex.js"

describe("TableIndex on a full disk", () => {
  it.scoped("a flush that meets a full disk is retried until space is freed; reads go on meanwhile", () =>
    Effect.gen(function* () {
      const mem = new MemoryDisk()
      const index = yield* open({ dir: "/idx", memtableMaxEntries: 4 }).pipe(Effect.provideService(Disk, mem.service))
      mem.capacityBytes = mem.totalBytes()
      for (let k = 0; k < 6; k++) index.addBatch([{ stream: "s", eventNumber: k, position: k * 10 }], k * 10 + 10)
      yield* TestClock.adjust(Duration.seconds(1))
      const waited = yield* Effect.either(index.awaitIdle)
      assert.isTrue(
        Either.isLeft(waited) && waited.left._tag === "DiskError" && waited.left.reason === "DiskFull",
        JSON.stringify(waited)
      )
      assert.isTrue(
        Either.isLeft(yield* Effect.either(index.awaitCapacity)),
        "the writer is not held by a stalled flush"
      )
      assert.strictEqual(index.stats().tables, 0)
      assert.strictEqual(index.persistedPosition, 0)
      assert.deepStrictEqual(
        (yield* index.range("s", 0, 10)).map((e) => e.eventNumber),
        [0, 1, 2, 3, 4, 5]
      )
      // Still full a minute later: still retrying, nothing left behind on the disk.
      yield* TestClock.adjust(Duration.minutes(1))
      assert.deepStrictEqual(
        mem.files().filter((f) => f.endsWith(".vtable")),
        []
      )
      mem.capacityBytes = undefined
      yield* TestClock.adjust(Duration.seconds(6))
      yield* index.awaitIdle
      assert.strictEqual(index.stats().tables, 1)
      assert.strictEqual(index.persistedPosition, 40)
      yield* index.flush
      assert.strictEqual(index.persistedPosition, 60)
      assert.deepStrictEqual(
        (yield* index.range("s", 0, 10)).map((e) => e.eventNumber),
        [0, 1, 2, 3, 4, 5]
      )
    })
  )
})
