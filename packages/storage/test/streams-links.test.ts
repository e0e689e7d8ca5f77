/**
 * Link events: `$>` with "N@stream" resolves with the target stream's
 * read rules; failures come back as the link with no target; unparsable payloads come back unresolved;
 * nothing is resolved unless asked.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import {
  ExpectedVersion,
  SystemLinkAccess,
  type EventStoreService,
  type LinkAccess,
  type ResolvedEvent
} from "../src/index.js"
import { Hashes, Reopens, evs, json, link, openDb, uuid } from "./streams-harness.js"

const { Any, NoStream } = ExpectedVersion

/** What a resolved event looks like, compactly: the target "stream#n", and the link's id. */
const shape = (r: ResolvedEvent) => ({
  event:
    r.event === undefined
      ? undefined
      : r.event.eventType === "$>"
        ? `link:${r.event.eventId}`
        : `${r.event.stream}#${r.event.eventNumber}`,
  link: r.link?.eventId
})

interface Case {
  readonly name: string
  readonly payload: string
  /** "resolved" to the target, "failed" (the link with no target) or "unresolved" (the link as a plain event). */
  readonly expect:
    | { readonly kind: "resolved"; readonly target: string }
    | { readonly kind: "failed" }
    | { readonly kind: "unresolved" }
}

const cases: ReadonlyArray<Case> = [
  { name: "a plain link", payload: "1@target", expect: { kind: "resolved", target: "target#1" } },
  { name: "the first event", payload: "0@target", expect: { kind: "resolved", target: "target#0" } },
  {
    name: "a stream name containing '@' (split on the first '@')",
    payload: "1@a@b",
    expect: { kind: "resolved", target: "a@b#1" }
  },
  { name: "a stream name that is only '@'", payload: "0@@", expect: { kind: "resolved", target: "@#0" } },
  {
    name: "whitespace and a sign around the number (long.TryParse)",
    payload: " +1 @target",
    expect: { kind: "resolved", target: "target#1" }
  },
  {
    name: "-1: the last event (ReadEvent's -1)",
    payload: "-1@target",
    expect: { kind: "resolved", target: "target#2" }
  },
  { name: "an event past the end", payload: "9@target", expect: { kind: "failed" } },
  { name: "a missing stream", payload: "0@missing", expect: { kind: "failed" } },
  { name: "a hard-deleted stream", payload: "0@hard", expect: { kind: "failed" } },
  { name: "a soft-deleted stream", payload: "0@soft", expect: { kind: "failed" } },
  { name: "an event below $tb", payload: "0@truncated", expect: { kind: "failed" } },
  { name: "an event kept by $tb", payload: "2@truncated", expect: { kind: "resolved", target: "truncated#2" } },
  { name: "an event outside $maxCount", payload: "1@capped", expect: { kind: "failed" } },
  { name: "an event inside $maxCount", payload: "2@capped", expect: { kind: "resolved", target: "capped#2" } },
  { name: "an expired event ($maxAge)", payload: "0@aged", expect: { kind: "failed" } },
  { name: "a live event ($maxAge)", payload: "1@aged", expect: { kind: "resolved", target: "aged#1" } },
  { name: "an event number below -1", payload: "-2@target", expect: { kind: "failed" } },
  { name: "a number with no stream", payload: "1", expect: { kind: "failed" } },
  { name: "an empty stream name", payload: "1@", expect: { kind: "failed" } },
  { name: "a number that is not an integer", payload: "x@target", expect: { kind: "unresolved" } },
  { name: "an empty number", payload: "@target", expect: { kind: "unresolved" } },
  { name: "a fraction", payload: "1.0@target", expect: { kind: "unresolved" } },
  { name: "an exponent", payload: "1e0@target", expect: { kind: "unresolved" } },
  { name: "hexadecimal", payload: "0x1@target", expect: { kind: "unresolved" } },
  { name: "a number beyond long", payload: "99999999999999999999@target", expect: { kind: "unresolved" } },
  { name: "garbage", payload: "garbage", expect: { kind: "unresolved" } }
]

