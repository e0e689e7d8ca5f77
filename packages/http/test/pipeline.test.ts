/**
 * The request pipeline: which error wins, routing, OPTIONS/405, the
 * three 401 shapes, the health endpoint, pre-flight, limits, defects, deadlines and the cross-cutting
 * headers.
 */
import { describe, it, assert } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { gunzipSync } from "node:zlib"
import { Authenticator } from "@vellum/security"
import { defaultHttpSettings, makeHandler, type HttpSettings, type Reply, type RouteDef } from "../src/index.js"
import { BasicChallenge } from "../src/challenge.js"
import {
  AdminAuth,
  EventsJson,
  UserAuth,
  appendEvents,
  basic,
  header,
  makeTestNode,
  testAuthenticator,
  text
} from "./streams-harness.js"

const NoCors = (reply: Reply) => header(reply, "Access-Control-Allow-Origin") === undefined

describe("pipeline order", () => {
  it.scoped("an anonymous POST with a wrong Content-Type is 415, not 401", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { allowAnonymousStreamAccess: false } })
      const reply = yield* node.request("POST", "/streams/s", { headers: { "Content-Type": "image/png" }, body: "x" })
      assert.strictEqual(reply.status, 415)
      assert.strictEqual(reply.reason, "Invalid or missing Content-Type")
      assert.strictEqual(header(reply, "Content-Type"), undefined)
      assert.strictEqual(header(reply, "Access-Control-Allow-Methods"), "")
      const missing = yield* node.request("POST", "/streams/s", { body: "x" })
      assert.strictEqual(missing.status, 415)
    })
  )

  it.scoped("an anonymous GET of an unknown route is 404, not 401", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { allowAnonymousStreamAccess: false } })
      const reply = yield* node.request("GET", "/nothing/here")
      assert.strictEqual(reply.status, 404)
      assert.strictEqual(text(reply), "")
      assert.strictEqual(header(reply, "Content-Type"), undefined)
      assert.strictEqual(header(reply, "Access-Control-Allow-Methods"), "")
    })
  )

  it.scoped("bad credentials are 401 before routing, even on an unknown route (variant 1)", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      for (const url of ["/nothing/here", "/streams/s"]) {
        const reply = yield* node.request("GET", url, { auth: basic("admin", "wrong") })
        assert.strictEqual(reply.status, 401)
        assert.strictEqual(header(reply, "WWW-Authenticate"), 'X-Basic realm="ESDB"')
        assert.isTrue(NoCors(reply))
        assert.strictEqual(text(reply), "")
      }
    })
  )

  it.scoped("malformed credentials are 400 with the reason; an unready user store is 503 Retry-After 5", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const malformed = yield* node.request("GET", "/streams/s", { auth: "Basic !!!" })
      assert.strictEqual(malformed.status, 400)
      assert.strictEqual(malformed.reason, "Invalid Basic credentials")
      const unready = yield* makeTestNode({ auth: { unavailable: true } })
      const reply = yield* unready.request("GET", "/streams/s")
      assert.strictEqual(reply.status, 503)
      assert.strictEqual(header(reply, "Retry-After"), "5")
    })
  )

  it.scoped("a bad Content-Type beats a bad Accept (415 before 406), and 406 beats authorization", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { allowAnonymousStreamAccess: false } })
      const both = yield* node.request("POST", "/streams/s", {
        headers: { "Content-Type": "image/png", Accept: "image/png" },
        body: "x"
      })
      assert.strictEqual(both.status, 415)
      const accept = yield* node.request("GET", "/streams/s", { headers: { Accept: "image/png" } })
      assert.strictEqual(accept.status, 406)
      assert.strictEqual(accept.reason, "Requested URI is not available in requested format")
      assert.strictEqual(text(accept), "")
      const allowed = yield* node.request("GET", "/streams/s", { headers: { Accept: "application/json" } })
      assert.strictEqual(allowed.status, 401)
    })
  )

  it.scoped("an unknown ?format= is a 400 (a 500 upstream); a known one overrides Accept", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const unknown = yield* node.request("GET", "/streams/s?format=yaml")
      assert.strictEqual(unknown.status, 400)
      const json = yield* node.request("GET", "/streams/s?format=JSON", { headers: { Accept: "text/xml" } })
      assert.strictEqual(json.status, 200)
      assert.strictEqual(header(json, "Content-Type"), "application/json; charset=utf-8")
    })
  )
})

