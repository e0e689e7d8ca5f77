/**
 * Idempotent retries across restarts: a retry of an append (same event ids) after the store was reopened,
 * cleanly (index flushed, little to replay) or after a power loss (the tail replayed), is answered as the
 * original while its ids are within the event-id cache's window, and writes nothing.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { ExpectedVersion } from "../src/index.js"
import { evs, openDb, readAll, streamNumbers, type Db } from "./streams-harness.js"

const { Any, NoStream } = ExpectedVersion

/** Reopens the store the way a node stops: a clean stop flushes the index first. */
const reopenings: ReadonlyArray<{ readonly name: string; readonly reopen: (db: Db) => Effect.Effect<void, unknown> }> =
  [
    { name: "a clean stop (index flushed)", reopen: (db) => Effect.zipRight(db.store.flushIndex, db.restart) },
    { name: "a clean stop (index not flushed)", reopen: (db) => db.restart },
    { name: "a power loss", reopen: (db) => db.crash(3, "random") },
    {
      name: "a power loss after flushing the index",
      reopen: (db) => Effect.zipRight(db.store.flushIndex, db.crash(4, "strict"))
    }
  ]

describe("streams: idempotent retries after a restart", () => {
  for (const { name, reopen } of reopenings) {
    it.scoped(`after ${name}, a retry is answered as the original`, () =>
      Effect.gen(function* () {
        const db = yield* openDb({ eventIdCacheCapacity: 64 })
        // Some history before, so the appends of interest are not the only events of the log.
        for (let i = 0; i < 20; i++) yield* db.store.append(`other-${i % 3}`, Any, evs(1000 + i * 2, 2))
        const first = yield* db.store.append("orders", NoStream, evs(1, 3))
        const second = yield* db.store.append("orders", Any, evs(4, 2))
        for (let i = 0; i < 5; i++) yield* db.store.append("after", Any, evs(2000 + i, 1))
        const userEvents = Effect.map(
          readAll(db.store, 1000),
          (all) => all.filter((e) => !e.stream.startsWith("$")).length
        )
        const eventsBefore = yield* userEvents
        yield* reopen(db)

        const retryAny = yield* db.store.append("orders", Any, evs(4, 2))
        assert.deepStrictEqual(
          [retryAny.firstEventNumber, retryAny.lastEventNumber, retryAny.idempotent],
          [second.firstEventNumber, second.lastEventNumber, true]
        )
        const retryNoStream = yield* db.store.append("orders", NoStream, evs(1, 3))
        assert.deepStrictEqual(
          [retryNoStream.firstEventNumber, retryNoStream.idempotent],
          [first.firstEventNumber, true]
        )
        assert.deepStrictEqual(yield* streamNumbers(db.store, "orders"), [0, 1, 2, 3, 4])
        assert.strictEqual(yield* userEvents, eventsBefore, "the retries wrote no event")
      })
    )
  }

  it.scoped("the refill from the log's tail keeps to the cache's window", () =>
    Effect.gen(function* () {
      // A cache of 8 ids holds the newest 4 to 8; an id far older than that is no longer known, so its `Any`
      // retry is written again (as the reference does once an id has left its cache).
      const db = yield* openDb({ eventIdCacheCapacity: 8 })
      yield* db.store.append("old", NoStream, evs(1, 1))
      for (let i = 0; i < 40; i++) yield* db.store.append("filler", Any, evs(100 + i, 1))
      const recent = yield* db.store.append("recent", NoStream, evs(500, 1))
      yield* db.store.flushIndex
      yield* db.restart
      const retryRecent = yield* db.store.append("recent", Any, evs(500, 1))
      assert.deepStrictEqual([retryRecent.firstEventNumber, retryRecent.idempotent], [recent.firstEventNumber, true])
      const retryOld = yield* db.store.append("old", Any, evs(1, 1))
      assert.deepStrictEqual([retryOld.firstEventNumber, retryOld.idempotent], [1, false])
    })
  )
})
