/**
 * Stream metadata and the read rules it drives: `$maxCount`, `$tb`,
 * `$maxAge` (timestamps come from Effect's Clock, moved with TestClock), read bounds and paging fields,
 * metastreams, lenient parsing (malformed or overflowing → empty metadata), custom keys, `$acl`.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import {
  ExpectedVersion,
  SystemLinkAccess,
  parseMetadata,
  type EventStoreService,
  type StreamRead
} from "../src/index.js"
import { Hashes, Reopens, ev, evs, json, metadataJson, openDb, streamNumbers } from "./streams-harness.js"

const { Any, NoStream } = ExpectedVersion

interface Page {
  readonly numbers: ReadonlyArray<number>
  readonly next: number
  readonly last: number
  readonly end: boolean
}

const page = (read: StreamRead): Page | StreamRead["_tag"] =>
  read._tag !== "Success"
    ? read._tag
    : {
        numbers: read.events.map((e) => e.event!.eventNumber),
        next: read.nextEventNumber,
        last: read.lastEventNumber,
        end: read.isEndOfStream
      }

const fwd = (store: EventStoreService, stream: string, from: number, count: number) =>
  Effect.map(store.readStreamForward(stream, from, count), page)
const bwd = (store: EventStoreService, stream: string, from: number, count: number) =>
  Effect.map(store.readStreamBackward(stream, from, count), page)

/** 10 events (0..9) in S, a neighbour, then the metadata. */
const streamWith = (store: EventStoreService, metadata: unknown) =>
  Effect.gen(function* () {
    yield* store.append("s", NoStream, evs(0, 5))
    yield* store.append("n", NoStream, evs(100, 4))
    yield* store.append("s", 4, evs(5, 5))
    yield* store.setStreamMetadata("s", NoStream, typeof metadata === "string" ? Buffer.from(metadata) : json(metadata))
  })

