/**
 * Reads over HTTP: feeds and paging, caching and conditional GET, the
 * description document, single events in every shape, metadata reads, link resolution, `$all` (plain
 * and filtered), long polling, and the read errors.
 */
import { describe, it, assert } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import {
  AdminAuth,
  EventsJson,
  UserAuth,
  appendEvents,
  header,
  json,
  makeTestNode,
  text,
  uuid,
  type TestNode
} from "./streams-harness.js"

const Json = { Accept: "application/json" }
const getJson = (node: TestNode, url: string, headers: Record<string, string> = {}) =>
  node.request("GET", url, { headers: { ...Json, ...headers } })
const linkOf = (feed: any, relation: string): string | undefined =>
  feed.links.find((l: any) => l.relation === relation)?.uri
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)

describe("stream feeds and paging", () => {
  it.scoped("25 events, page size 20: head, the previous-of-head page, and the older page", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", range(0, 25))
      const head = yield* getJson(node, "/streams/s")
      assert.strictEqual(head.status, 200)
      assert.strictEqual(header(head, "Content-Type"), "application/json; charset=utf-8")
      const feed = json(head)
      assert.strictEqual(feed.title, "Event stream 's'")
      assert.strictEqual(feed.headOfStream, true)
      assert.strictEqual(feed.entries.length, 20)
      assert.strictEqual(feed.entries[0].title, "24@s")
      assert.strictEqual(linkOf(feed, "first"), "http://localhost:2113/streams/s/head/backward/20")
      assert.strictEqual(linkOf(feed, "last"), "http://localhost:2113/streams/s/0/forward/20")
      assert.strictEqual(linkOf(feed, "next"), "http://localhost:2113/streams/s/4/backward/20")
      assert.strictEqual(linkOf(feed, "previous"), "http://localhost:2113/streams/s/25/forward/20")
      // The head is not cacheable: ETag (also in the body) and no-cache.
      assert.strictEqual(header(head, "ETag"), `"${feed.eTag}"`)
      assert.strictEqual(header(head, "Cache-Control"), "max-age=0, no-cache, must-revalidate")
      assert.strictEqual(header(head, "Vary"), "Accept")

      const live = yield* getJson(node, "/streams/s/25/forward/20")
      const liveFeed = json(live)
      assert.strictEqual(liveFeed.entries.length, 0)
      assert.strictEqual(liveFeed.headOfStream, true)
      assert.isUndefined(linkOf(liveFeed, "previous"))
      assert.isDefined(header(live, "ETag"))

      const older = yield* getJson(node, "/streams/s/4/backward/20")
      assert.deepStrictEqual(
        json(older).entries.map((e: any) => e.title),
        ["4@s", "3@s", "2@s", "1@s", "0@s"]
      )
      assert.strictEqual(header(older, "Cache-Control"), "max-age=31536000, private")
      assert.isUndefined(header(older, "ETag"))
      // `/{n}/{count}` is a backward page too.
      assert.deepStrictEqual(
        json(yield* getJson(node, "/streams/s/4/2")).entries.map((e: any) => e.title),
        ["4@s", "3@s"]
      )
    })
  )

  it.scoped("forward pages: entries newest first, full pages immutable, headOfStream at the end", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", range(0, 5))
      const full = yield* getJson(node, "/streams/s/0/forward/3")
      assert.deepStrictEqual(
        json(full).entries.map((e: any) => e.title),
        ["2@s", "1@s", "0@s"]
      )
      assert.strictEqual(json(full).headOfStream, false)
      assert.strictEqual(header(full, "Cache-Control"), "max-age=31536000, private")
      const end = yield* getJson(node, "/streams/s/3/forward/3")
      assert.strictEqual(json(end).headOfStream, true)
      assert.strictEqual(header(end, "Cache-Control"), "max-age=0, no-cache, must-revalidate")
    })
  )

  it.scoped("$cacheControl sets the head's max-age; XML and HTML feeds", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      yield* node.request("POST", "/streams/s/metadata", {
        headers: { "Content-Type": "application/json", "ES-EventId": uuid(99) },
        body: '{"$cacheControl": 30}'
      })
      assert.strictEqual(header(yield* getJson(node, "/streams/s"), "Cache-Control"), "max-age=30, private")
      const xml = yield* node.request("GET", "/streams/s", { headers: { Accept: "application/atom+xml" } })
      assert.strictEqual(header(xml, "Content-Type"), "application/atom+xml; charset=utf-8")
      assert.match(
        text(xml),
        /^<\?xml version="1.0" encoding="utf-8"\?>\s*<feed xmlns="http:\/\/www.w3.org\/2005\/Atom">/
      )
      const html = yield* node.request("GET", "/streams/s", { headers: { Accept: "text/html" } })
      assert.strictEqual(header(html, "Content-Type"), "text/html; charset=utf-8")
      assert.match(text(html), /window\.location\.replace/)
    })
  )

  it.scoped("X-Forwarded-Prefix appears in every link", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const feed = json(yield* getJson(node, "/streams/s", { "X-Forwarded-Prefix": "testprefix" }))
      assert.strictEqual(feed.id, "http://localhost:2113/testprefix/streams/s")
      assert.strictEqual(feed.entries[0].id, "http://localhost:2113/testprefix/streams/s/0")
    })
  )
})

