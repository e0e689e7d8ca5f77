/**
 * Hard delete, soft delete and recreation, each case checked live,
 * after a clean restart and after a power loss.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { DeletedStreamNumber, EventTypes, ExpectedVersion, type EventStoreService } from "../src/index.js"
import {
  Hashes,
  Reopens,
  ev,
  evs,
  expectDeleted,
  expectWev,
  json,
  metadataJson,
  openDb,
  readAll,
  streamIds,
  streamNumbers,
  uuid
} from "./streams-harness.js"

const { Any, NoStream, StreamExists } = ExpectedVersion

/** Every way of reading or writing S and `$$S` answers StreamDeleted. */
const assertHardDeleted = (store: EventStoreService, stream: string) =>
  Effect.gen(function* () {
    assert.deepStrictEqual(yield* store.readStreamForward(stream, 0, 10), { _tag: "StreamDeleted" })
    assert.deepStrictEqual(yield* store.readStreamBackward(stream, -1, 10), { _tag: "StreamDeleted" })
    assert.deepStrictEqual(yield* store.readEvent(stream, 0), { _tag: "StreamDeleted" })
    assert.deepStrictEqual(yield* store.readEvent(stream, -1), { _tag: "StreamDeleted" })
    assert.deepStrictEqual(yield* store.readStreamForward(`$$${stream}`, 0, 10), { _tag: "StreamDeleted" })
    assert.deepStrictEqual(yield* store.readEvent(`$$${stream}`, -1), { _tag: "StreamDeleted" })
    assert.strictEqual((yield* store.getStreamMetadata(stream))._tag, "StreamDeleted")
    assert.strictEqual(yield* store.lastEventNumber(stream), DeletedStreamNumber)
    for (const expected of [Any, NoStream, StreamExists, 0, 1, 2, 5, 100]) {
      yield* expectDeleted(store.append(stream, expected, [ev(900)]))
      yield* expectDeleted(store.setStreamMetadata(stream, expected, json({ $maxCount: 1 })))
    }
    yield* expectDeleted(store.deleteStream(stream, Any, true))
    yield* expectDeleted(store.deleteStream(stream, NoStream, true))
    yield* expectDeleted(store.deleteStream(stream, Any, false))
  })

describe("streams: hard delete", () => {
  for (const hash of Hashes) {
    for (const reopen of Reopens) {
      describe(`${hash.name}, ${reopen}`, () => {
        it.scoped(
          "tombstone: reads, appends (any expected version, retries included) and deletes answer StreamDeleted",
          () =>
            Effect.gen(function* () {
              const db = yield* openDb(hash.overrides)
              yield* db.store.append("s", NoStream, evs(0, 3))
              yield* db.store.setStreamMetadata("s", NoStream, json({ $maxCount: 10 }))
              yield* db.store.append("neighbour", NoStream, evs(50, 3))
              const { position } = yield* db.store.deleteStream("s", 2, true)
              yield* db.reopen(reopen)
              yield* assertHardDeleted(db.store, "s")
              // A retry of the original write is StreamDeleted too, not idempotent.
              yield* expectDeleted(db.store.append("s", NoStream, evs(0, 3)))
              yield* expectDeleted(db.store.append("s", Any, evs(0, 3)))
              // `$all` still shows the old events, the metadata and the tombstone.
              const all = (yield* readAll(db.store)).filter((e) => e.stream === "s" || e.stream === "$$s")
              assert.deepStrictEqual(
                all.map((e) => [e.stream, e.eventNumber, e.eventType]),
                [
                  ["s", 0, "T"],
                  ["s", 1, "T"],
                  ["s", 2, "T"],
                  ["$$s", 0, EventTypes.Metadata],
                  ["s", DeletedStreamNumber, EventTypes.StreamDeleted]
                ]
              )
              const tombstone = all[all.length - 1]!
              assert.strictEqual(tombstone.logPosition, position)
              assert.strictEqual(tombstone.eventNumber, Number.MAX_SAFE_INTEGER)
              assert.strictEqual(tombstone.data.length, 0)
              // Neighbours are untouched.
              assert.deepStrictEqual(yield* streamNumbers(db.store, "neighbour"), [0, 1, 2])
            })
        )

        it.scoped("hard-deleting a stream that does not exist succeeds with NoStream and Any", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("neighbour", NoStream, evs(50, 3))
            yield* db.store.deleteStream("a", NoStream, true)
            yield* db.store.deleteStream("b", Any, true)
            yield* db.reopen(reopen)
            yield* assertHardDeleted(db.store, "a")
            yield* assertHardDeleted(db.store, "b")
          })
        )

        it.scoped("hard delete checks the expected version like an append", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* expectWev(db.store.deleteStream("new", StreamExists, true), -1)
            yield* expectWev(db.store.deleteStream("new", 0, true), -1)
            yield* db.store.append("s", NoStream, evs(0, 3))
            yield* expectWev(db.store.deleteStream("s", NoStream, true), 2)
            yield* expectWev(db.store.deleteStream("s", 1, true), 2)
            yield* expectWev(db.store.deleteStream("s", 3, true), 2)
            yield* db.reopen(reopen)
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0, 1, 2])
            assert.strictEqual((yield* db.store.readStreamForward("new", 0, 10))._tag, "NoStream")
            yield* db.store.deleteStream("s", StreamExists, true)
            yield* assertHardDeleted(db.store, "s")
          })
        )
      })
    }
  }
})

