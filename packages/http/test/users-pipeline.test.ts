/**
 * The users routes mounted in the real pipeline with the real Basic authenticator:
 * who may call what (bare 401 for first-level denials, 401 with X-Basic for bad credentials), `/users` and
 * `/users/`, `$current` beating `{login}`, JSON-only codecs (415/406), and that disabled, deleted and
 * re-passworded users stop authenticating.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { defaultStorageConfig, EventStore } from "@vellum/storage"
import { testSecurityConfig, Authentication, Users } from "@vellum/security"
import { defaultHttpSettings, makeHandler } from "../src/index.js"
import { usersRoutes } from "../src/users/index.js"

const stack = Layer.provideMerge(
  Authentication.layer({ enableTrustedAuth: false }),
  Users.layer(testSecurityConfig)
).pipe(
  Layer.provide(EventStore.layer({ ...defaultStorageConfig("/db"), chunkSize: 64 * 1024, preallocateChunks: false })),
  Layer.provide(MemoryDisk.layer()),
  Layer.orDie
)

const handle = makeHandler(usersRoutes, defaultHttpSettings)

const basic = (login: string, password: string) => "Basic " + Buffer.from(`${login}:${password}`).toString("base64")
const asAdmin = basic("admin", "changeit")

const request = (
  method: string,
  url: string,
  options: { auth?: string; body?: unknown; contentType?: string; accept?: string } = {}
) =>
  handle({
    method,
    url,
    headers: {
      host: "localhost:2113",
      ...(options.auth !== undefined ? { authorization: options.auth } : {}),
      ...(options.body !== undefined ? { "content-type": options.contentType ?? "application/json" } : {}),
      ...(options.accept !== undefined ? { accept: options.accept } : {})
    },
    body: options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body))
  })

const statusOf = (method: string, url: string, options: Parameters<typeof request>[2] = {}) =>
  Effect.map(request(method, url, options), (r) => r.status)

describe("users routes in the pipeline", () => {
  it.effect("admins manage users; others get a bare 401; bad credentials get the X-Basic challenge", () =>
    Effect.gen(function* () {
      const created = yield* request("POST", "/users/", {
        auth: asAdmin,
        body: { loginName: "alice", fullName: "A", groups: [], password: "pw" }
      })
      assert.strictEqual(created.status, 201)
      assert.strictEqual(created.headers["Location"], "http://localhost:2113/users/alice")
      assert.strictEqual(yield* statusOf("GET", "/users", { auth: asAdmin }), 200)
      assert.strictEqual(yield* statusOf("GET", "/users/", { auth: asAdmin }), 200)
      assert.strictEqual(yield* statusOf("GET", "/users/alice", { auth: asAdmin }), 200)

      const alice = basic("alice", "pw")
      for (const [method, url] of [
        ["GET", "/users"],
        ["GET", "/users/alice"],
        ["DELETE", "/users/ops"],
        ["POST", "/users/ops/command/disable"]
      ] as const) {
        const denied = yield* request(method, url, { auth: alice })
        assert.deepStrictEqual(
          [denied.status, denied.headers["WWW-Authenticate"], denied.body ?? ""],
          [401, undefined, ""],
          `${method} ${url}`
        )
        assert.strictEqual((yield* request(method, url)).status, 401, `anonymous ${method} ${url}`)
      }
      const wrong = yield* request("GET", "/users", { auth: basic("admin", "nope") })
      assert.deepStrictEqual([wrong.status, wrong.headers["WWW-Authenticate"]], [401, 'X-Basic realm="ESDB"'])
      assert.strictEqual((yield* request("GET", "/users", { auth: "Basic !!!" })).status, 400)
    }).pipe(Effect.provide(stack))
  )

  it.effect("$current is any authenticated user's own record; change-password is self-only", () =>
    Effect.gen(function* () {
      yield* request("POST", "/users", { auth: asAdmin, body: { loginName: "alice", password: "pw" } })
      const me = yield* request("GET", "/users/$current", { auth: basic("alice", "pw") })
      assert.strictEqual(me.status, 200)
      assert.strictEqual((JSON.parse(String(me.body)) as { data: { loginName: string } }).data.loginName, "alice")
      assert.strictEqual(yield* statusOf("GET", "/users/$current"), 401)

      const change = (auth: string, currentPassword: string) =>
        statusOf("POST", "/users/alice/command/change-password", {
          auth,
          body: { currentPassword, newPassword: "pw2" }
        })
      assert.strictEqual(yield* change(asAdmin, "pw"), 401, "admins use reset-password")
      assert.strictEqual(yield* change(basic("alice", "pw"), "wrong"), 401)
      assert.strictEqual(yield* change(basic("alice", "pw"), "pw"), 200)
      assert.strictEqual(
        yield* statusOf("GET", "/users/$current", { auth: basic("alice", "pw") }),
        401,
        "the old password no longer works"
      )
      assert.strictEqual(yield* statusOf("GET", "/users/$current", { auth: basic("alice", "pw2") }), 200)
    }).pipe(Effect.provide(stack))
  )

  it.effect("disabled and deleted users cannot authenticate; reset-password takes effect at once", () =>
    Effect.gen(function* () {
      yield* request("POST", "/users", { auth: asAdmin, body: { loginName: "bob", password: "pw" } })
      const bob = basic("bob", "pw")
      assert.strictEqual(yield* statusOf("GET", "/users/$current", { auth: bob }), 200)
      assert.strictEqual(yield* statusOf("POST", "/users/bob/command/disable", { auth: asAdmin }), 200)
      assert.strictEqual(yield* statusOf("GET", "/users/$current", { auth: bob }), 401)
      assert.strictEqual(yield* statusOf("POST", "/users/bob/command/enable", { auth: asAdmin }), 200)
      assert.strictEqual(
        yield* statusOf("POST", "/users/bob/command/reset-password", { auth: asAdmin, body: { newPassword: "new" } }),
        200
      )
      assert.strictEqual(yield* statusOf("GET", "/users/$current", { auth: bob }), 401)
      assert.strictEqual(yield* statusOf("GET", "/users/$current", { auth: basic("bob", "new") }), 200)
      assert.strictEqual(yield* statusOf("DELETE", "/users/bob", { auth: asAdmin }), 200)
      assert.strictEqual(yield* statusOf("GET", "/users/$current", { auth: basic("bob", "new") }), 401)
      assert.strictEqual(yield* statusOf("GET", "/users/bob", { auth: asAdmin }), 404)
    }).pipe(Effect.provide(stack))
  )

  it.effect("JSON only: an XML body is 415, Accept: text/xml is 406; command routes need no Content-Type", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        yield* statusOf("POST", "/users", {
          auth: asAdmin,
          body: { loginName: "x", password: "y" },
          contentType: "text/xml"
        }),
        415
      )
      assert.strictEqual(yield* statusOf("GET", "/users", { auth: asAdmin, accept: "text/xml" }), 406)
      assert.strictEqual(yield* statusOf("GET", "/users", { auth: asAdmin, accept: "*/*" }), 200)
      assert.strictEqual(yield* statusOf("POST", "/users/ops/command/disable", { auth: asAdmin }), 200)
      assert.strictEqual(yield* statusOf("PUT", "/users/ops/command/enable", { auth: asAdmin }), 405)
    }).pipe(Effect.provide(stack))
  )
})