describe("conditional GET", () => {
  it.scoped("If-None-Match with the head's ETag is 304 with no cache headers; another type or version is 200", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1, 2])
      const head = yield* getJson(node, "/streams/s")
      const etag = header(head, "ETag")!
      const hit = yield* getJson(node, "/streams/s", { "If-None-Match": etag })
      assert.strictEqual(hit.status, 304)
      assert.strictEqual(hit.reason, "Not Modified")
      assert.strictEqual(text(hit), "")
      assert.strictEqual(header(hit, "Content-Type"), "text/plain; charset=utf-8")
      assert.isUndefined(header(hit, "ETag"))
      assert.isUndefined(header(hit, "Cache-Control"))
      // The body's eTag (unquoted) works too; any page, not just the head.
      assert.strictEqual(
        (yield* getJson(node, "/streams/s/5/forward/20", { "If-None-Match": json(head).eTag })).status,
        304
      )
      assert.strictEqual(
        (yield* node.request("GET", "/streams/s", {
          headers: { Accept: "application/atom+xml", "If-None-Match": etag }
        })).status,
        200
      )
      yield* appendEvents(node, "s", [3])
      assert.strictEqual((yield* getJson(node, "/streams/s", { "If-None-Match": etag })).status, 200)
    })
  )
})

describe("description document", () => {
  it.scoped(
    "no Accept or */* on the head → 406 with the document; asked for explicitly → 200; forward pages are feeds",
    () =>
      Effect.gen(function* () {
        const node = yield* makeTestNode()
        yield* appendEvents(node, "s", [1])
        for (const headers of [{}, { Accept: "*/*" }] as ReadonlyArray<Record<string, string>>) {
          const reply = yield* node.request("GET", "/streams/s", { headers })
          assert.strictEqual(reply.status, 406)
          assert.strictEqual(reply.reason, "Description Document")
          assert.strictEqual(header(reply, "Content-Type"), "application/vnd.kurrent.streamdesc+json; charset=utf-8")
          assert.strictEqual(json(reply).title, "Description document for 's'")
        }
        const asked = yield* node.request("GET", "/streams/s", {
          headers: { Accept: "application/vnd.eventstore.streamdesc+json" }
        })
        assert.strictEqual(asked.status, 200)
        assert.deepStrictEqual(json(asked)._links.self.supportedContentTypes, [
          "application/vnd.eventstore.streamdesc+json"
        ])
        const forward = yield* node.request("GET", "/streams/s/0/forward/20")
        assert.strictEqual(forward.status, 200)
        assert.strictEqual(header(forward, "Content-Type"), "application/vnd.kurrent.streamdesc+json; charset=utf-8")
        assert.strictEqual(json(forward).title, "Event stream 's'")
      })
  )
})