describe("routing", () => {
  it.scoped("OPTIONS lists the path's methods; a wrong method is 405 with the same list; HEAD is 405", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const options = yield* node.request("OPTIONS", "/streams/s")
      assert.strictEqual(options.status, 200)
      assert.strictEqual(text(options), "")
      assert.strictEqual(header(options, "Access-Control-Allow-Methods"), "POST, DELETE, GET, OPTIONS")
      const put = yield* node.request("PUT", "/streams/s")
      assert.strictEqual(put.status, 405)
      assert.strictEqual(put.reason, "Method Not Allowed")
      assert.strictEqual(header(put, "Access-Control-Allow-Methods"), "POST, DELETE, GET, OPTIONS")
      assert.strictEqual(header(put, "Allow"), undefined)
      const head = yield* node.request("HEAD", "/streams/s")
      assert.strictEqual(head.status, 405)
      const metadata = yield* node.request("DELETE", "/streams/s/metadata")
      assert.strictEqual(metadata.status, 405)
      assert.strictEqual(header(metadata, "Access-Control-Allow-Methods"), "GET, POST, OPTIONS")
    })
  )

  it.scoped("matching is case-sensitive", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      assert.strictEqual((yield* node.request("GET", "/Streams/s")).status, 404)
    })
  )

  it.scoped("%2F stays inside a segment: a stream named a/b", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const reply = yield* appendEvents(node, "a/b", [1])
      assert.strictEqual(reply.status, 201)
      assert.strictEqual(header(reply, "Location"), "http://localhost:2113/streams/a%2Fb/0")
      const read = yield* node.request("GET", "/streams/a%2Fb/0", {
        headers: { Accept: "application/vnd.kurrent.event+json" }
      })
      assert.strictEqual(JSON.parse(text(read)).eventStreamId, "a/b")
      // Unescaped, the slash separates segments: stream "a", event "b".
      const split = yield* node.request("GET", "/streams/a/b", { headers: { Accept: "application/json" } })
      assert.strictEqual(split.status, 400)
      assert.strictEqual(text(split), "'b' is not valid event number")
    })
  )

  it.scoped("literals beat placeholders: $all and %24all are the $all feed, metadata is not an event number", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      for (const url of ["/streams/$all", "/streams/%24all"]) {
        const reply = yield* node.request("GET", url, { headers: { Accept: "application/json" }, auth: AdminAuth })
        assert.strictEqual(reply.status, 200)
        assert.strictEqual(JSON.parse(text(reply)).title, "All events")
      }
      const metadata = yield* node.request("GET", "/streams/s/metadata", { headers: { Accept: "application/json" } })
      assert.strictEqual(metadata.status, 200)
      assert.strictEqual(text(metadata), "{}")
    })
  )

  it.scoped("trailing slashes redirect with 307 to the URL without it, cacheable and public", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      for (const [method, url] of [
        ["GET", "/streams/s/"],
        ["DELETE", "/streams/s/"],
        ["GET", "/streams/$all/"],
        ["GET", "/streams/s/metadata/"]
      ] as const) {
        const reply = yield* node.request(method, url)
        assert.strictEqual(reply.status, 307, url)
        assert.strictEqual(header(reply, "Location"), `http://localhost:2113${url.slice(0, -1)}`)
        assert.strictEqual(header(reply, "Cache-Control"), "max-age=31536000, public")
        assert.strictEqual(text(reply), "Moved Permanently")
      }
      const post = yield* node.request("POST", "/streams/s/?x=1", {
        headers: { "Content-Type": EventsJson },
        body: "[]"
      })
      assert.strictEqual(post.status, 307)
      assert.strictEqual(header(post, "Location"), "http://localhost:2113/streams/s?x=1")
    })
  )
})