/** Targets with every read rule, and the links (ids 1000 + i) in stream "links". */
const setup = (store: EventStoreService) =>
  Effect.gen(function* () {
    yield* TestClock.adjust("1000 seconds")
    yield* store.append("aged", NoStream, evs(300, 1))
    yield* TestClock.adjust("100 seconds")
    yield* store.append("aged", 0, evs(301, 1))
    yield* store.setStreamMetadata("aged", NoStream, json({ $maxAge: 50 }))
    yield* store.append("target", NoStream, evs(0, 3))
    yield* store.append("a@b", NoStream, evs(10, 2))
    yield* store.append("@", NoStream, evs(15, 1))
    yield* store.append("hard", NoStream, evs(20, 2))
    yield* store.deleteStream("hard", Any, true)
    yield* store.append("soft", NoStream, evs(30, 2))
    yield* store.deleteStream("soft", Any, false)
    yield* store.append("truncated", NoStream, evs(40, 3))
    yield* store.setStreamMetadata("truncated", NoStream, json({ $tb: 2 }))
    yield* store.append("capped", NoStream, evs(50, 3))
    yield* store.setStreamMetadata("capped", NoStream, json({ $maxCount: 1 }))
    yield* store.append(
      "links",
      NoStream,
      cases.map((c, i) => link(1000 + i, c.payload))
    )
  })

const expectedShape = (c: Case, i: number) =>
  c.expect.kind === "resolved"
    ? { event: c.expect.target, link: uuid(1000 + i) }
    : c.expect.kind === "failed"
      ? { event: undefined, link: uuid(1000 + i) }
      : { event: `link:${uuid(1000 + i)}`, link: undefined }

