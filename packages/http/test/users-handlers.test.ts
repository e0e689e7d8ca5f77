/**
 * The users API handlers called directly over a real Users service (EventStore on the
 * in-memory disk): exact JSON documents (envelope, links, `$current`, command results, error forms),
 * statuses, Location, body parsing (lenient JSON, case-insensitive names, clear 400s) and who may call what.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { defaultStorageConfig, EventStore } from "@vellum/storage"
import { testSecurityConfig, type Principal, Users } from "@vellum/security"
import {
  changePassword,
  createUser,
  deleteUser,
  disableUser,
  enableUser,
  getCurrentUser,
  getUser,
  listUsers,
  parseCreateUser,
  parseUpdateUser,
  resetPassword,
  updateUser,
  type UsersHandler
} from "../src/users/index.js"
import type { Reply } from "../src/Reply.js"

const stack: Layer.Layer<Users> = Users.layer(testSecurityConfig).pipe(
  Layer.provide(EventStore.layer({ ...defaultStorageConfig("/db"), chunkSize: 64 * 1024, preallocateChunks: false })),
  Layer.provide(MemoryDisk.layer()),
  Layer.orDie
)

const admin: Principal = { name: "admin", groups: ["$admins"], anonymous: false }
const ops: Principal = { name: "ops", groups: ["$ops"], anonymous: false }
const anonymous: Principal = { name: "", groups: [], anonymous: true }
const base = "http://127.0.0.1:2113"

const call = (handler: UsersHandler, principal: Principal, params: Record<string, string> = {}, body?: unknown) =>
  handler({
    principal,
    params,
    baseUrl: base,
    body: body === undefined ? undefined : Buffer.from(typeof body === "string" ? body : JSON.stringify(body))
  })

const text = (reply: Reply) =>
  typeof reply.body === "string" ? reply.body : Buffer.from(reply.body ?? new Uint8Array()).toString("utf8")
const status = (reply: Reply) => `${reply.status} ${text(reply)}`
const jsonOf = (reply: Reply) => JSON.parse(text(reply)) as Record<string, unknown>

const command = (loginName: string, success = true, error = "Success") =>
  `{\n  "loginName": ${JSON.stringify(loginName)},\n  "success": ${success},\n  "error": "${error}"\n}`

const createAlice = call(
  createUser,
  admin,
  {},
  { loginName: "alice", fullName: "Alice A", groups: ["readers", "$ops"], password: "pw" }
)

describe("users handlers: documents", () => {
  it.effect("create answers 201, the escaped Location and the command document; re-create is idempotent", () =>
    Effect.gen(function* () {
      const created = yield* createAlice
      assert.strictEqual(created.status, 201)
      assert.strictEqual(created.reason, "Created")
      assert.strictEqual(created.headers["Location"], `${base}/users/alice`)
      assert.strictEqual(created.headers["Content-Type"], "application/json; charset=utf-8")
      assert.strictEqual(text(created), command("alice"))
      assert.strictEqual((yield* createAlice).status, 201)
      const conflict = yield* call(createUser, admin, {}, { loginName: "alice", password: "other" })
      assert.strictEqual(status(conflict), `409 ${command("alice", false, "Conflict")}`)
      const odd = yield* call(createUser, admin, {}, { loginName: "a b/c$", password: "pw" })
      assert.strictEqual(odd.headers["Location"], `${base}/users/a%20b%2Fc%24`)
    }).pipe(Effect.provide(stack))
  )

  it.effect("GET /users/{login}: the envelope with links; disabled users offer enable", () =>
    Effect.gen(function* () {
      yield* createAlice
      const reply = yield* call(getUser, admin, { login: "alice" })
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(
        text(reply),
        [
          "{",
          '  "data": {',
          '    "loginName": "alice",',
          '    "fullName": "Alice A",',
          '    "groups": [',
          '      "readers",',
          '      "$ops"',
          "    ],",
          '    "dateLastUpdated": null,',
          '    "disabled": false,',
          '    "links": [',
          "      {",
          `        "href": "${base}/users/alice/command/reset-password",`,
          '        "rel": "reset-password"',
          "      },",
          "      {",
          `        "href": "${base}/users/alice/command/change-password",`,
          '        "rel": "change-password"',
          "      },",
          "      {",
          `        "href": "${base}/users/alice",`,
          '        "rel": "edit"',
          "      },",
          "      {",
          `        "href": "${base}/users/alice",`,
          '        "rel": "delete"',
          "      },",
          "      {",
          `        "href": "${base}/users/alice/command/disable",`,
          '        "rel": "disable"',
          "      }",
          "    ]",
          "  },",
          '  "success": true,',
          '  "error": "Success"',
          "}"
        ].join("\n")
      )
      assert.strictEqual(status(yield* call(disableUser, admin, { login: "alice" })), `200 ${command("alice")}`)
      const links = jsonOf(yield* call(getUser, admin, { login: "alice" })).data as {
        links: Array<{ rel: string; href: string }>
        disabled: boolean
      }
      assert.isTrue(links.disabled)
      assert.deepStrictEqual(links.links[4], { href: `${base}/users/alice/command/enable`, rel: "enable" })
      assert.strictEqual(
        status(yield* call(getUser, admin, { login: "nobody" })),
        '404 {\n  "data": null,\n  "success": false,\n  "error": "NotFound"\n}'
      )
    }).pipe(Effect.provide(stack))
  )

  it.effect("GET /users: every user sorted by login; $current: no links and a real date", () =>
    Effect.gen(function* () {
      yield* createAlice
      const list = jsonOf(yield* call(listUsers, admin))
      assert.deepStrictEqual(
        (list.data as Array<{ loginName: string }>).map((u) => u.loginName),
        ["admin", "alice", "ops"]
      )
      assert.deepStrictEqual([list.success, list.error], [true, "Success"])
      const current = yield* call(getCurrentUser, { name: "alice", groups: [], anonymous: false })
      assert.strictEqual(
        text(current),
        [
          "{",
          '  "data": {',
          '    "loginName": "alice",',
          '    "fullName": "Alice A",',
          '    "groups": [',
          '      "readers",',
          '      "$ops"',
          "    ],",
          '    "dateLastUpdated": "1970-01-01T00:00:00+00:00",',
          '    "disabled": false',
          "  },",
          '  "success": true,',
          '  "error": "Success"',
          "}"
        ].join("\n")
      )
      assert.strictEqual(
        status(yield* call(getCurrentUser, anonymous)),
        '401 {\n  "data": null,\n  "success": false,\n  "error": "Unauthorized"\n}'
      )
    }).pipe(Effect.provide(stack))
  )

  it.effect("update, enable, reset-password, delete: 200 command documents; unknown users 404", () =>
    Effect.gen(function* () {
      yield* createAlice
      assert.strictEqual(
        status(yield* call(updateUser, admin, { login: "alice" }, { FULLNAME: "Alice B" })),
        `200 ${command("alice")}`
      )
      const data = jsonOf(yield* call(getUser, admin, { login: "alice" })).data as {
        fullName: string
        groups: Array<string>
      }
      assert.deepStrictEqual([data.fullName, data.groups], ["Alice B", ["readers", "$ops"]])
      assert.strictEqual(status(yield* call(enableUser, admin, { login: "alice" })), `200 ${command("alice")}`)
      assert.strictEqual(
        status(yield* call(resetPassword, admin, { login: "alice" }, { newPassword: "new" })),
        `200 ${command("alice")}`
      )
      assert.strictEqual(status(yield* call(deleteUser, admin, { login: "alice" })), `200 ${command("alice")}`)
      for (const handler of [updateUser, deleteUser, enableUser, disableUser]) {
        assert.strictEqual(
          status(yield* call(handler, admin, { login: "alice" }, {})),
          `404 ${command("alice", false, "NotFound")}`
        )
      }
    }).pipe(Effect.provide(stack))
  )

  it.effect("change-password: the user's own, with the right current password", () =>
    Effect.gen(function* () {
      yield* createAlice
      const alice: Principal = { name: "alice", groups: ["readers"], anonymous: false }
      const wrong = yield* call(
        changePassword,
        alice,
        { login: "alice" },
        { currentPassword: "nope", newPassword: "x" }
      )
      assert.strictEqual(status(wrong), `401 ${command("alice", false, "Unauthorized")}`)
      assert.isUndefined(wrong.bare)
      assert.strictEqual(
        status(yield* call(changePassword, alice, { login: "alice" }, { currentPassword: "pw", newPassword: "x" })),
        `200 ${command("alice")}`
      )
      // Anyone else, admins included, gets the bare first-level 401.
      for (const other of [admin, anonymous, ops]) {
        const denied = yield* call(
          changePassword,
          other,
          { login: "alice" },
          { currentPassword: "x", newPassword: "y" }
        )
        assert.deepStrictEqual([denied.status, denied.bare, denied.body], [401, true, undefined])
      }
    }).pipe(Effect.provide(stack))
  )

  it.effect("non-admins get the Unauthorized envelope from the admin routes (defence in depth)", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        status(yield* call(getUser, ops, { login: "admin" })),
        '401 {\n  "data": null,\n  "success": false,\n  "error": "Unauthorized"\n}'
      )
      assert.strictEqual(
        status(yield* call(deleteUser, ops, { login: "admin" })),
        `401 ${command("admin", false, "Unauthorized")}`
      )
      assert.strictEqual((yield* call(createUser, anonymous, {}, { loginName: "x", password: "y" })).status, 401)
      assert.strictEqual((yield* call(listUsers, ops)).status, 401)
    }).pipe(Effect.provide(stack))
  )
})

describe("users handlers: request bodies", () => {
  it.effect("bad bodies are plain-text 400s with the reason", () =>
    Effect.gen(function* () {
      const bad = (handler: UsersHandler, body: unknown) =>
        Effect.map(call(handler, admin, { login: "admin" }, body), (r) => {
          assert.strictEqual(r.headers["Content-Type"], "text/plain")
          return status(r)
        })
      assert.strictEqual(
        yield* Effect.map(createUser({ principal: admin, params: {}, baseUrl: base, body: undefined }), status),
        "400 A JSON body is required"
      )
      assert.strictEqual(yield* bad(createUser, "{not json"), "400 The body is not valid JSON")
      assert.strictEqual(yield* bad(createUser, "[1]"), "400 The body must be a JSON object")
      assert.strictEqual(yield* bad(createUser, { fullName: "x", password: "p" }), "400 'loginName' is required")
      assert.strictEqual(yield* bad(createUser, { loginName: "x" }), "400 'password' is required")
      assert.strictEqual(
        yield* bad(createUser, { loginName: "x", password: "p", groups: "g" }),
        "400 'groups' must be an array of strings"
      )
      assert.strictEqual(yield* bad(createUser, { loginName: true, password: "p" }), "400 'loginName' must be a string")
      assert.strictEqual(
        yield* bad(createUser, { loginName: "a:b", password: "p" }),
        "400 The login name contains ':' (Basic credentials could not carry it)"
      )
      assert.strictEqual(yield* bad(createUser, { loginName: "x", password: "" }), "400 The password is empty")
      assert.strictEqual(yield* bad(resetPassword, {}), "400 'newPassword' is required")
      assert.strictEqual(yield* bad(updateUser, { groups: [{}] }), "400 'groups' must be an array of strings")
      const bytes = Buffer.from([0x7b, 0xff, 0x7d])
      assert.strictEqual(
        yield* Effect.map(createUser({ principal: admin, params: {}, baseUrl: base, body: bytes }), status),
        "400 The body is not valid UTF-8"
      )
    }).pipe(Effect.provide(stack))
  )

  it("JSON is read leniently: names ignore case, null is absent, numbers count as text", () => {
    const parsed = parseCreateUser(
      Buffer.from("{LoginName: 'bob', PASSWORD: 1234, fullname: null, Groups: ['a', 7], extra: 1}")
    )
    assert.deepStrictEqual(parsed._tag === "Right" ? parsed.right : parsed.left, {
      loginName: "bob",
      fullName: "",
      groups: ["a", "7"],
      password: "1234"
    })
    const update = parseUpdateUser(Buffer.from('{"groups": null}'))
    assert.deepStrictEqual(update._tag === "Right" ? update.right : update.left, {})
  })
})
