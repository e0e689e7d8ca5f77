/**
 * Appends and deletes over HTTP: every body form, the validation order and
 * its messages, the incoming redirect, the statuses of appends and deletes, and the control headers.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import {
  EventsJson,
  appendEvents,
  eventsBody,
  header,
  makeTestNode,
  text,
  uuid,
  type TestNode
} from "./streams-harness.js"

const post = (
  node: TestNode,
  url: string,
  contentType: string,
  body: string | Uint8Array,
  headers: Record<string, string> = {}
) => node.request("POST", url, { headers: { "Content-Type": contentType, ...headers }, body })

/** The stored event as `application/vnd.kurrent.event+json` (data parsed when JSON). */
const stored = (node: TestNode, stream: string, n: number) =>
  Effect.map(
    node.request("GET", `/streams/${encodeURIComponent(stream)}/${n}`, {
      headers: { Accept: "application/vnd.kurrent.event+json" }
    }),
    (r) => JSON.parse(text(r))
  )

/** The stored data bytes as text. */
const raw = (node: TestNode, stream: string, n: number) =>
  Effect.map(
    node.request("GET", `/streams/${encodeURIComponent(stream)}/${n}`, {
      headers: { Accept: "application/octet-stream" }
    }),
    text
  )

const expectBadRequest = (reply: { status: number; reason?: string }, body: string, replyText: string) => {
  assert.strictEqual(reply.status, 400)
  assert.strictEqual(reply.reason, "Bad Request")
  assert.strictEqual(replyText, body)
}

