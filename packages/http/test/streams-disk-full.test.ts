/**
 * Refused writes over HTTP: an append on a full disk answers 507 Insufficient Storage, after another disk
 * error 503 Service Unavailable — each with Retry-After and a reason naming no file (the status line used to
 * carry the chunk's absolute path) — and appends are accepted again once the store has recovered.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import type { Reply } from "../src/index.js"
import { appendEvents, header, makeTestNode, text, type TestNode } from "./streams-harness.js"

/** Appends until one is refused (the disk was made to fail before), returning that reply. */
const firstRefusal = (node: TestNode, stream: string) =>
  Effect.gen(function* () {
    for (let n = 100; n < 200; n++) {
      const reply = yield* appendEvents(node, stream, [n])
      if (reply.status !== 201) return reply
    }
    return assert.fail("no append was refused")
  })

const expectNoPath = (reply: Reply) => {
  for (const part of [reply.reason ?? "", text(reply), ...Object.values(reply.headers).map(String)]) {
    assert.notInclude(part, "/db", "no server path in the answer")
    assert.notInclude(part, "chunk-", "no file name in the answer")
  }
}

describe("appends on a failing disk", () => {
  it.scoped("a full disk: 507 Insufficient Storage with the reason in the body; 201 again once space is freed", () =>
    Effect.gen(function* () {
      // Small chunks: a few appends reach a rollover, which needs a new file.
      const node = yield* makeTestNode({ storage: { chunkSize: 4096 } })
      assert.strictEqual((yield* appendEvents(node, "s", [1])).status, 201)
      node.mem.capacityBytes = node.mem.totalBytes()
      const refused = yield* firstRefusal(node, "s")
      assert.strictEqual(refused.status, 507)
      assert.strictEqual(refused.reason, "Insufficient Storage")
      assert.strictEqual(header(refused, "Retry-After"), "5")
      assert.strictEqual(header(refused, "Content-Type"), "text/plain; charset=utf-8")
      assert.strictEqual(text(refused), "the disk is full: writes are refused until space is freed\n")
      expectNoPath(refused)
      // Refused at once while the disk stays full.
      yield* TestClock.adjust(Duration.seconds(20))
      assert.strictEqual((yield* appendEvents(node, "s", [300])).status, 507)
      node.mem.capacityBytes = undefined
      yield* TestClock.adjust(Duration.seconds(6))
      const again = yield* appendEvents(node, "s", [301])
      assert.strictEqual(again.status, 201, `${again.status} ${again.reason} ${text(again)}`)
    })
  )

  it.scoped("another disk error: 503 Service Unavailable, no path; 201 again once the disk works", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      assert.strictEqual((yield* appendEvents(node, "s", [1])).status, 201)
      node.mem.setFaults({ syncError: 1 })
      const refused = yield* firstRefusal(node, "s")
      assert.strictEqual(refused.status, 503)
      assert.strictEqual(refused.reason, "Service Unavailable")
      assert.strictEqual(header(refused, "Retry-After"), "5")
      assert.strictEqual(text(refused), "a disk error stopped writes: they resume once the disk works again\n")
      expectNoPath(refused)
      node.mem.setFaults(undefined)
      yield* TestClock.adjust(Duration.seconds(6))
      assert.strictEqual((yield* appendEvents(node, "s", [301])).status, 201)
    })
  )
})