describe("authorization", () => {
  const probe = (access: RouteDef["access"]): RouteDef => ({
    method: "GET",
    path: `/probe/${access}`,
    access,
    responseCodecs: ["application/json"],
    handle: () => Effect.succeed({ status: 200, headers: { "Content-Type": "application/json" }, body: "{}" })
  })
  const routes = [probe("anonymous"), probe("authenticated"), probe("ops"), probe("admins"), probe("handler")]
  const run = (settings: Partial<HttpSettings>, url: string, auth?: string) =>
    makeHandler(routes, { ...defaultHttpSettings, ...settings })({
      method: "GET",
      url,
      headers: auth === undefined ? {} : { authorization: auth },
      body: undefined
    }).pipe(Effect.provideService(Authenticator, testAuthenticator()))

  it.effect(
    "each access level, with the bare 401 (no CORS, no body; a Basic challenge only without credentials) on denial",
    () =>
      Effect.gen(function* () {
        const ops = basic("ops", "changeit")
        const table: ReadonlyArray<[string, string | undefined, Partial<HttpSettings>, number]> = [
          ["/probe/anonymous", undefined, {}, 200],
          ["/probe/authenticated", undefined, {}, 401],
          ["/probe/authenticated", undefined, { allowAnonymousEndpointAccess: true }, 200],
          ["/probe/authenticated", UserAuth, {}, 200],
          ["/probe/ops", UserAuth, {}, 401],
          ["/probe/ops", ops, {}, 200],
          ["/probe/ops", AdminAuth, {}, 200],
          ["/probe/admins", ops, {}, 401],
          ["/probe/admins", AdminAuth, {}, 200],
          ["/probe/handler", undefined, {}, 200]
        ]
        for (const [url, auth, settings, status] of table) {
          const reply = yield* run(settings, url, auth)
          assert.strictEqual(reply.status, status, `${url} ${auth ?? "anonymous"}`)
          if (status === 401) {
            assert.strictEqual(header(reply, "WWW-Authenticate"), auth === undefined ? BasicChallenge : undefined)
            assert.isTrue(NoCors(reply))
            assert.strictEqual(header(reply, "Content-Type"), undefined)
            assert.strictEqual(text(reply), "")
          }
        }
      })
  )

  it.scoped("anonymous stream access is refused unless allowed; ACL denials are bare 401s", () =>
    Effect.gen(function* () {
      const closed = yield* makeTestNode({ settings: { allowAnonymousStreamAccess: false } })
      const anonymous = yield* closed.request("GET", "/streams/s", { headers: { Accept: "application/json" } })
      assert.strictEqual(anonymous.status, 401)
      assert.isTrue(NoCors(anonymous))
      assert.strictEqual(
        (yield* closed.request("GET", "/streams/s", { headers: { Accept: "application/json" }, auth: UserAuth }))
          .status,
        404
      )
      closed.deny.add("user|s|$w")
      const denied = yield* appendEvents(closed, "s", [1], { Authorization: UserAuth })
      assert.strictEqual(denied.status, 401)
      assert.strictEqual(header(denied, "WWW-Authenticate"), undefined)
      assert.strictEqual(
        (yield* closed.request("GET", "/streams/s", { headers: { Accept: "application/json" }, auth: UserAuth }))
          .status,
        404
      )
    })
  )

  it.scoped("writes and deletes on $all are refused, even for admins", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      assert.strictEqual((yield* appendEvents(node, "$all", [1], { Authorization: AdminAuth })).status, 401)
      assert.strictEqual((yield* node.request("DELETE", "/streams/$all", { auth: AdminAuth })).status, 401)
    })
  )

  it.scoped("a 401 produced by a handler gets the BasicCustom challenge pair and CORS (variant 3)", () =>
    Effect.gen(function* () {
      const route: RouteDef = {
        method: "GET",
        path: "/inner",
        access: "anonymous",
        responseCodecs: ["application/json"],
        handle: () => Effect.succeed({ status: 401, reason: "Unauthorized", headers: {} })
      }
      const reply = yield* makeHandler(
        [route],
        defaultHttpSettings
      )({ method: "GET", url: "/inner", headers: {}, body: undefined }).pipe(
        Effect.provideService(Authenticator, testAuthenticator())
      )
      assert.deepStrictEqual(reply.headers["WWW-Authenticate"], [
        BasicChallenge,
        'BasicCustom realm="Kurrent"',
        'BasicCustom realm="ES"'
      ])
      assert.strictEqual(header(reply, "Access-Control-Allow-Origin"), "*")
    })
  )
})