describe("append body forms", () => {
  it.scoped("events+json (both vendor names), event+json: 201 with the first event's absolute Location", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const first = yield* post(node, "/streams/orders-1", EventsJson, eventsBody(1, 2))
      assert.strictEqual(first.status, 201)
      assert.strictEqual(first.reason, "Created")
      assert.strictEqual(header(first, "Location"), "http://localhost:2113/streams/orders-1/0")
      assert.strictEqual(header(first, "Content-Type"), "text/plain; charset=utf-8")
      assert.strictEqual(text(first), "")
      const second = yield* post(node, "/streams/orders-1", "application/vnd.kurrent.events+json", eventsBody(3))
      assert.strictEqual(header(second, "Location"), "http://localhost:2113/streams/orders-1/2")
      const single = yield* post(node, "/streams/orders-1", "application/vnd.kurrent.event+json", eventsBody(4))
      assert.strictEqual(header(single, "Location"), "http://localhost:2113/streams/orders-1/3")
      assert.deepStrictEqual((yield* stored(node, "orders-1", 3)).data, { n: 4 })
    })
  )

  it.scoped(
    "data and metadata fields: objects re-indented, JSON strings parsed, other strings verbatim, primitives empty",
    () =>
      Effect.gen(function* () {
        const node = yield* makeTestNode()
        const body = JSON.stringify([
          { eventId: uuid(1), eventType: "A", data: { b: 1, a: [1, 2] }, metadata: { m: true } },
          { eventId: uuid(2), eventType: "B", data: '{"x":"1"}' },
          { eventId: uuid(3), eventType: "C", data: "plain text", metadata: "meta" },
          { eventId: uuid(4), eventType: "D", data: 42, metadata: null }
        ])
        assert.strictEqual((yield* post(node, "/streams/s", EventsJson, body)).status, 201)
        assert.strictEqual(yield* raw(node, "s", 0), '{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ]\n}')
        assert.strictEqual(yield* raw(node, "s", 1), '{\n  "x": "1"\n}')
        assert.strictEqual(yield* raw(node, "s", 2), "plain text")
        assert.strictEqual(yield* raw(node, "s", 3), "")
        const c = yield* stored(node, "s", 2)
        assert.strictEqual(c.data, "plain text")
        assert.strictEqual(c.metadata, "meta")
        assert.deepStrictEqual((yield* stored(node, "s", 0)).metadata, { m: true })
      })
  )

  it.scoped("lenient JSON: case-insensitive names, single quotes, unquoted names; $type and date strings kept", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const body = `[{EventID: '${uuid(1)}', EVENTTYPE: 'T', Data: {'$type': 'X', when: '2017-12-15T12:19:32.021776Z'}}]`
      assert.strictEqual((yield* post(node, "/streams/s", EventsJson, body)).status, 201)
      assert.strictEqual(yield* raw(node, "s", 0), '{\n  "$type": "X",\n  "when": "2017-12-15T12:19:32.021776Z"\n}')
    })
  )

  it.scoped("application/json: one event, data verbatim and flagged JSON, type and id from headers", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const reply = yield* post(node, "/streams/s", "application/json", '{a : "1"}', {
        "ES-EventType": "T",
        "ES-EventId": uuid(9)
      })
      assert.strictEqual(reply.status, 201)
      assert.strictEqual(yield* raw(node, "s", 0), '{a : "1"}')
      const event = yield* stored(node, "s", 0)
      assert.strictEqual(event.eventId, uuid(9))
      assert.strictEqual(event.eventType, "T")
      assert.deepStrictEqual(event.data, { a: "1" })
    })
  )

  it.scoped("text/xml and application/octet-stream: one non-JSON event; bytes round-trip", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const xml = yield* post(node, "/streams/s", "text/xml", "<a>1</a>", {
        "Kurrent-EventType": "X",
        "Kurrent-EventId": uuid(1)
      })
      assert.strictEqual(xml.status, 201)
      assert.strictEqual((yield* stored(node, "s", 0)).data, "<a>1</a>")
      const bytes = new Uint8Array([0, 255, 137, 80, 78, 71, 13, 10])
      const bin = yield* post(node, "/streams/s", "application/octet-stream", bytes, {
        "ES-EventType": "png",
        "ES-EventId": uuid(2)
      })
      assert.strictEqual(bin.status, 201)
      const back = yield* node.request("GET", "/streams/s/1", { headers: { Accept: "application/octet-stream" } })
      assert.strictEqual(header(back, "Content-Type"), "application/octet-stream")
      assert.deepStrictEqual([...(back.body as Uint8Array)], [...bytes])
    })
  )

  it.scoped("events+xml: child elements are events; element data becomes JSON", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const body = `<?xml version="1.0"?><Events><Event><eventId>${uuid(1)}</eventId><eventType>T</eventType><data><a>1</a><b>x</b></data><metadata>m</metadata></Event><Event><eventId>${uuid(2)}</eventId><eventType>U</eventType><data>plain</data></Event></Events>`
      const reply = yield* post(node, "/streams/s", "application/vnd.eventstore.events+xml", body)
      assert.strictEqual(reply.status, 201)
      assert.deepStrictEqual((yield* stored(node, "s", 0)).data, { a: "1", b: "x" })
      assert.strictEqual((yield* stored(node, "s", 0)).metadata, "m")
      assert.strictEqual((yield* stored(node, "s", 1)).data, "plain")
      const broken = yield* post(node, "/streams/s", "application/vnd.eventstore.events+xml", "<Events><Event>")
      expectBadRequest(broken, "Write request body invalid.", text(broken))
    })
  )

  it.scoped("a streamdesc body is never parsable", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const reply = yield* post(node, "/streams/s", "application/vnd.kurrent.streamdesc+json", eventsBody(1))
      expectBadRequest(reply, "Write request body invalid.", text(reply))
    })
  )

  it.scoped("atom+json quirk: needs the EventType header and an EventId header, then reads the body as an array", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const noType = yield* post(node, "/streams/s", "application/vnd.kurrent.atom+json", eventsBody(1))
      assert.strictEqual(noType.status, 400)
      const noId = yield* post(node, "/streams/s", "application/vnd.kurrent.atom+json", eventsBody(1), {
        "ES-EventType": "Ignored"
      })
      assert.strictEqual(noId.status, 307)
      const ok = yield* post(node, "/streams/s", "application/vnd.kurrent.atom+json", eventsBody(1), {
        "ES-EventType": "Ignored",
        "ES-EventId": uuid(77)
      })
      assert.strictEqual(ok.status, 201)
      const event = yield* stored(node, "s", 0)
      assert.strictEqual(event.eventType, "T")
      assert.strictEqual(event.eventId, uuid(1))
    })
  )
})

