/**
 * A disk read that fails is transient, not corruption: a read over HTTP answers 503 Service Unavailable with
 * Retry-After (never a 500, and no file name in the reply), and once the disk reads again so does the node.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { AdminAuth, appendEvents, header, makeTestNode, text } from "./streams-harness.js"

describe("reads on a failing disk", () => {
  for (const url of ["/streams/s/0/forward/10", "/streams/s/1", "/streams/$all/head/backward/10"]) {
    it.scoped(`GET ${url} answers 503 with Retry-After while reads fail, 200 once the disk reads again`, () =>
      Effect.gen(function* () {
        const node = yield* makeTestNode({ storage: { readCacheBytes: 0, streamInfoCacheCapacity: 1 } })
        assert.strictEqual((yield* appendEvents(node, "s", [1, 2, 3])).status, 201)
        node.mem.setFaults({ readError: 1 })
        const refused = yield* node.request("GET", url, { headers: { Accept: "application/json" }, auth: AdminAuth })
        assert.strictEqual(refused.status, 503, `${refused.status} ${refused.reason} ${text(refused)}`)
        assert.strictEqual(header(refused, "Retry-After"), "5")
        assert.notInclude(`${refused.reason} ${text(refused)}`, "/db")
        node.mem.setFaults(undefined)
        const served = yield* node.request("GET", url, { headers: { Accept: "application/json" }, auth: AdminAuth })
        assert.strictEqual(served.status, 200)
      })
    )
  }
})