describe("health, pre-flight, limits, failures", () => {
  it.scoped("/health/live answers before authentication", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const live = yield* node.request("GET", "/health/live", { auth: basic("admin", "wrong") })
      assert.strictEqual(live.status, 204)
      assert.isTrue(NoCors(live))
      assert.strictEqual((yield* node.request("GET", "/health/live?liveCode=200")).status, 200)
      assert.strictEqual((yield* node.request("POST", "/health/live")).status, 405)
      const down = yield* makeTestNode({ settings: { ready: Effect.succeed(false) } })
      assert.strictEqual((yield* down.request("HEAD", "/health/live")).status, 503)
    })
  )

  it.scoped(
    "/health/ready answers before authentication: 204 when live and healthy, 503 with the reason when writes are refused or the node is not live",
    () =>
      Effect.gen(function* () {
        const node = yield* makeTestNode()
        const ready = yield* node.request("GET", "/health/ready", { auth: basic("admin", "wrong") })
        assert.strictEqual(ready.status, 204)
        assert.isTrue(NoCors(ready))
        assert.strictEqual((yield* node.request("POST", "/health/ready")).status, 405)
        const degraded = yield* makeTestNode({
          settings: {
            health: Effect.succeed({
              status: "degraded",
              reason: "the disk is full: writes are refused until space is freed",
              sinceMillis: 0
            })
          }
        })
        const refused = yield* degraded.request("GET", "/health/ready")
        assert.strictEqual(refused.status, 503)
        assert.strictEqual(refused.reason, "Degraded: the disk is full: writes are refused until space is freed")
        assert.strictEqual(header(refused, "Retry-After"), "5")
        assert.strictEqual((yield* degraded.request("GET", "/health/live")).status, 204)
        const down = yield* makeTestNode({ settings: { ready: Effect.succeed(false) } })
        assert.strictEqual((yield* down.request("HEAD", "/health/ready")).status, 503)
      })
  )

  it.scoped("a CORS pre-flight is answered before authentication", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const reply = yield* node.request("OPTIONS", "/streams/s", {
        auth: basic("admin", "wrong"),
        headers: {
          Origin: "http://ui",
          "Access-Control-Request-Method": "GET",
          "Access-Control-Request-Headers": "Authorization"
        }
      })
      assert.strictEqual(reply.status, 204)
      assert.strictEqual(header(reply, "Access-Control-Allow-Origin"), "*")
      assert.strictEqual(header(reply, "Access-Control-Allow-Methods"), "GET")
      assert.strictEqual(header(reply, "Access-Control-Allow-Headers"), "Authorization")
    })
  )

  it.scoped("a body over the limit is 413 before anything else", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode({ settings: { maxRequestBodyBytes: 100 } })
      const reply = yield* node.request("POST", "/streams/s", {
        headers: { "Content-Type": EventsJson },
        body: "x".repeat(101),
        auth: basic("a", "b")
      })
      assert.strictEqual(reply.status, 413)
      assert.strictEqual(reply.reason, "Maximum Append Size of 100 Exceeded.")
    })
  )

  it.effect("a defect in a handler is a 500 with a reason; a long poll past its deadline is a 408", () =>
    Effect.gen(function* () {
      const routes: ReadonlyArray<RouteDef> = [
        {
          method: "GET",
          path: "/boom",
          access: "anonymous",
          responseCodecs: ["text/plain"],
          handle: () => Effect.die(new Error("kaput\r\nX: y"))
        },
        {
          method: "GET",
          path: "/throw",
          access: "anonymous",
          responseCodecs: ["text/plain"],
          handle: () => {
            throw new Error("sync throw")
          }
        },
        {
          method: "GET",
          path: "/slow",
          access: "anonymous",
          responseCodecs: ["text/plain"],
          handle: () => Effect.as(Effect.sleep(Duration.minutes(5)), { status: 200, headers: {} })
        }
      ]
      const handle = makeHandler(routes, defaultHttpSettings)
      const call = (url: string, headers: Record<string, string> = {}) =>
        handle({ method: "GET", url, headers, body: undefined }).pipe(
          Effect.provideService(Authenticator, testAuthenticator())
        )
      const boom = yield* call("/boom")
      assert.strictEqual(boom.status, 500)
      assert.strictEqual(boom.reason, "Internal Server Error: kaput X: y")
      assert.strictEqual((yield* call("/throw")).status, 500)
      // A long poll waits at most its poll time plus the request deadline (writes time out in the writer).
      const slow = yield* Effect.fork(call("/slow", { "ES-LongPoll": "5" }))
      yield* TestClock.adjust(Duration.seconds(14))
      assert.isTrue((yield* Fiber.poll(slow))._tag === "None")
      yield* TestClock.adjust(Duration.seconds(2))
      const timedOut = yield* Fiber.join(slow)
      assert.strictEqual(timedOut.status, 408)
      assert.strictEqual(timedOut.reason, "Server was unable to handle request in time")
    })
  )
})

