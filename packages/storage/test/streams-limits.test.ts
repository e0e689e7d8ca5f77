/**
 * Limits and bad input: invalid stream names, event types and ids,
 * oversized events and writes are InvalidRequest with a clear reason and write nothing; read counts
 * outside 1..maxReadCount and bad positions or numbers are rejected.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { ExpectedVersion, type ProposedEvent } from "../src/index.js"
import { ev, evs, expectInvalid, json, openDb, readAll, streamNumbers } from "./streams-harness.js"

const { Any, NoStream } = ExpectedVersion

describe("streams: limits and bad input", () => {
  const badAppends: ReadonlyArray<{
    name: string
    stream: string
    expected?: number
    events: ReadonlyArray<ProposedEvent>
    reason: RegExp
  }> = [
    { name: "an empty stream name", stream: "", events: [ev(1)], reason: /stream name is empty/ },
    { name: "'$$' alone", stream: "$$", events: [ev(1)], reason: /'\$\$' is not a valid stream name/ },
    { name: "writing $all", stream: "$all", events: [ev(1)], reason: /'\$all' cannot be written/ },
    {
      name: "an empty event type",
      stream: "s",
      events: [ev(1), ev(2, { type: "" })],
      reason: /event type must not be empty/
    },
    {
      name: "a non-UUID event id",
      stream: "s",
      events: [ev(1), { ...ev(2), eventId: "not-a-uuid" }],
      reason: /'not-a-uuid' is not a UUID/
    },
    { name: "an empty event id", stream: "s", events: [{ ...ev(2), eventId: "" }], reason: /is not a UUID/ },
    {
      name: "an expected version of -3",
      stream: "s",
      expected: -3,
      events: [ev(1)],
      reason: /expected version -3 is not valid/
    },
    {
      name: "an expected version of -5",
      stream: "s",
      expected: -5,
      events: [ev(1)],
      reason: /expected version -5 is not valid/
    },
    {
      name: "a fractional expected version",
      stream: "s",
      expected: 1.5,
      events: [ev(1)],
      reason: /expected version 1.5 is not valid/
    }
  ]
  for (const c of badAppends) {
    it.scoped(`append: ${c.name} → InvalidRequest, nothing written`, () =>
      Effect.gen(function* () {
        const db = yield* openDb()
        const before = yield* db.store.committedPosition
        yield* expectInvalid(db.store.append(c.stream, c.expected ?? Any, c.events), c.reason)
        assert.strictEqual(yield* db.store.committedPosition, before)
        assert.strictEqual((yield* db.store.readStreamForward("s", 0, 10))._tag, "NoStream")
      })
    )
  }

  it.scoped("metadata writes and deletes with bad names are InvalidRequest", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      const before = yield* db.store.committedPosition
      yield* expectInvalid(db.store.deleteStream("", Any, true), /stream name is empty/)
      yield* expectInvalid(db.store.deleteStream("$$", Any, false), /not a valid stream name/)
      yield* expectInvalid(db.store.deleteStream("$all", Any, true), /cannot be written/)
      yield* expectInvalid(db.store.deleteStream("$$s", Any, true), /metastream cannot be deleted/)
      yield* expectInvalid(db.store.setStreamMetadata("s", Any, json({}), { eventId: "nope" }), /not a UUID/)
      yield* expectInvalid(db.store.setStreamMetadata("", Any, json({})), /not a valid stream name/)
      assert.strictEqual(yield* db.store.committedPosition, before)
      // `$all` has metadata (`$$$all`), though it cannot be written to.
      yield* db.store.setStreamMetadata("$all", NoStream, json({ $acl: { $r: "$all" } }))
      assert.deepStrictEqual((yield* db.store.getStreamMetadata("$all")).metadata.acl?.read, ["$all"])
    })
  )

  it.scoped("system streams and unusual names are valid", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      for (const [i, stream] of [
        "$user-stream",
        "$$$all",
        "a@b",
        "with space",
        "ünïcødé-🙂",
        "x".repeat(1000)
      ].entries()) {
        yield* db.store.append(stream, NoStream, [ev(i)])
        assert.deepStrictEqual(yield* streamNumbers(db.store, stream), [0])
      }
    })
  )

  it.scoped("event ids are compared case- and dash-insensitively (normalized UUIDs)", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      const id = "ABCDEF01-2345-4678-9ABC-DEF012345678"
      yield* db.store.append("s", NoStream, [{ ...ev(0), eventId: id }])
      const retry = yield* db.store.append("s", NoStream, [{ ...ev(0), eventId: id.toLowerCase() }])
      assert.isTrue(retry.idempotent)
      const read = yield* db.store.readEvent("s", 0)
      assert.strictEqual(read._tag === "Success" ? read.event.event!.eventId : read._tag, id.toLowerCase())
    })
  )

  describe("sizes", () => {
    const config = { maxEventSize: 1000, chunkSize: 4096 }

    it.scoped("an event of exactly maxEventSize (data + metadata + 2 × type length) is accepted", () =>
      Effect.gen(function* () {
        const db = yield* openDb(config)
        // 900 + 80 + 2 × 10 = 1000
        yield* db.store.append("s", NoStream, [
          ev(1, { type: "0123456789", data: "d".repeat(900), metadata: "m".repeat(80) })
        ])
        assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0])
      })
    )

    it.scoped("an event over maxEventSize is InvalidRequest and its batch writes nothing", () =>
      Effect.gen(function* () {
        const db = yield* openDb(config)
        const before = yield* db.store.committedPosition
        yield* expectInvalid(
          db.store.append("s", NoStream, [
            ev(1),
            ev(2, { type: "0123456789", data: "d".repeat(901), metadata: "m".repeat(80) })
          ]),
          /event 00000000-0000-4000-8000-000000000002 is 1001 bytes; the limit is 1000 bytes/
        )
        // Type length counts twice.
        yield* expectInvalid(db.store.append("s", NoStream, [ev(3, { type: "t".repeat(501), data: "" })]), /1002 bytes/)
        assert.strictEqual(yield* db.store.committedPosition, before)
        assert.strictEqual((yield* db.store.readStreamForward("s", 0, 10))._tag, "NoStream")
      })
    )

    it.scoped(
      "a write larger than a chunk is InvalidRequest and writes nothing; other writes in the same round go through",
      () =>
        Effect.gen(function* () {
          const db = yield* openDb({ chunkSize: 4096 })
          yield* db.store.append("s", NoStream, evs(0, 2))
          const before = (yield* readAll(db.store)).length
          const big = Array.from({ length: 6 }, (_, i) => ev(10 + i, { data: "x".repeat(700) }))
          const [tooBig, small] = yield* Effect.all(
            [Effect.flip(db.store.append("s", 1, big)), db.store.append("t", NoStream, evs(20, 1))],
            { concurrency: "unbounded" }
          )
          assert.strictEqual(tooBig._tag, "InvalidRequest")
          assert.match((tooBig as { message: string }).message, /does not fit in a chunk of 4096 bytes/)
          assert.strictEqual(small.firstEventNumber, 0)
          assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0, 1])
          assert.strictEqual((yield* readAll(db.store)).length, before + 1)
          // A write that nearly fills a chunk still fits (it starts a fresh chunk).
          const nearlyFull = Array.from({ length: 5 }, (_, i) => ev(30 + i, { data: "x".repeat(700) }))
          const ok = yield* db.store.append("s", 1, nearlyFull)
          assert.deepStrictEqual([ok.firstEventNumber, ok.lastEventNumber], [2, 6])
          yield* db.restart
          assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0, 1, 2, 3, 4, 5, 6])
        })
    )

    // Live clock: the timeout must fire if the writer dies.
    it.scopedLive(
      "an event whose record would exceed the 16 MiB record limit (long stream name) is InvalidRequest, and the writer keeps working",
      () =>
        Effect.gen(function* () {
          const db = yield* openDb({ chunkSize: 64 * 1024 * 1024, memtableMaxEntries: 1000 })
          const maxEventSize = db.config.maxEventSize
          const stream = "s".repeat(200_000)
          const data = Buffer.alloc(maxEventSize - 2, 0x61)
          const error = yield* Effect.flip(
            Effect.timeoutFail(db.store.append(stream, NoStream, [ev(1, { type: "T", data, isJson: false })]), {
              duration: "10 seconds",
              onTimeout: () => new Error("the append never completed")
            })
          )
          assert.strictEqual((error as { _tag?: string })._tag, "InvalidRequest", String(error))
          assert.match((error as { message: string }).message, /exceeds the record limit/)
          yield* db.store.append("after", NoStream, [ev(2)])
          assert.deepStrictEqual(yield* streamNumbers(db.store, "after"), [0])
        })
    )
  })

  describe("reads", () => {
    it.scoped("read counts outside 1..maxReadCount are InvalidRequest", () =>
      Effect.gen(function* () {
        const db = yield* openDb({ maxReadCount: 50 })
        yield* db.store.append("s", NoStream, evs(0, 3))
        for (const count of [0, -1, 51, 1.5, Number.NaN]) {
          yield* expectInvalid(db.store.readStreamForward("s", 0, count), /between 1 and 50/)
          yield* expectInvalid(db.store.readStreamBackward("s", -1, count), /between 1 and 50/)
          yield* expectInvalid(db.store.readAllForward(0, count), /between 1 and 50/)
          yield* expectInvalid(db.store.readAllBackward(-1, count), /between 1 and 50/)
        }
        assert.strictEqual((yield* db.store.readStreamForward("s", 0, 50))._tag, "Success")
        assert.strictEqual((yield* db.store.readAllForward(0, 50)).events.length, 4)
      })
    )

    it.scoped("the default maxReadCount is 4096", () =>
      Effect.gen(function* () {
        const db = yield* openDb()
        assert.strictEqual(db.config.maxReadCount, 4096)
        yield* expectInvalid(db.store.readStreamForward("s", 0, 4097), /between 1 and 4096/)
        assert.strictEqual((yield* db.store.readStreamForward("s", 0, 4096))._tag, "NoStream")
      })
    )

    it.scoped("bad event numbers and positions are InvalidRequest", () =>
      Effect.gen(function* () {
        const db = yield* openDb()
        yield* expectInvalid(db.store.readStreamForward("s", -1, 10), /event number -1 is not valid/)
        yield* expectInvalid(db.store.readStreamForward("s", 0.5, 10), /not valid/)
        yield* expectInvalid(db.store.readStreamBackward("s", -2, 10), /event number -2 is not valid/)
        yield* expectInvalid(db.store.readEvent("s", -2), /event number -2 is not valid/)
      })
    )
  })
})

describe("well-formed names", () => {
  it.scoped("refuses lone surrogates in stream names and event types, which UTF-8 storage would change", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      const typed = (type: string): ProposedEvent => ({ ...ev(1), eventType: type })
      yield* expectInvalid(db.store.append("bad-\ud800", ExpectedVersion.Any, [ev(1)]), /not well-formed Unicode/)
      yield* expectInvalid(db.store.append("ok", ExpectedVersion.Any, [typed("T\udc00")]), /well-formed Unicode/)
      const fine = yield* db.store.append("emoji-\ud83d\ude00", ExpectedVersion.Any, [ev(2)])
      assert.strictEqual(fine.firstEventNumber, 0)
    })
  )
})
