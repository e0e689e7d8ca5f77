/**
 * Restarts: a store exercising every stream rule reads exactly the same after a clean restart and after
 * power losses (strict, and random ones that keep a random prefix of unsynced bytes — acknowledged writes
 * were synced, so they must survive either way), and keeps applying the rules to new writes afterwards.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { ExpectedVersion, SystemLinkAccess, type EventStoreService } from "../src/index.js"
import {
  Hashes,
  ev,
  evs,
  expectDeleted,
  expectWev,
  json,
  link,
  openDb,
  readAll,
  streamNumbers,
  type Db
} from "./streams-harness.js"

const { Any, NoStream, StreamExists } = ExpectedVersion

const Streams = [
  "plain",
  "multi",
  "capped",
  "trunc",
  "soft",
  "recreated",
  "hard",
  "phantom-hard",
  "meta-only",
  "links",
  "a@b",
  "$sys",
  "dup"
]

/** Everything that can be read about the streams, plus `$all` below `end`. */
const dump = (store: EventStoreService, end: number) =>
  Effect.gen(function* () {
    const out: Record<string, unknown> = {}
    for (const stream of [...Streams, ...Streams.map((s) => `$$${s}`)]) {
      const forward = yield* store.readStreamForward(stream, 0, 4096, { resolveLinks: SystemLinkAccess })
      const backward = yield* store.readStreamBackward(stream, -1, 3, { resolveLinks: SystemLinkAccess })
      const last = yield* store.lastEventNumber(stream)
      const events = []
      for (let n = -1; n <= Math.min(last, 12); n++)
        events.push(yield* store.readEvent(stream, n, { resolveLinks: SystemLinkAccess }))
      const meta = stream.startsWith("$$") ? undefined : yield* store.getStreamMetadata(stream)
      out[stream] = {
        forward,
        backward,
        last,
        events,
        meta: meta === undefined ? undefined : { ...meta, raw: meta.raw?.toString("hex") }
      }
    }
    out["$all"] = (yield* readAll(store, 7)).filter((e) => e.logPosition < end)
    return JSON.parse(JSON.stringify(out)) as unknown
  })

const build = (db: Db) =>
  Effect.gen(function* () {
    const s = db.store
    for (let i = 0; i < 6; i++) yield* s.append("plain", i - 1, [ev(i)])
    yield* s.append("multi", NoStream, evs(10, 5))
    yield* s.append("multi", Any, evs(15, 3))
    yield* s.append("capped", NoStream, evs(20, 6))
    yield* s.setStreamMetadata("capped", NoStream, json({ $maxCount: 2, custom: "c" }))
    yield* s.append("trunc", NoStream, evs(30, 6))
    yield* s.setStreamMetadata("trunc", NoStream, json({ $tb: 4 }))
    yield* s.append("soft", NoStream, evs(40, 3))
    yield* s.deleteStream("soft", Any, false)
    yield* s.append("recreated", NoStream, evs(50, 2))
    yield* s.deleteStream("recreated", 1, false)
    yield* s.append("recreated", NoStream, evs(52, 3))
    yield* s.append("hard", NoStream, evs(60, 2))
    yield* s.deleteStream("hard", Any, true)
    yield* s.deleteStream("phantom-hard", NoStream, true)
    yield* s.setStreamMetadata("meta-only", NoStream, json({ $acl: { $r: "$admins" } }))
    yield* s.append("a@b", NoStream, evs(70, 2))
    yield* s.append("$sys", NoStream, evs(75, 1))
    yield* s.append("dup", NoStream, evs(80, 2))
    yield* s.append("dup", 1, evs(80, 2)) // the same ids again at 2, 3
    yield* s.append("links", NoStream, [
      link(90, "1@plain"),
      link(91, "0@capped"),
      link(92, "5@capped"),
      link(93, "0@soft"),
      link(94, "0@hard"),
      link(95, "1@a@b"),
      link(96, "nonsense"),
      link(97, "3@recreated"),
      link(98, "0@trunc"),
      link(99, "4@trunc")
    ])
  })

