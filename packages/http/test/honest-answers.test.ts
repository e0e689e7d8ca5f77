/**
 * Answers that tell a client what is going on: a 401 to a request without credentials carries a standard
 * Basic challenge (so challenge-driven clients send theirs), and a route family Vellum has not built yet
 * answers 501 with a reason naming it instead of an empty 404.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { makeRouter } from "../src/router.js"
import { notBuiltRoutes } from "../src/notBuilt.js"
import { parseTarget } from "../src/requestTarget.js"
import { streamRoutes } from "../src/index.js"
import { AdminAuth, UserAuth, basic, header, makeTestNode, text } from "./streams-harness.js"

const BasicChallenge = /^Basic realm="Vellum"/

describe("the Basic challenge", () => {
  it.scoped("a 401 to a request without credentials challenges for Basic", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { allowAnonymousStreamAccess: false } })
      const anonymous = yield* node.request("GET", "/streams/s", { headers: { Accept: "application/json" } })
      assert.strictEqual(anonymous.status, 401)
      assert.match(header(anonymous, "WWW-Authenticate") ?? "", BasicChallenge)
      // A scheme Vellum does not know is no credentials either: the challenge says which one it takes.
      const bearer = yield* node.request("GET", "/streams/s", {
        headers: { Accept: "application/json", Authorization: "Bearer abc" }
      })
      assert.match(header(bearer, "WWW-Authenticate") ?? "", BasicChallenge)
    })
  )

  it.scoped("no Basic challenge to XMLHttpRequest callers (no browser prompt), nor when credentials were sent", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { allowAnonymousStreamAccess: false } })
      const xhr = yield* node.request("GET", "/streams/s", {
        headers: { Accept: "application/json", "X-Requested-With": "XMLHttpRequest" }
      })
      assert.strictEqual(xhr.status, 401)
      assert.strictEqual(header(xhr, "WWW-Authenticate"), undefined)
      const wrong = yield* node.request("GET", "/streams/s", { auth: basic("admin", "nope") })
      assert.deepStrictEqual([wrong.status, header(wrong, "WWW-Authenticate")], [401, 'X-Basic realm="ESDB"'])
      node.deny.add("user|s|$r")
      const denied = yield* node.request("GET", "/streams/s", {
        headers: { Accept: "application/json" },
        auth: UserAuth
      })
      assert.deepStrictEqual([denied.status, header(denied, "WWW-Authenticate")], [401, undefined])
    })
  )
})

describe("route families not built yet", () => {
  it.scoped("answer 501 with a reason naming the family, for any method, after authentication", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const cases: ReadonlyArray<[string, string, RegExp]> = [
        ["GET", "/web/index.html", /admin UI/],
        ["GET", "/", /admin UI/],
        ["POST", "/admin/reloadconfig", /reload/i]
      ]
      for (const [method, url, reason] of cases) {
        const reply = yield* node.request(method, url, { auth: AdminAuth })
        assert.strictEqual(reply.status, 501, `${method} ${url}`)
        assert.match(reply.reason ?? "", reason, `${method} ${url}`)
        assert.match(text(reply), reason, `${method} ${url}`)
      }
      assert.strictEqual((yield* node.request("GET", "/web/index.html", { auth: basic("admin", "nope") })).status, 401)
      assert.strictEqual((yield* node.request("GET", "/nothing/here")).status, 404)
      assert.strictEqual((yield* node.request("GET", "/webx")).status, 404)
    })
  )

  it.scoped(
    "persistent subscriptions and projections are built: a node without their routes answers 404, not 501",
    () =>
      Effect.gen(function* () {
        const node = yield* makeTestNode()
        for (const [method, url] of [
          ["GET", "/subscriptions"],
          ["PUT", "/subscriptions/s/g"],
          ["GET", "/projections/any"],
          ["POST", "/projection/p/command/enable"]
        ] as const) {
          assert.strictEqual((yield* node.request(method, url, { auth: AdminAuth })).status, 404, `${method} ${url}`)
        }
      })
  )

  it("no row of the table shadows a stream route", () => {
    const router = makeRouter(streamRoutes)
    for (const row of notBuiltRoutes) {
      const target = parseTarget(row.path)
      assert.strictEqual(target._tag, "Target")
      if (target._tag === "Target") assert.strictEqual(router.match(target.segments)._tag, "NotFound", row.path)
    }
  })
})
