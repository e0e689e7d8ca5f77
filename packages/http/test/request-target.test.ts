/**
 * Request targets that could name one stream two ways, or a URL that means another: percent-escapes that
 * are not UTF-8 (or not escapes at all) and dot segments are refused with a 400, so `%FF%FE` never aliases
 * `%25FF%25FE` and no Location ever says `/streams/../0`.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { parseTarget } from "../src/requestTarget.js"
import { EventsJson, eventsBody, header, makeTestNode, text } from "./streams-harness.js"

const oneEvent = { headers: { "Content-Type": EventsJson }, body: eventsBody(1) }

describe("request targets that are refused", () => {
  it("percent-escapes that are not UTF-8, a stray %, and dot segments are invalid targets", () => {
    for (const url of [
      "/streams/%FF%FE",
      "/streams/%ED%A0%80",
      "/streams/100%",
      "/streams/%zz",
      "/streams/%2e%2e",
      "/streams/.",
      "/streams/..",
      "/streams/%2E/x"
    ]) {
      const parsed = parseTarget(url)
      assert.strictEqual(parsed._tag, "Invalid", url)
    }
    const ok = parseTarget("/streams/%25FF%25FE")
    assert.strictEqual(ok._tag, "Target")
    if (ok._tag === "Target") assert.deepStrictEqual(ok.segments, ["streams", "%FF%FE"])
    const dots = parseTarget("/streams/...")
    assert.strictEqual(dots._tag === "Target" ? dots.segments[1] : undefined, "...")
  })

  it.scoped("%FF%FE is a 400 with a reason and never reaches the stream %25FF%25FE names", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const created = yield* node.request("POST", "/streams/%25FF%25FE", oneEvent)
      assert.strictEqual(created.status, 201)
      assert.strictEqual(header(created, "Location"), "http://localhost:2113/streams/%25FF%25FE/0")
      const invalid = yield* node.request("GET", "/streams/%FF%FE/0", { headers: { Accept: "application/json" } })
      assert.strictEqual(invalid.status, 400)
      assert.match(text(invalid), /not UTF-8/)
      const write = yield* node.request("POST", "/streams/%FF%FE", oneEvent)
      assert.strictEqual(write.status, 400)
    })
  )

  it.scoped("/streams/%2e%2e is a 400, never a Location of /streams/../0", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      for (const url of ["/streams/%2e%2e", "/streams/..", "/streams/%2E", "/streams/%2e%2e/"]) {
        const reply = yield* node.request("POST", url, oneEvent)
        assert.strictEqual(reply.status, 400, url)
        assert.match(text(reply), /dot segment/, url)
        assert.strictEqual(header(reply, "Location"), undefined, url)
      }
      const feed = yield* node.request("GET", "/streams/%2e%2e", { headers: { Accept: "application/json" } })
      assert.strictEqual(feed.status, 400)
    })
  )
})