describe("cross-cutting headers", () => {
  it.scoped("CORS headers and Content-Length on routed replies", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      const reply = yield* appendEvents(node, "s", [1])
      assert.strictEqual(header(reply, "Access-Control-Allow-Origin"), "*")
      assert.strictEqual(
        header(reply, "Access-Control-Expose-Headers"),
        "Location, Kurrent-Position, Kurrent-CurrentVersion, ES-Position, ES-CurrentVersion, "
      )
      assert.match(header(reply, "Access-Control-Allow-Headers") ?? "", /ES-ExpectedVersion, ES-EventId/)
      assert.strictEqual(header(reply, "Content-Length"), "0")
      const read = yield* node.request("GET", "/streams/s/0", { headers: { Accept: "application/json" } })
      assert.strictEqual(header(read, "Content-Length"), String(Buffer.byteLength(text(read))))
    })
  )

  it.scoped("Accept-Encoding exactly gzip compresses; a list does not", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      yield* appendEvents(node, "s", [1])
      const zipped = yield* node.request("GET", "/streams/s/0", {
        headers: { Accept: "application/json", "Accept-Encoding": "gzip" }
      })
      assert.strictEqual(header(zipped, "Content-Encoding"), "gzip")
      assert.deepStrictEqual(JSON.parse(gunzipSync(zipped.body as Uint8Array).toString("utf8")), { n: 1 })
      const listed = yield* node.request("GET", "/streams/s/0", {
        headers: { Accept: "application/json", "Accept-Encoding": "gzip, deflate, br" }
      })
      assert.strictEqual(header(listed, "Content-Encoding"), undefined)
    })
  )

  it.scoped("absolute URLs follow Host, advertise-as and X-Forwarded-*", () =>
    Effect.gen(function* () {
      const node = yield* makeTestNode()
      let n = 0
      const location = (headers: Record<string, string>) =>
        Effect.map(appendEvents(node, "s@x", [++n], headers), (r) => header(r, "Location"))
      assert.strictEqual(yield* location({}), "http://localhost:2113/streams/s%40x/0")
      assert.strictEqual(yield* location({ Host: "db.example:80" }), "http://db.example/streams/s%40x/1")
      assert.strictEqual(
        yield* location({
          "X-Forwarded-Proto": "https",
          "X-Forwarded-Host": "proxy:8443",
          "X-Forwarded-Prefix": "testprefix"
        }),
        "https://proxy:8443/testprefix/streams/s%40x/2"
      )
      assert.strictEqual(
        yield* location({ "X-Forwarded-Port": "443", "X-Forwarded-Proto": "https" }),
        "https://localhost/streams/s%40x/3"
      )
      const advertised = yield* makeTestNode({ settings: { advertiseHost: "public.example", advertisePort: 1234 } })
      const reply = yield* appendEvents(advertised, "s", [1])
      assert.strictEqual(header(reply, "Location"), "http://public.example:1234/streams/s/0")
    })
  )
})
