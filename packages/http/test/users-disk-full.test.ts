/**
 * Creating a user on a full disk: the store refuses the write, and the users route answers as appends do —
 * 507 Insufficient Storage with Retry-After and the reason in its JSON envelope (it used to be
 * `500 {"error":"Error"}`); once space is freed the same request creates the user.
 */
import { describe, it, assert } from "@effect/vitest"
import { Duration, Effect, Layer, TestClock } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { defaultStorageConfig, EventStore } from "@vellum/storage"
import { testSecurityConfig, Authentication, Users } from "@vellum/security"
import { defaultHttpSettings, makeHandler } from "../src/index.js"
import { usersRoutes } from "../src/users/index.js"

const mem = new MemoryDisk()
const stack = Layer.provideMerge(
  Authentication.layer({ enableTrustedAuth: false }),
  Users.layer(testSecurityConfig)
).pipe(
  Layer.provide(EventStore.layer({ ...defaultStorageConfig("/db"), chunkSize: 4096, preallocateChunks: false })),
  Layer.provide(MemoryDisk.layer(mem)),
  Layer.orDie
)

const handle = makeHandler(usersRoutes, defaultHttpSettings)
const asAdmin = "Basic " + Buffer.from("admin:changeit").toString("base64")

const createUser = (login: string) =>
  handle({
    method: "POST",
    url: "/users/",
    headers: { host: "localhost:2113", authorization: asAdmin, "content-type": "application/json" },
    body: Buffer.from(JSON.stringify({ loginName: login, fullName: "F", groups: [], password: "pw" }))
  })

describe("users on a full disk", () => {
  it.scoped("creating a user answers 507 with the reason while the disk is full, and 201 once space is freed", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* createUser("first")).status, 201)
      mem.capacityBytes = 0
      const refused = yield* createUser("alice")
      assert.strictEqual(refused.status, 507)
      assert.strictEqual(refused.reason, "Insufficient Storage")
      assert.strictEqual(refused.headers["Retry-After"], "5")
      const body = Buffer.from(refused.body ?? "").toString("utf8")
      assert.deepStrictEqual(JSON.parse(body), {
        loginName: "alice",
        success: false,
        error: "Error",
        reason: "the disk is full: writes are refused until space is freed"
      })
      assert.notInclude(body, "/db")
      mem.capacityBytes = undefined
      yield* TestClock.adjust(Duration.seconds(6))
      assert.strictEqual((yield* createUser("alice")).status, 201)
    }).pipe(Effect.provide(stack))
  )
})