describe("single events", () => {
  it.scoped("each media type's shape; numbered events immutable, head with an ETag", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1, 2])
      const data = yield* getJson(node, "/streams/s/0")
      assert.deepStrictEqual(json(data), { n: 1 })
      assert.strictEqual(header(data, "Cache-Control"), "max-age=31536000, private")
      const entry = json(
        yield* node.request("GET", "/streams/s/0", { headers: { Accept: "application/vnd.kurrent.atom+json" } })
      )
      assert.strictEqual(entry.title, "0@s")
      assert.deepStrictEqual(entry.content.data, { n: 1 })
      const event = json(
        yield* node.request("GET", "/streams/s/1", { headers: { Accept: "application/vnd.eventstore.event+json" } })
      )
      assert.strictEqual(event.eventNumber, 1)
      assert.strictEqual(event.eventId, uuid(2))
      const xml = yield* node.request("GET", "/streams/s/0")
      assert.strictEqual(header(xml, "Content-Type"), "application/atom+xml; charset=utf-8")
      const head = yield* getJson(node, "/streams/s/head")
      assert.deepStrictEqual(json(head), { n: 2 })
      assert.match(header(head, "ETag") ?? "", /^"1;-?\d+"$/)
      assert.strictEqual(header(head, "Cache-Control"), "max-age=0, no-cache, must-revalidate")
    })
  )

  it.scoped("missing events: 404 with {} for JSON types, empty for XML; deleted streams 410", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const missing = yield* getJson(node, "/streams/s/7")
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(text(missing), "{}")
      assert.strictEqual(header(missing, "Content-Type"), "text/plain; charset=utf-8")
      const xml = yield* node.request("GET", "/streams/none/0", { headers: { Accept: "text/xml" } })
      assert.strictEqual(xml.status, 404)
      assert.strictEqual(text(xml), "")
      yield* node.request("DELETE", "/streams/s", { headers: { "ES-HardDelete": "true" } })
      const gone = yield* getJson(node, "/streams/s/0")
      assert.strictEqual(gone.status, 410)
      assert.strictEqual(text(gone), "{}")
    })
  )
})

describe("read parameters and errors", () => {
  it.scoped("bad numbers, counts and headers", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const cases: ReadonlyArray<[string, Record<string, string>, string]> = [
        ["/streams/s/x", {}, "'x' is not valid event number"],
        ["/streams/s/-1/backward/5", {}, "'-1' is not valid event number"],
        ["/streams/s/head/forward/5", {}, "'head' is not valid event number"],
        ["/streams/s/0/forward/0", {}, "'0' is not valid count. Should be positive integer"],
        ["/streams/s/0/backward/abc", {}, "'abc' is not valid count. Should be positive integer"],
        ["/streams/s", { "ES-ResolveLinkTos": "yes" }, "Kurrent-ResolveLinkTos header in wrong format."],
        ["/streams/s/0/forward/5", { "ES-LongPoll": "0" }, "Kurrent-LongPoll header in wrong format."],
        ["/streams/s/0/forward/5", { "Kurrent-LongPoll": "soon" }, "Kurrent-LongPoll header in wrong format."]
      ]
      for (const [url, headers, message] of cases) {
        const reply = yield* getJson(node, url, headers)
        assert.strictEqual(reply.status, 400, url)
        assert.strictEqual(text(reply), message)
      }
      // Backward routes neither read nor validate LongPoll.
      assert.strictEqual((yield* getJson(node, "/streams/s/0/backward/5", { "ES-LongPoll": "x" })).status, 200)
      const tooBig = yield* getJson(node, "/streams/s/0/forward/5000")
      assert.strictEqual(tooBig.status, 400)
      assert.strictEqual(tooBig.reason, "Read size too big, should be less than 4096 items")
      assert.strictEqual((yield* getJson(node, "/streams/none")).status, 404)
    })
  )
})

describe("links", () => {
  it.scoped("stream reads resolve $> links by default; ResolveLinkTos: false shows the link itself", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "target", [1])
      const link = JSON.stringify([{ eventId: uuid(50), eventType: "$>", data: "0@target" }])
      yield* node.request("POST", "/streams/linker", { headers: { "Content-Type": EventsJson }, body: link })
      const resolved = json(yield* getJson(node, "/streams/linker"))
      assert.strictEqual(resolved.entries[0].title, "0@target")
      assert.strictEqual(resolved.entries[0].summary, "$>")
      const plain = json(yield* getJson(node, "/streams/linker", { "ES-ResolveLinkTos": "False" }))
      assert.strictEqual(plain.entries[0].title, "0@linker")
      assert.deepStrictEqual(json(yield* getJson(node, "/streams/linker/0")), { n: 1 })
    })
  )
})