describe("streams: metadata read rules", () => {
  for (const hash of Hashes) {
    for (const reopen of Reopens) {
      describe(`${hash.name}, ${reopen}`, () => {
        it.scoped("$maxCount: only the last N events are readable; lastEventNumber stays the true last", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* streamWith(db.store, { $maxCount: 3 })
            yield* db.reopen(reopen)
            const s = db.store
            assert.deepStrictEqual(yield* fwd(s, "s", 0, 100), { numbers: [7, 8, 9], next: 10, last: 9, end: true })
            assert.deepStrictEqual(yield* fwd(s, "s", 8, 100), { numbers: [8, 9], next: 10, last: 9, end: true })
            assert.deepStrictEqual(yield* fwd(s, "s", 5, 3), { numbers: [7], next: 8, last: 9, end: false })
            // The whole range below min: an empty page that is not the end, pointing at min.
            assert.deepStrictEqual(yield* fwd(s, "s", 0, 2), { numbers: [], next: 7, last: 9, end: false })
            assert.deepStrictEqual(yield* fwd(s, "s", 0, 7), { numbers: [], next: 7, last: 9, end: false })
            assert.deepStrictEqual(yield* fwd(s, "s", 10, 5), { numbers: [], next: 10, last: 9, end: true })
            assert.deepStrictEqual(yield* bwd(s, "s", -1, 100), { numbers: [9, 8, 7], next: -1, last: 9, end: true })
            assert.deepStrictEqual(yield* bwd(s, "s", -1, 2), { numbers: [9, 8], next: 7, last: 9, end: false })
            assert.deepStrictEqual(yield* bwd(s, "s", 7, 2), { numbers: [7], next: -1, last: 9, end: true })
            assert.deepStrictEqual(yield* bwd(s, "s", 3, 2), { numbers: [], next: -1, last: 9, end: true })
            assert.deepStrictEqual(yield* s.readEvent("s", 6), { _tag: "NotFound" })
            assert.strictEqual((yield* s.readEvent("s", 7))._tag, "Success")
            assert.strictEqual((yield* s.readEvent("s", -1))._tag, "Success")
            // The neighbour is unaffected.
            assert.deepStrictEqual(yield* streamNumbers(s, "n"), [0, 1, 2, 3])
            // More events move the window.
            yield* s.append("s", Any, evs(10, 2))
            assert.deepStrictEqual(yield* fwd(s, "s", 0, 100), { numbers: [9, 10, 11], next: 12, last: 11, end: true })
          })
        )

        it.scoped("$tb hides earlier events; backward paging fields", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* streamWith(db.store, { $tb: 4 })
            yield* db.reopen(reopen)
            const s = db.store
            assert.deepStrictEqual(yield* fwd(s, "s", 0, 100), {
              numbers: [4, 5, 6, 7, 8, 9],
              next: 10,
              last: 9,
              end: true
            })
            assert.deepStrictEqual(yield* fwd(s, "s", 0, 4), { numbers: [], next: 4, last: 9, end: false })
            assert.deepStrictEqual(yield* fwd(s, "s", 2, 4), { numbers: [4, 5], next: 6, last: 9, end: false })
            assert.deepStrictEqual(yield* bwd(s, "s", -1, 3), { numbers: [9, 8, 7], next: 6, last: 9, end: false })
            assert.deepStrictEqual(yield* bwd(s, "s", 6, 2), { numbers: [6, 5], next: 4, last: 9, end: false })
            assert.deepStrictEqual(yield* bwd(s, "s", 4, 2), { numbers: [4], next: -1, last: 9, end: true })
            assert.deepStrictEqual(yield* bwd(s, "s", 6, 3), { numbers: [6, 5, 4], next: -1, last: 9, end: true })
            // Backward from past the end.
            assert.deepStrictEqual(yield* bwd(s, "s", 20, 3), { numbers: [], next: 9, last: 9, end: false })
            assert.deepStrictEqual(yield* s.readEvent("s", 3), { _tag: "NotFound" })
            assert.strictEqual((yield* s.readEvent("s", 4))._tag, "Success")
            assert.deepStrictEqual(yield* s.readEvent("s", 10), { _tag: "NotFound" })
          })
        )

        it.scoped("$maxCount and $tb together: min = max(last - maxCount + 1, tb)", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* streamWith(db.store, { $maxCount: 8, $tb: 5 })
            yield* db.store.append("t", NoStream, evs(200, 10))
            yield* db.store.setStreamMetadata("t", NoStream, json({ $maxCount: 3, $tb: 5 }))
            yield* db.reopen(reopen)
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [5, 6, 7, 8, 9])
            assert.deepStrictEqual(yield* streamNumbers(db.store, "t"), [7, 8, 9])
          })
        )

        it.scoped("a huge $tb other than long.MaxValue hides every event without soft-deleting", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 3))
            yield* db.store.setStreamMetadata("s", NoStream, Buffer.from(`{"$tb": 9223372036854775806}`))
            yield* db.reopen(reopen)
            const read = yield* fwd(db.store, "s", 0, 10)
            assert.deepStrictEqual(read, { numbers: [], next: Number.MAX_SAFE_INTEGER - 1, last: 2, end: false })
            const appended = yield* db.store.append("s", ExpectedVersion.StreamExists, [ev(10)])
            assert.strictEqual(appended.firstEventNumber, 3)
            assert.deepStrictEqual(yield* db.store.readEvent("s", 3), { _tag: "NotFound" })
          })
        )

        it.scoped("backward paging without metadata walks the whole stream", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 10))
            yield* db.reopen(reopen)
            const pages = []
            let from = -1
            for (;;) {
              const p = yield* bwd(db.store, "s", from, 4)
              assert.notStrictEqual(typeof p, "string")
              if (typeof p === "string") break
              pages.push(p.numbers)
              if (p.end) {
                assert.strictEqual(p.next, -1)
                break
              }
              from = p.next
            }
            assert.deepStrictEqual(pages, [
              [9, 8, 7, 6],
              [5, 4, 3, 2],
              [1, 0]
            ])
          })
        )

        it.scoped("the metastream behaves as $maxCount 1", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 2))
            for (let i = 0; i < 3; i++) yield* db.store.setStreamMetadata("s", i - 1, json({ version: i }))
            // Metadata of the metastream itself cannot widen it.
            yield* db.store.setStreamMetadata("$$s", NoStream, json({ $maxCount: 100 }))
            yield* db.reopen(reopen)
            assert.deepStrictEqual(yield* fwd(db.store, "$$s", 0, 100), { numbers: [2], next: 3, last: 2, end: true })
            assert.deepStrictEqual(yield* fwd(db.store, "$$s", 0, 1), { numbers: [], next: 2, last: 2, end: false })
            assert.deepStrictEqual(yield* bwd(db.store, "$$s", -1, 100), { numbers: [2], next: -1, last: 2, end: true })
            assert.deepStrictEqual(yield* db.store.readEvent("$$s", 0), { _tag: "NotFound" })
            const last = yield* db.store.readEvent("$$s", -1)
            assert.strictEqual(last._tag === "Success" ? last.event.event!.data.toString() : last._tag, `{"version":2}`)
            assert.deepStrictEqual(yield* metadataJson(db.store, "s"), { version: 2 })
          })
        )

        it.scoped("getStreamMetadata: NoStream, metadata only, events only, custom keys kept, raw bytes returned", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            const body = `{"$maxCount":5,"custom":{"nested":[1,"two",{"three":3}]},"flag":true,"$cacheControl":30,"$tmp":true}`
            yield* db.store.setStreamMetadata("m", NoStream, Buffer.from(body))
            yield* db.store.append("e", NoStream, evs(0, 1))
            yield* db.reopen(reopen)
            const none = yield* db.store.getStreamMetadata("nothing")
            assert.deepStrictEqual([none._tag, none.metaLastEventNumber, none.raw], ["NoStream", -1, undefined])
            const eventsOnly = yield* db.store.getStreamMetadata("e")
            assert.deepStrictEqual(
              [eventsOnly._tag, eventsOnly.metaLastEventNumber, eventsOnly.metadata],
              ["Success", -1, {}]
            )
            const m = yield* db.store.getStreamMetadata("m")
            assert.strictEqual(m._tag, "Success")
            assert.strictEqual(m.metaLastEventNumber, 0)
            assert.isTrue(m.isJson)
            assert.strictEqual(m.raw!.toString(), body)
            assert.strictEqual(m.metadata.maxCount, 5)
            assert.strictEqual(m.metadata.cacheControl, 30)
            assert.strictEqual(m.metadata.tempStream, true)
            assert.deepStrictEqual(m.metadata.raw, JSON.parse(body))
            assert.deepStrictEqual(yield* db.store.readStreamForward("m", 0, 10), {
              _tag: "NoStream",
              lastEventNumber: -1
            })
          })
        )

        it.scoped("metadata takes effect for the next read, and the newest metadata wins", () =>
          Effect.gen(function* () {
            const db = yield* openDb(hash.overrides)
            yield* db.store.append("s", NoStream, evs(0, 6))
            yield* db.store.setStreamMetadata("s", NoStream, json({ $maxCount: 2 }))
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [4, 5])
            yield* db.store.setStreamMetadata("s", 0, json({ $tb: 1 }))
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [1, 2, 3, 4, 5])
            yield* db.store.setStreamMetadata("s", 1, json({}))
            yield* db.reopen(reopen)
            assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0, 1, 2, 3, 4, 5])
          })
        )
      })
    }
  }
})

