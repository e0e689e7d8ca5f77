/**
 * Large append bodies parsed on a worker thread: the same events (or the same reason) as parsing in
 * place, and the event loop keeps turning while a body that takes long to parse is parsed.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { parseAppendBody } from "../src/streams/appendBody.js"
import { makeOffThreadParser } from "../src/live/offThreadParser.js"
import { EventsJson, makeTestNode, uuid } from "./streams-harness.js"

const EventsXml = "application/vnd.eventstore.events+xml"

const view = (result: ReturnType<typeof parseAppendBody>) =>
  result._tag === "Invalid"
    ? result
    : result.events.map((e) => ({
        ...e,
        data: Buffer.from(e.data).toString("utf8"),
        metadata: Buffer.from(e.metadata).toString("utf8")
      }))

/** A JSON events body with one event whose data is an object of `items` small objects (slow to parse). */
const bigObjectBody = (items: number) =>
  Buffer.from(
    JSON.stringify([
      { eventId: uuid(1), eventType: "T", data: { items: Array.from({ length: items }, (_, i) => ({ i })) } }
    ])
  )

describe("the off-thread append body parser", () => {
  it.scopedLive("parses as in place: events, data, flags, and invalid bodies", () =>
    Effect.gen(function* () {
      const parser = yield* makeOffThreadParser()
      const cases: ReadonlyArray<[string, string, string | undefined, string | undefined]> = [
        [
          EventsJson,
          JSON.stringify([
            { eventId: uuid(1), eventType: "A", data: { a: [1, 2] }, metadata: "m" },
            { eventId: uuid(2), eventType: "B", data: "text" }
          ]),
          undefined,
          undefined
        ],
        [
          EventsXml,
          `<Events><e><eventId>${uuid(3)}</eventId><eventType>X</eventType><data><a>1</a><a>2</a></data></e></Events>`,
          undefined,
          undefined
        ],
        ["application/json", '{"raw": true}', uuid(4), "R"],
        [EventsJson, '[{"eventId": "nope"}]', undefined, undefined],
        [EventsJson, "[]", undefined, undefined]
      ]
      for (const [type, text, id, eventType] of cases) {
        const body = Buffer.from(text)
        const off = yield* parser.parse(body, type, id, eventType)
        assert.deepStrictEqual(view(off), view(parseAppendBody(body, type, id, eventType)), text)
      }
    })
  )

  it.scopedLive("keeps the event loop turning while a slow body is parsed", () =>
    Effect.gen(function* () {
      const parser = yield* makeOffThreadParser()
      yield* parser.parse(Buffer.from("[]"), EventsJson, undefined, undefined) // the worker is up
      const body = bigObjectBody(150_000)
      // Counted in turns of the event loop, not in milliseconds, so a loaded machine cannot fail it: parsed on
      // this thread, the body would leave the loop no turn until it is done (at most one, around the call).
      let turns = 0
      let turning = true
      const turn = () => {
        turns++
        if (turning) setImmediate(turn)
      }
      setImmediate(turn)
      const parsed = yield* parser.parse(body, EventsJson, undefined, undefined)
      turning = false
      assert.strictEqual(parsed._tag, "Events")
      assert.isAtLeast(turns, 20, `the event loop turned ${turns} times while 150,000 items were parsed`)
    })
  )

  it.scopedLive("serves appends through the pipeline", () =>
    Effect.gen(function* () {
      const parser = yield* makeOffThreadParser({ minBodyBytes: 0 })
      const node = yield* makeTestNode({ settings: { appendBodyParser: parser } })
      const created = yield* node.request("POST", "/streams/s", {
        headers: { "Content-Type": EventsJson },
        body: JSON.stringify([{ eventId: uuid(1), eventType: "T", data: { a: 1 } }])
      })
      assert.strictEqual(created.status, 201)
      const invalid = yield* node.request("POST", "/streams/s", { headers: { "Content-Type": EventsJson }, body: "[" })
      assert.strictEqual(invalid.status, 400)
      const read = yield* node.request("GET", "/streams/s/0", { headers: { Accept: "application/json" } })
      assert.strictEqual(
        Buffer.from(read.body as Uint8Array)
          .toString("utf8")
          .replace(/\s/g, ""),
        '{"a":1}'
      )
    })
  )
})