describe("streams: links", () => {
  for (const hash of Hashes) {
    for (const reopen of Reopens) {
      it.scoped(`${hash.name}, ${reopen}: resolution through every read, with the target's rules`, () =>
        Effect.gen(function* () {
          const db = yield* openDb(hash.overrides)
          yield* setup(db.store)
          yield* db.reopen(reopen)
          const s = db.store
          const forward = yield* s.readStreamForward("links", 0, 100, { resolveLinks: SystemLinkAccess })
          assert.strictEqual(forward._tag, "Success")
          const got = forward._tag === "Success" ? forward.events.map(shape) : []
          cases.forEach((c, i) => assert.deepStrictEqual(got[i], expectedShape(c, i), `${c.name} (${c.payload})`))

          const backward = yield* s.readStreamBackward("links", -1, 100, { resolveLinks: SystemLinkAccess })
          assert.deepStrictEqual(
            backward._tag === "Success" ? backward.events.map(shape) : backward,
            [...got].reverse()
          )

          for (let i = 0; i < cases.length; i++) {
            const one = yield* s.readEvent("links", i, { resolveLinks: SystemLinkAccess })
            assert.deepStrictEqual(one._tag === "Success" ? shape(one.event) : one, got[i])
          }

          const all = yield* s.readAllForward(0, 4096, { resolveLinks: SystemLinkAccess })
          assert.deepStrictEqual(all.events.filter((r) => (r.link ?? r.event)!.stream === "links").map(shape), got)
          const allBack = yield* s.readAllBackward(-1, 4096, { resolveLinks: SystemLinkAccess })
          assert.deepStrictEqual(
            allBack.events.filter((r) => (r.link ?? r.event)!.stream === "links").map(shape),
            [...got].reverse()
          )
        })
      )
    }
  }

  it.scoped("links are not resolved unless asked", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      yield* setup(db.store)
      const unresolved = cases.map((_, i) => ({ event: `link:${uuid(1000 + i)}`, link: undefined }))
      for (const options of [undefined, {}]) {
        const read = yield* db.store.readStreamForward("links", 0, 100, options)
        assert.deepStrictEqual(read._tag === "Success" ? read.events.map(shape) : read, unresolved)
        const one = yield* db.store.readEvent("links", 0, options)
        assert.deepStrictEqual(one._tag === "Success" ? shape(one.event) : one, unresolved[0])
        const all = yield* db.store.readAllForward(0, 4096, options)
        assert.deepStrictEqual(all.events.filter((r) => r.event!.stream === "links").map(shape), unresolved)
      }
    })
  )

  it.scoped("a resolved link carries the target's data; events that are not links pass through", () =>
    Effect.gen(function* () {
      const db = yield* openDb()
      yield* db.store.append("target", NoStream, evs(0, 2))
      yield* db.store.append("mixed", NoStream, [...evs(5, 1), link(6, "1@target"), ...evs(7, 1)])
      const read = yield* db.store.readStreamForward("mixed", 0, 10, { resolveLinks: SystemLinkAccess })
      assert.strictEqual(read._tag, "Success")
      if (read._tag === "Success") {
        assert.deepStrictEqual(read.events.map(shape), [
          { event: "mixed#0", link: undefined },
          { event: "target#1", link: uuid(6) },
          { event: "mixed#2", link: undefined }
        ])
        assert.strictEqual(read.events[1]!.event!.data.toString(), `{"i":1}`)
        assert.strictEqual(read.events[1]!.link!.eventNumber, 1)
        assert.strictEqual(read.events[1]!.link!.stream, "mixed")
      }
    })
  )

  it.scoped(
    "a reader's LinkAccess decides: denied targets read as links whose target is gone, asked once per stream per read",
    () =>
      Effect.gen(function* () {
        const db = yield* openDb()
        yield* db.store.append("open", NoStream, evs(0, 2))
        yield* db.store.append("closed", NoStream, evs(2, 2))
        const payloads = ["0@open", "0@closed", "1@open", "1@closed", "0@open", "x@closed", "0@missing"]
        yield* db.store.append(
          "links",
          NoStream,
          payloads.map((p, i) => link(100 + i, p))
        )
        const asked: Array<string> = []
        const access: LinkAccess = { mayRead: (stream) => Effect.sync(() => (asked.push(stream), stream !== "closed")) }
        const expected = [
          { event: "open#0", link: uuid(100) },
          { event: undefined, link: uuid(101) },
          { event: "open#1", link: uuid(102) },
          { event: undefined, link: uuid(103) },
          { event: "open#0", link: uuid(104) },
          { event: `link:${uuid(105)}`, link: undefined },
          { event: undefined, link: uuid(106) }
        ]
        const forward = yield* db.store.readStreamForward("links", 0, 100, { resolveLinks: access })
        assert.deepStrictEqual(forward._tag === "Success" ? forward.events.map(shape) : forward, expected)
        assert.deepStrictEqual(asked, ["open", "closed", "missing"])
        asked.length = 0
        const backward = yield* db.store.readStreamBackward("links", -1, 100, { resolveLinks: access })
        assert.deepStrictEqual(
          backward._tag === "Success" ? backward.events.map(shape) : backward,
          [...expected].reverse()
        )
        assert.deepStrictEqual(asked, ["missing", "open", "closed"])
        asked.length = 0
        const all = yield* db.store.readAllBackward(-1, 4096, { resolveLinks: access })
        assert.deepStrictEqual(
          all.events.filter((r) => (r.link ?? r.event)!.stream === "links").map(shape),
          [...expected].reverse()
        )
        assert.deepStrictEqual(asked, ["missing", "open", "closed"])
        asked.length = 0
        for (const [i, want] of expected.entries()) {
          const one = yield* db.store.readEvent("links", i, { resolveLinks: access })
          assert.deepStrictEqual(one._tag === "Success" ? shape(one.event) : one, want)
        }
        // A page without links asks nothing.
        asked.length = 0
        yield* db.store.readStreamForward("open", 0, 100, { resolveLinks: access })
        assert.deepStrictEqual(asked, [])
      })
  )
})