describe("streams: $maxAge", () => {
  for (const hash of Hashes) {
    for (const reopen of Reopens) {
      it.scoped(`${hash.name}, ${reopen}: evaluated at read time with the Clock`, () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* TestClock.adjust("1000 seconds")
          yield* db.store.append("s", NoStream, evs(0, 5)) // t = 1000 s
          yield* TestClock.adjust("100 seconds")
          yield* db.store.append("s", 4, evs(5, 5)) // t = 1100 s
          yield* db.store.append("l", NoStream, [
            ev(50, { type: "$>", data: "2@s", isJson: false }),
            ev(51, { type: "$>", data: "7@s", isJson: false })
          ])
          yield* db.store.setStreamMetadata("s", NoStream, json({ $maxAge: 50 }))
          yield* db.reopen(reopen)
          const s = db.store
          assert.deepStrictEqual(yield* fwd(s, "s", 0, 100), { numbers: [5, 6, 7, 8, 9], next: 10, last: 9, end: true })
          // A window wholly expired: empty, not the end, pointing at the first live event.
          const expiredWindow = yield* fwd(s, "s", 0, 3)
          assert.deepStrictEqual(expiredWindow, { numbers: [], next: 5, last: 9, end: false })
          assert.deepStrictEqual(yield* fwd(s, "s", 3, 4), { numbers: [5, 6], next: 7, last: 9, end: false })
          assert.deepStrictEqual((yield* bwd(s, "s", -1, 100)) as Page, {
            numbers: [9, 8, 7, 6, 5],
            next: -1,
            last: 9,
            end: true
          })
          assert.deepStrictEqual(yield* s.readEvent("s", 4), { _tag: "NotFound" })
          assert.strictEqual((yield* s.readEvent("s", 5))._tag, "Success")
          // Links into the expired part do not resolve.
          const links = yield* s.readStreamForward("l", 0, 10, { resolveLinks: SystemLinkAccess })
          assert.deepStrictEqual(links._tag === "Success" ? links.events.map((e) => e.event?.eventNumber) : links, [
            undefined,
            7
          ])
          // Time moves on: everything expires; lastEventNumber is still the true last.
          yield* TestClock.adjust("60 seconds")
          assert.deepStrictEqual(yield* fwd(s, "s", 0, 100), { numbers: [], next: 10, last: 9, end: true })
          assert.deepStrictEqual(yield* s.readEvent("s", -1), { _tag: "NotFound" })
          // New events are live again.
          yield* s.append("s", Any, [ev(10)])
          assert.deepStrictEqual(yield* fwd(s, "s", 0, 100), { numbers: [10], next: 11, last: 10, end: true })
          // Raising $maxAge brings old events back (nothing is removed until scavenge).
          yield* s.setStreamMetadata("s", 0, json({ $maxAge: 10_000 }))
          assert.deepStrictEqual(yield* streamNumbers(s, "s"), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
        })
      )
    }
  }
})