describe("metadata reads", () => {
  it.scoped("no metadata on an existing stream: 200 {} (JSON) or empty (XML), no ETag; no stream: 404", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const jsonReply = yield* getJson(node, "/streams/s/metadata")
      assert.strictEqual(jsonReply.status, 200)
      assert.strictEqual(text(jsonReply), "{}")
      assert.isUndefined(header(jsonReply, "ETag"))
      const xml = yield* node.request("GET", "/streams/s/metadata")
      assert.strictEqual(xml.status, 200)
      assert.strictEqual(text(xml), "")
      assert.strictEqual((yield* getJson(node, "/streams/none/metadata")).status, 404)
      const bad = yield* getJson(node, "/streams/$$s/metadata")
      assert.strictEqual(bad.status, 400)
    })
  )

  it.scoped("metadata routes check $mr/$mw of the stream, not $r/$w; $$s is also writable directly", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      node.deny.add("user|s|$mr")
      node.deny.add("user|s|$mw")
      assert.strictEqual((yield* getJson(node, "/streams/s", { Authorization: UserAuth })).status, 200)
      assert.strictEqual((yield* getJson(node, "/streams/s/metadata", { Authorization: UserAuth })).status, 401)
      assert.strictEqual(
        (yield* getJson(node, "/streams/s/metadata/0/forward/5", { Authorization: UserAuth })).status,
        401
      )
      const write = yield* node.request("POST", "/streams/s/metadata", {
        auth: UserAuth,
        headers: { "Content-Type": "application/json", "ES-EventId": uuid(7) },
        body: "{}"
      })
      assert.strictEqual(write.status, 401)
      const direct = yield* node.request("POST", "/streams/%24%24s", {
        headers: { "Content-Type": EventsJson },
        body: JSON.stringify([{ eventId: uuid(8), eventType: "$metadata", data: { $maxCount: 3 } }])
      })
      assert.strictEqual(direct.status, 201)
      assert.deepStrictEqual(json(yield* getJson(node, "/streams/s/metadata")), { $maxCount: 3 })
    })
  )

  it.scoped("metastream feeds list the metadata events", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      for (const n of [1, 2]) {
        yield* node.request("POST", "/streams/s/metadata", {
          headers: { "Content-Type": "application/json", "ES-EventId": uuid(100 + n) },
          body: `{"v":${n}}`
        })
      }
      const feed = json(yield* getJson(node, "/streams/s/metadata/0/forward/10"))
      assert.strictEqual(feed.title, "Event stream '$$s'")
      // Metastreams keep only the last metadata event ($maxCount 1).
      assert.deepStrictEqual(
        feed.entries.map((e: any) => e.title),
        ["1@$$s"]
      )
      assert.deepStrictEqual(json(yield* getJson(node, "/streams/s/metadata/1")), { v: 2 })
    })
  )
})

describe("$all", () => {
  it.scoped("backward head, forward from the start, 32-hex positions, bad arguments", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "a-1", [1, 2])
      yield* appendEvents(node, "b-1", [3])
      const head = json(yield* getJson(node, "/streams/$all", { Authorization: AdminAuth }))
      assert.strictEqual(head.title, "All events")
      assert.strictEqual(head.id, "http://localhost:2113/streams/%24all")
      assert.strictEqual(head.entries[0].title, "0@b-1")
      assert.isUndefined(linkOf(head, "next"), "the whole log fits in one page")
      const paged = json(yield* getJson(node, "/streams/$all/head/backward/2", { Authorization: AdminAuth }))
      assert.deepStrictEqual(
        paged.entries.map((e: any) => e.title),
        ["0@b-1", "1@a-1"]
      )
      const next = linkOf(paged, "next")!
      assert.match(next, /\/streams\/%24all\/[0-9A-F]{32}\/backward\/2$/)
      const older = json(yield* getJson(node, next.replace("http://localhost:2113", ""), { Authorization: AdminAuth }))
      assert.strictEqual(older.entries[0].title, "0@a-1")
      const forward = json(
        yield* getJson(node, "/streams/$all/00000000000000000000000000000000/forward/100", { Authorization: AdminAuth })
      )
      const titles = forward.entries.map((e: any) => e.title)
      assert.includeMembers(titles, ["0@a-1", "1@a-1", "0@b-1"])
      const badPosition = yield* getJson(node, "/streams/$all/xyz/forward/10", { Authorization: AdminAuth })
      assert.strictEqual(text(badPosition), "Invalid position argument: xyz")
      const badCount = yield* getJson(node, "/streams/$all/head/backward/0", { Authorization: AdminAuth })
      assert.strictEqual(text(badCount), "Invalid count argument: 0")
    })
  )

  it.scoped("$all conditional GET uses the committed position", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "a", [1])
      const head = yield* getJson(node, "/streams/$all", { Authorization: AdminAuth })
      const etag = header(head, "ETag")!
      assert.strictEqual(
        (yield* getJson(node, "/streams/$all", { Authorization: AdminAuth, "If-None-Match": etag })).status,
        304
      )
      yield* appendEvents(node, "a", [2])
      assert.strictEqual(
        (yield* getJson(node, "/streams/$all", { Authorization: AdminAuth, "If-None-Match": etag })).status,
        200
      )
    })
  )

  it.scoped("$all needs read permission on $all", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      node.deny.add("user|$all|$r")
      assert.strictEqual((yield* getJson(node, "/streams/$all", { Authorization: UserAuth })).status, 401)
      assert.strictEqual((yield* getJson(node, "/streams/$all", { Authorization: AdminAuth })).status, 200)
    })
  )

  it.scoped("filtered $all: system events excluded, prefixes, and the reference's parameter errors", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "a-1", [1])
      yield* appendEvents(node, "b-1", [2])
      yield* node.request("POST", "/streams/a-1/metadata", {
        headers: { "Content-Type": "application/json", "ES-EventId": uuid(9) },
        body: "{}"
      })
      const noSystem = json(
        yield* getJson(node, "/streams/$all/filtered?exclude-system-events=true", { Authorization: AdminAuth })
      )
      assert.strictEqual(noSystem.id, "http://localhost:2113/streams/%24all/filtered")
      assert.isTrue(noSystem.entries.every((e: any) => !e.summary.startsWith("$")))
      assert.strictEqual(noSystem.entries.length, 2)
      const prefixed = json(
        yield* getJson(
          node,
          "/streams/%24all/filtered/00000000000000000000000000000000/forward/10?context=streamid&type=prefix&data=b-,c-",
          { Authorization: AdminAuth }
        )
      )
      assert.deepStrictEqual(
        prefixed.entries.map((e: any) => e.title),
        ["0@b-1"]
      )
      const errors: ReadonlyArray<[string, string]> = [
        ["?exclude-system-events=false", "exclude-sytem-events should have a value of true."],
        ["?context=foo", "Invalid context please provide one of the following: StreamId, EventType."],
        ["?context=streamid&type=foo", "Invalid type please provide one of the following: Regex, Prefix."],
        ["?context=streamid&type=prefix", "Please provide a comma delimited list of data with at least one item."]
      ]
      for (const [query, message] of errors) {
        const reply = yield* getJson(node, `/streams/$all/filtered${query}`, { Authorization: AdminAuth })
        assert.strictEqual(reply.status, 400)
        assert.strictEqual(text(reply), message)
      }
    })
  )
})