describe("append validation order and messages", () => {
  it.scoped(
    "missing event type comes first, then a malformed id, then the redirect, then the headers, then the body",
    () =>
      Effect.gen(function* () {
        const node = yield* makeTestNode()
        const noType = yield* post(node, "/streams/s", "application/json", "{}", {
          "ES-EventId": "nope",
          "ES-ExpectedVersion": "x"
        })
        expectBadRequest(
          noType,
          "Must include an event type with the request either in body or as Kurrent-EventType header.",
          text(noType)
        )
        const badId = yield* post(node, "/streams/s", "application/json", "{}", {
          "ES-EventType": "T",
          "ES-EventId": "nope",
          "ES-ExpectedVersion": "x"
        })
        expectBadRequest(badId, "Kurrent-EventId header in wrong format.", text(badId))
        const zeroId = yield* post(node, "/streams/s", "application/json", "{}", {
          "ES-EventType": "T",
          "ES-EventId": "00000000-0000-0000-0000-000000000000"
        })
        expectBadRequest(zeroId, "Kurrent-EventId header in wrong format.", text(zeroId))
        const redirect = yield* post(node, "/streams/s", "application/json", "{}", {
          "ES-EventType": "T",
          "ES-ExpectedVersion": "x"
        })
        assert.strictEqual(redirect.status, 307)
        const badVersion = yield* post(node, "/streams/s", EventsJson, "not json", {
          "ES-ExpectedVersion": "-5",
          "ES-RequireLeader": "maybe"
        })
        expectBadRequest(badVersion, "Kurrent-ExpectedVersion header in wrong format.", text(badVersion))
        const badLeader = yield* post(node, "/streams/s", EventsJson, "not json", { "ES-RequireLeader": "yes" })
        expectBadRequest(badLeader, "Kurrent-RequireLeader header in wrong format.", text(badLeader))
        const badBody = yield* post(node, "/streams/s", EventsJson, "not json", { "ES-RequireMaster": "TRUE" })
        expectBadRequest(badBody, "Write request body invalid.", text(badBody))
      })
  )

  it.scoped("body errors: not an array, empty, bad ids, missing id or type", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const cases: ReadonlyArray<[string, string]> = [
        ["{}", "Write request body invalid."],
        ["[]", "Write request body invalid."],
        ["[1]", "Write request body invalid."],
        [`[{"eventId":"not-a-guid","eventType":"T"}]`, "Write request body invalid."],
        [`[{"eventType":"T"}]`, "Empty eventId provided. (Parameter 'eventId')"],
        [
          `[{"eventId":"00000000-0000-0000-0000-000000000000","eventType":"T"}]`,
          "Empty eventId provided. (Parameter 'eventId')"
        ],
        [`[{"eventId":"${uuid(1)}"}]`, "Empty eventType provided. (Parameter 'eventType')"],
        [`[{"eventId":"${uuid(1)}","eventType":""}]`, "Empty eventType provided. (Parameter 'eventType')"]
      ]
      for (const [body, message] of cases) {
        const reply = yield* post(node, "/streams/s", EventsJson, body)
        expectBadRequest(reply, message, text(reply))
      }
      assert.strictEqual(
        (yield* node.request("GET", "/streams/s", { headers: { Accept: "application/json" } })).status,
        404
      )
    })
  )

  it.scoped("Kurrent-* headers win over ES-*; RequireLeader from any of its three names", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const reply = yield* appendEvents(node, "s", [2], { "Kurrent-ExpectedVersion": "0", "ES-ExpectedVersion": "7" })
      assert.strictEqual(reply.status, 201)
      for (const name of ["Kurrent-RequireLeader", "ES-RequireLeader", "ES-RequireMaster"]) {
        assert.strictEqual((yield* appendEvents(node, "s", [10 + name.length], { [name]: "True" })).status, 201)
        assert.strictEqual((yield* appendEvents(node, "s", [20 + name.length], { [name]: "1" })).status, 400)
      }
    })
  )

  it.scoped("an event over the per-event limit is 413", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { maxAppendEventBytes: 64 } })
      const body = JSON.stringify([{ eventId: uuid(1), eventType: "T", data: "x".repeat(65) }])
      const reply = yield* post(node, "/streams/s", EventsJson, body)
      assert.strictEqual(reply.status, 413)
      assert.strictEqual(reply.reason, "Too large events received. Limit is 64 bytes.")
      assert.strictEqual(
        (yield* node.request("GET", "/streams/s", { headers: { Accept: "application/json" } })).status,
        404
      )
    })
  )
})