describe("streams: metadata parsing", () => {
  // Each body is written as the metadata of a stream with events 0..9 plus `$tb: 3` where the body allows.
  const empty: ReadonlyArray<{ name: string; body: string; isJson?: boolean }> = [
    { name: "malformed JSON", body: `{"$maxCount": 2, "$tb": 3` },
    { name: "a JSON array", body: `[{"$maxCount": 2}]` },
    { name: "a JSON string", body: `"$maxCount"` },
    { name: "JSON null", body: `null` },
    { name: "empty bytes", body: `` },
    { name: "not flagged JSON", body: `{"$maxCount": 2, "$tb": 3}`, isJson: false },
    { name: "$maxCount beyond long", body: `{"$maxCount": 99999999999999999999, "$tb": 3}` },
    { name: "$maxCount = long.MaxValue + 1", body: `{"$maxCount": 9223372036854775808, "$tb": 3}` },
    { name: "$tb = long.MaxValue + 1", body: `{"$tb": 9223372036854775808}` },
    { name: "$tb below long.MinValue", body: `{"$tb": -9223372036854775809, "$maxCount": 2}` },
    { name: "$maxAge beyond TimeSpan", body: `{"$maxAge": 9223372036854775807, "$tb": 3}` },
    { name: "$maxCount as a float", body: `{"$maxCount": 2.5, "$tb": 3}` },
    { name: "$maxCount written with a fraction", body: `{"$maxCount": 2.0, "$tb": 3}` },
    { name: "$maxCount with an exponent", body: `{"$maxCount": 2e0, "$tb": 3}` },
    { name: "$maxCount as a string", body: `{"$maxCount": "2", "$tb": 3}` },
    { name: "$maxCount null", body: `{"$maxCount": null, "$tb": 3}` },
    { name: "$tmp not a boolean", body: `{"$tmp": 1, "$tb": 3}` },
    { name: "$acl not an object", body: `{"$acl": "$admins", "$tb": 3}` },
    { name: "$acl role not a string", body: `{"$acl": {"$r": 5}, "$tb": 3}` },
    { name: "$acl role array with a number", body: `{"$acl": {"$r": ["a", 1]}, "$tb": 3}` },
    { name: "$acl with an unknown key", body: `{"$acl": {"$x": "a"}, "$tb": 3}` },
    { name: "an overflowing duplicate key", body: `{"$maxCount": 99999999999999999999, "$maxCount": 2, "$tb": 3}` }
  ]
  for (const c of empty) {
    it.scoped(`${c.name} → empty metadata: every event readable`, () =>
      Effect.gen(function* () {
        const db = yield* openDb()
        yield* db.store.append("s", NoStream, evs(0, 10))
        yield* db.store.setStreamMetadata("s", NoStream, Buffer.from(c.body), { isJson: c.isJson ?? true })
        const meta = yield* db.store.getStreamMetadata("s")
        assert.strictEqual(meta.raw!.toString(), c.body, "the raw bytes are kept")
        assert.deepStrictEqual(
          [
            meta.metadata.maxCount,
            meta.metadata.truncateBefore,
            meta.metadata.maxAge,
            meta.metadata.acl,
            meta.metadata.tempStream
          ],
          [undefined, undefined, undefined, undefined, undefined]
        )
        assert.deepStrictEqual(yield* streamNumbers(db.store, "s"), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      })
    )
  }

  const parsed: ReadonlyArray<{ name: string; body: string; expect: Record<string, unknown> }> = [
    {
      name: "$maxCount 0 is ignored, the rest applies",
      body: `{"$maxCount": 0, "$tb": 3}`,
      expect: { truncateBefore: 3, maxCount: undefined }
    },
    {
      name: "negative $maxCount and $maxAge are ignored",
      body: `{"$maxCount": -1, "$maxAge": -5, "$tb": 3}`,
      expect: { truncateBefore: 3, maxCount: undefined, maxAge: undefined }
    },
    {
      name: "negative $tb is ignored",
      body: `{"$tb": -1, "$maxCount": 4}`,
      expect: { truncateBefore: undefined, maxCount: 4 }
    },
    {
      name: "$tb = long.MaxValue means soft-deleted",
      body: `{"$tb": 9223372036854775807}`,
      expect: { truncateBefore: Number.MAX_SAFE_INTEGER }
    },
    {
      name: "$maxCount = long.MaxValue",
      body: `{"$maxCount": 9223372036854775807}`,
      expect: { maxCount: Number.MAX_SAFE_INTEGER }
    },
    {
      name: "$tb past 2^53 but below long.MaxValue hides everything without soft-deleting",
      body: `{"$tb": 9223372036854775806}`,
      expect: { truncateBefore: Number.MAX_SAFE_INTEGER - 1 }
    },
    { name: "large $maxAge within TimeSpan", body: `{"$maxAge": 922337203685}`, expect: { maxAge: 922337203685 } },
    {
      name: "keys are read anywhere in the object, custom keys skipped",
      body: `{"a": {"$maxCount": "x", "b": [1, 2.5, null]}, "$maxCount": 2, "z": null}`,
      expect: { maxCount: 2 }
    },
    { name: "the last duplicate key wins", body: `{"$maxCount": 5, "$maxCount": 2}`, expect: { maxCount: 2 } },
    { name: "escaped key names", body: `{"\\u0024maxCount": 2}`, expect: { maxCount: 2 } },
    {
      name: "whitespace around values",
      body: ` { "$maxCount" :\n 2 , "$tmp" : false } `,
      expect: { maxCount: 2, tempStream: undefined }
    }
  ]
  for (const c of parsed) {
    it(`${c.name}`, () => {
      const metadata = parseMetadata(Buffer.from(c.body), true) as unknown as Record<string, unknown>
      for (const [key, value] of Object.entries(c.expect)) assert.deepStrictEqual(metadata[key], value, key)
      assert.deepStrictEqual(metadata["raw"], JSON.parse(c.body))
    })
  }

  it("$acl: a role string or an array of role strings per operation", () => {
    const metadata = parseMetadata(
      json({ $acl: { $r: "reader", $w: ["a", "b"], $d: [], $mr: "$admins" }, other: 1 }),
      true
    )
    assert.deepStrictEqual(metadata.acl, {
      read: ["reader"],
      write: ["a", "b"],
      delete: [],
      metaRead: ["$admins"],
      metaWrite: undefined
    })
    assert.deepStrictEqual(parseMetadata(json({ $acl: {} }), true).acl, {
      read: undefined,
      write: undefined,
      delete: undefined,
      metaRead: undefined,
      metaWrite: undefined
    })
  })

  it.scoped("$acl round-trips through the store", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      yield* db.store.setStreamMetadata("s", NoStream, json({ $acl: { $r: ["r1", "r2"], $mw: "$admins" } }))
      yield* db.restart
      const meta = yield* db.store.getStreamMetadata("s")
      assert.deepStrictEqual(meta.metadata.acl, {
        read: ["r1", "r2"],
        write: undefined,
        delete: undefined,
        metaRead: undefined,
        metaWrite: ["$admins"]
      })
    })
  )
})