/** New writes after a reopen still follow the rules. */
const continueWriting = (db: Db) =>
  Effect.gen(function* () {
    const s = db.store
    yield* expectWev(s.append("plain", 4, [ev(200)]), 5)
    const plain = yield* s.append("plain", 5, [ev(200)])
    assert.strictEqual(plain.firstEventNumber, 6)
    const retry = yield* s.append("multi", NoStream, evs(10, 5))
    assert.deepStrictEqual([retry.firstEventNumber, retry.lastEventNumber, retry.idempotent], [0, 4, true])
    yield* expectWev(s.append("multi", NoStream, [ev(201)]), 7)
    yield* expectDeleted(s.append("hard", Any, [ev(202)]))
    yield* expectDeleted(s.append("phantom-hard", NoStream, [ev(202)]))
    yield* expectDeleted(s.append("soft", StreamExists, [ev(202)]))
    const soft = yield* s.append("soft", NoStream, [ev(203)])
    assert.strictEqual(soft.firstEventNumber, 3)
    assert.deepStrictEqual(yield* streamNumbers(s, "soft"), [3])
    yield* expectWev(s.append("recreated", NoStream, [ev(204)]), 4)
    const capped = yield* s.append("capped", Any, [ev(205)])
    assert.strictEqual(capped.firstEventNumber, 6)
    assert.deepStrictEqual(yield* streamNumbers(s, "capped"), [5, 6])
    const meta = yield* s.append("meta-only", StreamExists, [ev(206)])
    assert.strictEqual(meta.firstEventNumber, 0)
  })

describe("streams: restarts", () => {
  for (const hash of Hashes) {
    it.scoped(`${hash.name}: identical reads after a clean restart, strict and random power losses`, () =>
      Effect.gen(function* () {
        const db = yield* openDb(hash.overrides)
        yield* build(db)
        const end = yield* db.store.committedPosition
        const before = yield* dump(db.store, end)
        yield* db.restart
        assert.deepStrictEqual(yield* dump(db.store, end), before, "after a clean restart")
        yield* db.crash(1, "strict")
        assert.deepStrictEqual(yield* dump(db.store, end), before, "after a strict power loss")
        for (const seed of [2, 3, 4, 5]) {
          yield* db.crash(seed, "random")
          assert.deepStrictEqual(yield* dump(db.store, end), before, `after a random power loss (seed ${seed})`)
        }
        yield* db.store.flushIndex
        yield* db.crash(6, "strict")
        assert.deepStrictEqual(yield* dump(db.store, end), before, "after flushing the index and a power loss")
        yield* continueWriting(db)
        const end2 = yield* db.store.committedPosition
        const after = yield* dump(db.store, end2)
        yield* db.crash(7, "random")
        assert.deepStrictEqual(yield* dump(db.store, end2), after, "writes after a power loss survive the next one")
      })
    )

    it.scoped(`${hash.name}: power loss in the middle of concurrent appends keeps every acknowledged write`, () =>
      Effect.gen(function* () {
        const db = yield* openDb(hash.overrides)
        for (const seed of [11, 12, 13]) {
          const acknowledged = yield* Effect.forEach(
            Array.from({ length: 30 }, (_, i) => i),
            (i) =>
              db.store.append(`p-${i % 3}`, Any, [
                ev(seed * 1000 + i, { data: JSON.stringify({ pad: "y".repeat(i * 20) }) })
              ]),
            { concurrency: "unbounded" }
          )
          yield* db.crash(seed, "random")
          for (const [i, r] of acknowledged.entries()) {
            const read = yield* db.store.readEvent(`p-${i % 3}`, r.lastEventNumber)
            assert.strictEqual(read._tag, "Success")
            if (read._tag === "Success") {
              assert.strictEqual(read.event.event!.eventId, ev(seed * 1000 + i).eventId)
              assert.strictEqual(read.event.event!.logPosition, r.position)
            }
          }
        }
        for (const stream of ["p-0", "p-1", "p-2"])
          assert.deepStrictEqual(
            yield* streamNumbers(db.store, stream),
            Array.from({ length: 30 }, (_, i) => i)
          )
      })
    )
  }
})