describe("incoming redirect and idempotency", () => {
  it.scoped("no id → 307 to <request URL>/incoming/<uuid> without writing; the target is idempotent", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const redirect = yield* post(node, "/streams/s?x=1", "application/json", '{"a":1}', { "ES-EventType": "T" })
      assert.strictEqual(redirect.status, 307)
      assert.strictEqual(redirect.reason, "Temporary Redirect")
      assert.strictEqual(text(redirect), "Forwarding to idempotent URI")
      assert.strictEqual(header(redirect, "Content-Type"), "text/plain; charset=utf-8")
      const location = header(redirect, "Location")!
      assert.match(
        location,
        /^http:\/\/localhost:2113\/streams\/s\/incoming\/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
      )
      assert.strictEqual(
        (yield* node.request("GET", "/streams/s", { headers: { Accept: "application/json" } })).status,
        404
      )
      const path = location.slice("http://localhost:2113".length)
      for (let i = 0; i < 2; i++) {
        const reply = yield* post(node, path, "application/json", '{"a":1}', { "ES-EventType": "T" })
        assert.strictEqual(reply.status, 201)
        assert.strictEqual(header(reply, "Location"), "http://localhost:2113/streams/s/0")
      }
      assert.strictEqual((yield* stored(node, "s", 0)).eventId, location.slice(-36))
    })
  )

  it.scoped("incoming: events+json is 415, a bad guid is 400, a missing type is the Event error", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      assert.strictEqual((yield* post(node, `/streams/s/incoming/${uuid(1)}`, EventsJson, eventsBody(1))).status, 415)
      assert.strictEqual(
        (yield* post(node, `/streams/s/incoming/${uuid(1)}`, "application/octet-stream", "x")).status,
        415
      )
      const badGuid = yield* post(node, "/streams/s/incoming/xyz", "application/json", "{}", { "ES-EventType": "T" })
      expectBadRequest(badGuid, "Invalid request. Unable to parse guid", text(badGuid))
      const noType = yield* post(node, `/streams/s/incoming/${uuid(1)}`, "application/json", "{}")
      expectBadRequest(noType, "Empty eventType provided. (Parameter 'eventType')", text(noType))
    })
  )

  it.scoped("replaying a batch gives 201 with the original Location; a partial match is a wrong version", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1, 2])
      yield* appendEvents(node, "s", [3])
      const replay = yield* appendEvents(node, "s", [1, 2], { "ES-ExpectedVersion": "-1" })
      assert.strictEqual(replay.status, 201)
      assert.strictEqual(header(replay, "Location"), "http://localhost:2113/streams/s/0")
      const partial = yield* appendEvents(node, "s", [1, 9], { "ES-ExpectedVersion": "-1" })
      assert.strictEqual(partial.status, 400)
      assert.strictEqual(partial.reason, "Wrong expected EventNumber")
    })
  )
})

