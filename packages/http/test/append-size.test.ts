/**
 * MaxAppendSize over HTTP: a request body larger than the limit is refused before it is parsed (the live
 * adapter stops reading it and flags the request), and an append whose events come to more than the limit
 * once decoded (compact JSON data is stored re-indented) is refused before it is written. Both answer 413
 * with the reference's message for the limit.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { defaultHttpSettings } from "../src/index.js"
import { EventsJson, header, makeTestNode, text, uuid } from "./streams-harness.js"

const readStream = { headers: { Accept: "application/json" } }

describe("MaxAppendSize", () => {
  it("is 1 MiB by default", () => {
    assert.strictEqual(defaultHttpSettings.maxRequestBodyBytes, 1024 * 1024)
  })

  it.scoped("a body over the limit is 413 `Maximum Append Size of N Exceeded.` and nothing is written", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { maxRequestBodyBytes: 1000 } })
      const body = JSON.stringify([{ eventId: uuid(1), eventType: "T", data: "x".repeat(1000) }])
      const reply = yield* node.request("POST", "/streams/s", { headers: { "Content-Type": EventsJson }, body })
      assert.deepStrictEqual([reply.status, reply.reason], [413, "Maximum Append Size of 1000 Exceeded."])
      assert.strictEqual(header(reply, "Access-Control-Allow-Origin"), "*")
      assert.strictEqual((yield* node.request("GET", "/streams/s", readStream)).status, 404)
      // The metadata and incoming forms are appends too.
      const meta = yield* node.request("POST", "/streams/s/metadata", {
        headers: { "Content-Type": "application/json", "ES-EventId": uuid(2) },
        body: `{"x":"${"y".repeat(1000)}"}`
      })
      assert.strictEqual(meta.reason, "Maximum Append Size of 1000 Exceeded.")
    })
  )

  it.scoped("a body the live adapter stopped reading is answered the same without being looked at", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { maxRequestBodyBytes: 1000 } })
      const reply = yield* node.request("POST", "/streams/s", {
        headers: { "Content-Type": EventsJson },
        bodyTooLarge: true
      })
      assert.deepStrictEqual([reply.status, reply.reason], [413, "Maximum Append Size of 1000 Exceeded."])
      const other = yield* node.request("POST", "/users", {
        headers: { "Content-Type": "application/json" },
        bodyTooLarge: true
      })
      assert.deepStrictEqual([other.status, other.reason], [413, "Request body too large. Limit is 1000 bytes."])
    })
  )

  it.scoped("events that come to more than the limit once decoded are 413, though the body fits", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { maxRequestBodyBytes: 1000 } })
      // 150 array items: about 320 bytes as sent, over 1000 once stored two-space indented, one per line.
      const body = JSON.stringify([
        { eventId: uuid(1), eventType: "T", data: { a: Array.from({ length: 150 }, () => 1) } }
      ])
      assert.isBelow(body.length, 1000)
      const reply = yield* node.request("POST", "/streams/s", { headers: { "Content-Type": EventsJson }, body })
      assert.deepStrictEqual(
        [reply.status, reply.reason, text(reply)],
        [413, "Maximum Append Size of 1000 Exceeded.", ""]
      )
      assert.strictEqual((yield* node.request("GET", "/streams/s", readStream)).status, 404)
      // Several events count together.
      const each = (n: number) => ({ eventId: uuid(n), eventType: "T", data: "z".repeat(300) })
      const three = yield* node.request("POST", "/streams/s", {
        headers: { "Content-Type": EventsJson },
        body: JSON.stringify([each(2), each(3)])
      })
      assert.strictEqual(three.status, 201)
      const four = yield* node.request("POST", "/streams/s", {
        headers: { "Content-Type": EventsJson },
        body: JSON.stringify([
          { ...each(4), metadata: "m".repeat(150) },
          { ...each(5), metadata: "m".repeat(150) }
        ])
      })
      assert.deepStrictEqual([four.status, four.reason], [413, "Maximum Append Size of 1000 Exceeded."])
    })
  )
})