/** Events 0 and 1 in S, soft-deleted with Any. */
const softDeletedStream = (store: EventStoreService, stream = "s") =>
  Effect.gen(function* () {
    yield* store.append(stream, NoStream, evs(0, 2))
    yield* store.append("neighbour", Any, evs(500, 2))
    yield* store.deleteStream(stream, Any, false)
  })

const assertSoftDeleted = (store: EventStoreService, stream: string, last: number) =>
  Effect.gen(function* () {
    assert.deepStrictEqual(yield* store.readStreamForward(stream, 0, 10), { _tag: "NoStream", lastEventNumber: last })
    assert.deepStrictEqual(yield* store.readStreamBackward(stream, -1, 10), { _tag: "NoStream", lastEventNumber: last })
    assert.deepStrictEqual(yield* store.readEvent(stream, 0), { _tag: "NoStream" })
    assert.deepStrictEqual(yield* store.readEvent(stream, -1), { _tag: "NoStream" })
    assert.strictEqual(yield* store.lastEventNumber(stream), last)
    const meta = yield* store.getStreamMetadata(stream)
    assert.strictEqual(meta.metadata.truncateBefore, DeletedStreamNumber)
  })

describe("streams: soft delete and recreation", () => {
  for (const hash of Hashes) {
    for (const reopen of Reopens) {
      describe(`${hash.name}, ${reopen}`, () => {
        it.scoped("the worked example: soft delete, then 3 appends with NoStream become events 2-4", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* softDeletedStream(db.store)
            yield* db.reopen(reopen)
            yield* assertSoftDeleted(db.store, "s", 1)
            assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { $tb: 2 ** 63 }) // long.MaxValue, as JSON.parse reads it
            assert.include((yield* db.store.getStreamMetadata("s")).raw!.toString(), "9223372036854775807")
            const result = yield* db.store.append("s", NoStream, evs(10, 3))
            assert.deepStrictEqual([result.firstEventNumber, result.lastEventNumber], [2, 4])
            yield* db.reopen(reopen)
            const read = yield* db.store.readStreamForward("s", 0, 100)
            assert.strictEqual(read._tag, "Success")
            if (read._tag === "Success") {
              assert.deepStrictEqual(
                read.events.map((e) => e.event!.eventNumber),
                [2, 3, 4]
              )
              assert.strictEqual(read.lastEventNumber, 4)
              assert.isTrue(read.isEndOfStream)
            }
            const back = yield* db.store.readStreamBackward("s", -1, 100)
            assert.deepStrictEqual(
              back._tag === "Success" ? back.events.map((e) => e.event!.eventNumber) : back,
              [4, 3, 2]
            )
            assert.deepStrictEqual(yield* db.store.readEvent("s", 1), { _tag: "NotFound" })
            const meta = yield* db.store.getStreamMetadata("s")
            assert.strictEqual(meta.metadata.truncateBefore, 2)
            assert.strictEqual(meta.metaLastEventNumber, 1)
            assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { $tb: 2 })
            // After recreation NoStream is WEV and Any keeps appending.
            yield* expectWev(db.store.append("s", NoStream, [ev(20)]), 4)
            const more = yield* db.store.append("s", Any, evs(21, 2))
            assert.deepStrictEqual([more.firstEventNumber, more.lastEventNumber], [5, 6])
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [2, 3, 4, 5, 6])
            // `$all` still holds the old events and both metadata events.
            const all = (yield* readAll(db.store)).filter((e) => e.stream === "s" || e.stream === "$$s")
            assert.deepStrictEqual(
              all.map((e) => `${e.stream}#${e.eventNumber}`),
              ["s#0", "s#1", "$$s#0", "s#2", "s#3", "s#4", "$$s#1", "s#5", "s#6"]
            )
          })
        )

        it.scoped("a soft delete replaces earlier metadata; recreation keeps only `$tb`", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 2))
            yield* db.store.setStreamMetadata(
              "s",
              NoStream,
              json({ $maxCount: 10, custom: "x", $acl: { $r: "$admins" } })
            )
            yield* db.store.deleteStream("s", 1, false)
            yield* db.reopen(reopen)
            const meta = yield* db.store.getStreamMetadata("s")
            assert.strictEqual(meta.metaLastEventNumber, 1)
            assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { $tb: 2 ** 63 }) // long.MaxValue, as JSON.parse reads it
            assert.isUndefined(meta.metadata.maxCount)
            assert.isUndefined(meta.metadata.acl)
            yield* db.store.append("s", Any, [ev(5)])
            assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { $tb: 2 })
          })
        )

        it.scoped(
          "soft delete through metadata (`$tb` = long.MaxValue) keeps the other keys, and recreation keeps them too",
          () =>
            Effect.gen(function* () {
              const db = yield* openDb(hash.overrides)
              yield* db.store.append("s", NoStream, evs(0, 3))
              yield* db.store.setStreamMetadata(
                "s",
                NoStream,
                Buffer.from(`{"$maxCount":10,"custom":{"a":[1,2]},"$tb":9223372036854775807}`)
              )
              yield* db.reopen(reopen)
              yield* assertSoftDeleted(db.store, "s", 2)
              yield* db.store.append("s", NoStream, [ev(5)])
              assert.deepStrictEqual(yield* metadataJson(db.store, "s"), {
                $maxCount: 10,
                custom: { a: [1, 2] },
                $tb: 3
              })
              assert.strictEqual((yield* db.store.getStreamMetadata("s")).metadata.maxCount, 10)
              assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [3])
            })
        )

        const recreations: ReadonlyArray<{ name: string; expected: number; first: number }> = [
          { name: "NoStream", expected: NoStream, first: 2 },
          { name: "Any", expected: Any, first: 2 },
          { name: "the last event number", expected: 1, first: 2 }
        ]
        for (const r of recreations) {
          it.scoped(`an append with ${r.name} recreates the stream`, () =>
            Effect.gen(function* () {
              const db = yield* openDb(hash.overrides)
              yield* softDeletedStream(db.store)
              yield* db.reopen(reopen)
              const result = yield* db.store.append("s", r.expected, evs(10, 2))
              assert.deepStrictEqual(
                [result.firstEventNumber, result.lastEventNumber, result.idempotent],
                [r.first, r.first + 1, false]
              )
              yield* db.reopen(reopen)
              assert.deepStrictEqual(yield* streamIds(db.store, "s"), [uuid(10), uuid(11)])
              assert.strictEqual((yield* db.store.getStreamMetadata("s")).metadata.truncateBefore, 2)
            })
          )
        }

        it.scoped("StreamExists on a soft-deleted stream is StreamDeleted; N < L mismatching and N > L are WEV", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* softDeletedStream(db.store)
            yield* db.reopen(reopen)
            yield* expectDeleted(db.store.append("s", StreamExists, [ev(10)]))
            yield* expectWev(db.store.append("s", 0, [ev(10)]), 1)
            yield* expectWev(db.store.append("s", 2, [ev(10)]), 1)
            yield* expectWev(db.store.append("s", 7, [ev(10)]), 1)
            // An exact retry of the original write still matches the log: idempotent, nothing recreated.
            const retry = yield* db.store.append("s", 0, [ev(1)])
            assert.deepStrictEqual([retry.firstEventNumber, retry.lastEventNumber, retry.idempotent], [1, 1, true])
            yield* assertSoftDeleted(db.store, "s", 1)
          })
        )

        it.scoped(
          "JSON metadata written to `$$S` of a soft-deleted S recreates it (metastream version + 2, old events hidden)",
          () =>
            Effect.gen(function* () {
              const db = yield* openDb(hash.overrides)
              yield* softDeletedStream(db.store)
              const written = yield* db.store.setStreamMetadata("s", 0, json({ custom: 1, $maxCount: 5 }))
              assert.deepStrictEqual([written.firstEventNumber, written.lastEventNumber], [1, 1])
              yield* db.reopen(reopen)
              const meta = yield* db.store.getStreamMetadata("s")
              assert.strictEqual(meta.metaLastEventNumber, 2)
              assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { custom: 1, $maxCount: 5, $tb: 2 })
              const read = yield* db.store.readStreamForward("s", 0, 10)
              assert.deepStrictEqual(read, {
                _tag: "Success",
                events: [],
                nextEventNumber: 2,
                lastEventNumber: 1,
                isEndOfStream: true,
                metadata: meta.metadata
              })
              const result = yield* db.store.append("s", Any, [ev(10)])
              assert.strictEqual(result.firstEventNumber, 2)
              assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [2])
            })
        )

        it.scoped("JSON metadata on a soft-deleted stream without events sets `$tb` to 0", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.setStreamMetadata("s", NoStream, json({ a: 1 }))
            yield* db.store.deleteStream("s", Any, false)
            yield* db.store.setStreamMetadata("s", Any, json({ b: 2 }))
            yield* db.reopen(reopen)
            const meta = yield* db.store.getStreamMetadata("s")
            assert.strictEqual(meta.metaLastEventNumber, 3)
            assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { b: 2, $tb: 0 })
            yield* db.store.append("s", NoStream, [ev(1)])
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0])
          })
        )

        it.scoped("non-JSON metadata on a soft-deleted stream makes the old events visible again", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* softDeletedStream(db.store)
            yield* db.store.setStreamMetadata("s", Any, Buffer.from("not json"), { isJson: false })
            yield* db.reopen(reopen)
            const meta = yield* db.store.getStreamMetadata("s")
            assert.strictEqual(meta.metaLastEventNumber, 1)
            assert.isFalse(meta.isJson)
            assert.deepStrictEqual(meta.raw, Buffer.from("not json"))
            assert.isUndefined(meta.metadata.truncateBefore)
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0, 1])
          })
        )

        it.scoped(
          "metadata flagged non-JSON whose bytes are a JSON object still recreates (the reference rewrites the raw bytes)",
          () =>
            Effect.gen(function* () {
              const db = yield* openDb(hash.overrides)
              yield* softDeletedStream(db.store)
              yield* db.store.setStreamMetadata("s", Any, Buffer.from(`{"a":1}`), { isJson: false })
              yield* db.reopen(reopen)
              const meta = yield* db.store.getStreamMetadata("s")
              assert.strictEqual(meta.metaLastEventNumber, 2)
              assert.isTrue(meta.isJson)
              assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { a: 1, $tb: 2 })
              const read = yield* db.store.readStreamForward("s", 0, 10)
              assert.deepStrictEqual(read._tag === "Success" ? read.events.length : read, 0)
            })
        )

        it.scoped("recreation keeps the other metadata values exactly, numbers past 2^53 included", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 2))
            const body = `{"big":12345678901234567890,"$maxCount":9223372036854775807,"nested":{"x":[1.50,"a\\"b"]},"$tb":9223372036854775807}`
            yield* db.store.setStreamMetadata("s", NoStream, Buffer.from(body))
            yield* db.reopen(reopen)
            yield* assertSoftDeleted(db.store, "s", 1)
            yield* db.store.append("s", Any, [ev(10)])
            const meta = yield* db.store.getStreamMetadata("s")
            assert.strictEqual(
              meta.raw!.toString(),
              `{"big":12345678901234567890,"$maxCount":9223372036854775807,"nested":{"x":[1.50,"a\\"b"]},"$tb":2}`
            )
            assert.strictEqual(meta.metadata.truncateBefore, 2)
            assert.strictEqual(meta.metadata.maxCount, Number.MAX_SAFE_INTEGER)
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [2])
          })
        )

        it.scoped("soft-deleting a stream with no events and no metadata is WEV; with only metadata it succeeds", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* expectWev(db.store.deleteStream("s", Any, false), -1)
            yield* expectWev(db.store.deleteStream("s", NoStream, false), -1)
            assert.strictEqual((yield* readAll(db.store)).filter((e) => e.stream.endsWith("s")).length, 0)
            yield* db.store.setStreamMetadata("m", NoStream, json({ a: 1 }))
            yield* db.store.deleteStream("m", NoStream, false)
            yield* db.reopen(reopen)
            assert.deepStrictEqual(yield* db.store.readStreamForward("m", 0, 10), {
              _tag: "NoStream",
              lastEventNumber: -1
            })
            assert.strictEqual((yield* db.store.getStreamMetadata("m")).metadata.truncateBefore, DeletedStreamNumber)
          })
        )

        it.scoped("soft delete checks the expected version", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 3))
            yield* expectWev(db.store.deleteStream("s", 1, false), 2)
            yield* expectWev(db.store.deleteStream("s", NoStream, false), 2)
            yield* expectWev(db.store.deleteStream("s", 5, false), 2)
            yield* db.store.deleteStream("s", 2, false)
            yield* db.reopen(reopen)
            yield* assertSoftDeleted(db.store, "s", 2)
            yield* expectDeleted(db.store.deleteStream("s", StreamExists, false))
          })
        )

        it.scoped("a soft-deleted stream can be hard-deleted", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* softDeletedStream(db.store)
            yield* db.store.deleteStream("s", Any, true)
            yield* db.reopen(reopen)
            yield* assertHardDeleted(db.store, "s")
          })
        )

        it.scoped("recreation in the same round as the soft delete (concurrent submissions)", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 2))
            const [, recreated] = yield* Effect.all(
              [db.store.deleteStream("s", 1, false), db.store.append("s", NoStream, evs(10, 1))],
              { concurrency: "unbounded" }
            )
            assert.strictEqual(recreated.firstEventNumber, 2)
            yield* db.reopen(reopen)
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [2])
            assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { $tb: 2 })
          })
        )
      })
    }
  }
})