describe("append and delete statuses", () => {
  it.scoped("wrong expected version: 400 with both CurrentVersion headers and an empty body", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const missing = yield* appendEvents(node, "s", [1], { "ES-ExpectedVersion": "3" })
      assert.strictEqual(missing.status, 400)
      assert.strictEqual(missing.reason, "Wrong expected EventNumber")
      assert.strictEqual(header(missing, "Kurrent-CurrentVersion"), "-1")
      assert.strictEqual(header(missing, "ES-CurrentVersion"), "-1")
      assert.strictEqual(text(missing), "")
      yield* appendEvents(node, "s", [1, 2])
      const existing = yield* appendEvents(node, "s", [5], { "Kurrent-ExpectedVersion": "-1" })
      assert.strictEqual(header(existing, "ES-CurrentVersion"), "1")
      assert.strictEqual((yield* appendEvents(node, "s", [6], { "ES-ExpectedVersion": "-4" })).status, 201)
      assert.strictEqual((yield* appendEvents(node, "s", [7], { "ES-ExpectedVersion": "2" })).status, 201)
    })
  )

  it.scoped("soft delete: 204, reads 404, an append recreates the stream with continued numbers", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1, 2])
      const deleted = yield* node.request("DELETE", "/streams/s")
      assert.strictEqual(deleted.status, 204)
      assert.strictEqual(deleted.reason, "Stream deleted")
      assert.strictEqual(header(deleted, "Content-Type"), "text/plain; charset=utf-8")
      assert.strictEqual(
        (yield* node.request("GET", "/streams/s", { headers: { Accept: "application/json" } })).status,
        404
      )
      const again = yield* appendEvents(node, "s", [3])
      assert.strictEqual(header(again, "Location"), "http://localhost:2113/streams/s/2")
    })
  )

  it.scoped("hard delete: tombstone; reads 410 Deleted, appends and deletes 410 Stream deleted", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      assert.strictEqual(
        (yield* node.request("DELETE", "/streams/s", { headers: { "ES-HardDelete": "true" } })).status,
        204
      )
      const read = yield* node.request("GET", "/streams/s", { headers: { Accept: "application/json" } })
      assert.strictEqual(read.status, 410)
      assert.strictEqual(read.reason, "Deleted")
      const append = yield* appendEvents(node, "s", [2])
      assert.strictEqual(append.status, 410)
      assert.strictEqual(append.reason, "Stream deleted")
      assert.strictEqual(
        (yield* node.request("DELETE", "/streams/s", { headers: { "Kurrent-HardDelete": "True" } })).status,
        410
      )
    })
  )

  it.scoped("delete: expected versions, a stream that never existed, malformed headers", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const never = yield* node.request("DELETE", "/streams/none")
      assert.strictEqual(never.status, 400)
      assert.strictEqual(header(never, "ES-CurrentVersion"), "-1")
      yield* appendEvents(node, "s", [1, 2])
      assert.strictEqual(
        (yield* node.request("DELETE", "/streams/s", { headers: { "ES-ExpectedVersion": "0" } })).status,
        400
      )
      const badHard = yield* node.request("DELETE", "/streams/s", { headers: { "ES-HardDelete": "yes" } })
      expectBadRequest(badHard, "Kurrent-HardDelete header in wrong format.", text(badHard))
      const badVersion = yield* node.request("DELETE", "/streams/s", { headers: { "ES-ExpectedVersion": "many" } })
      expectBadRequest(badVersion, "Kurrent-ExpectedVersion header in wrong format.", text(badVersion))
      assert.strictEqual(
        (yield* node.request("DELETE", "/streams/s", { headers: { "ES-ExpectedVersion": "1" } })).status,
        204
      )
    })
  )
})

describe("metadata writes", () => {
  it.scoped("raw JSON with an EventId is $metadata in $$s; Location names the metastream", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const reply = yield* post(node, "/streams/s/metadata", "application/json", '{"$maxCount": 5, "custom": 1}', {
        "ES-EventId": uuid(50)
      })
      assert.strictEqual(reply.status, 201)
      assert.strictEqual(header(reply, "Location"), "http://localhost:2113/streams/%24%24s/0")
      const read = yield* node.request("GET", "/streams/s/metadata", { headers: { Accept: "application/json" } })
      assert.deepStrictEqual(JSON.parse(text(read)), { $maxCount: 5, custom: 1 })
      const entry = yield* node.request("GET", "/streams/s/metadata", {
        headers: { Accept: "application/vnd.kurrent.event+json" }
      })
      assert.strictEqual(JSON.parse(text(entry)).eventType, "$metadata")
    })
  )

  it.scoped("metadata validation: id required for raw JSON, no foreign event type, no metastreams", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const noId = yield* post(node, "/streams/s/metadata", "application/json", "{}")
      expectBadRequest(noId, "Empty eventId provided. (Parameter 'eventId')", text(noId))
      const foreign = yield* post(node, "/streams/s/metadata", "application/json", "{}", {
        "ES-EventId": uuid(1),
        "ES-EventType": "Other"
      })
      expectBadRequest(foreign, "Bad Request. You should not include an event type for metadata.", text(foreign))
      assert.strictEqual(
        (yield* post(node, "/streams/s/metadata", "application/json", "{}", {
          "ES-EventId": uuid(2),
          "ES-EventType": "$metadata"
        })).status,
        201
      )
      const meta = yield* post(node, "/streams/$$s/metadata", "application/json", "{}", { "ES-EventId": uuid(3) })
      expectBadRequest(
        meta,
        "Invalid request. Stream must be non-empty string and should not be metastream",
        text(meta)
      )
      const body = yield* post(
        node,
        "/streams/s/metadata",
        EventsJson,
        JSON.stringify([{ eventId: uuid(4), eventType: "$user-updated", data: { a: 1 } }])
      )
      assert.strictEqual(body.status, 201)
      assert.strictEqual(header(body, "Location"), "http://localhost:2113/streams/%24%24s/1")
    })
  )
})