describe("long polling", () => {
  it.scoped("a forward read at the end waits for the next event and answers with it", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const poll = yield* Effect.fork(getJson(node, "/streams/s/1/forward/20", { "ES-LongPoll": "15" }))
      yield* TestClock.adjust(Duration.seconds(1))
      assert.isNull(yield* Fiber.poll(poll).pipe(Effect.map((o) => (o._tag === "Some" ? o.value : null))))
      yield* appendEvents(node, "other", [5])
      yield* appendEvents(node, "s", [2])
      const reply = yield* Fiber.join(poll)
      assert.strictEqual(reply.status, 200)
      assert.deepStrictEqual(
        json(reply).entries.map((e: any) => e.title),
        ["1@s"]
      )
    })
  )

  it.scoped(
    "when nothing arrives the read runs once more: 200 empty, or 404 for a stream that still does not exist",
    () =>
      Effect.gen(function* () {
        const node = yield* makeTestNode()
        yield* appendEvents(node, "s", [1])
        const empty = yield* Effect.fork(getJson(node, "/streams/s/1/forward/20", { "Kurrent-LongPoll": "5" }))
        const none = yield* Effect.fork(getJson(node, "/streams/none/0/forward/20", { "ES-LongPoll": "5" }))
        yield* TestClock.adjust(Duration.seconds(6))
        const emptyReply = yield* Fiber.join(empty)
        assert.strictEqual(emptyReply.status, 200)
        assert.strictEqual(json(emptyReply).entries.length, 0)
        assert.strictEqual((yield* Fiber.join(none)).status, 404)
      })
  )

  it.scoped("$all long poll wakes on any commit", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const head = json(yield* getJson(node, "/streams/$all", { Authorization: AdminAuth }))
      const previous = linkOf(head, "previous")!.replace("http://localhost:2113", "")
      const poll = yield* Effect.fork(getJson(node, previous, { Authorization: AdminAuth, "ES-LongPoll": "10" }))
      yield* TestClock.adjust(Duration.seconds(1))
      yield* appendEvents(node, "late", [1])
      const reply = yield* Fiber.join(poll)
      assert.deepStrictEqual(
        json(reply).entries.map((e: any) => e.title),
        ["0@late"]
      )
    })
  )
})
