/**
 * The Users service against a real EventStore on the in-memory disk: default users, the stored layout
 * (`$user-{login}` events, its ACL, `$users`, `$users-password-notifications`), the whole lifecycle
 * (create idempotency and conflicts, update, enable/disable, reset and change password, delete and
 * re-create), authentication (one error for every kind of wrong credentials, disabled and deleted users,
 * cache invalidation after changes made directly in the stream) and restarts.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { EventStore, ExpectedVersion, type EventStoreService } from "@vellum/storage"
import { makeUsers, testSecurityConfig, verifyPassword, type UsersService } from "../src/index.js"
import { jsonEvent, openNode, outcome } from "./support.js"

const events = (store: EventStoreService, stream: string) =>
  Effect.map(store.readStreamForward(stream, 0, 4096), (r) =>
    r._tag === "Success" ? r.events.map((e) => e.event!) : []
  )

const json = (data: Uint8Array) => JSON.parse(Buffer.from(data).toString("utf8")) as Record<string, unknown>

const auth = (users: UsersService, login: string, password: string) =>
  Effect.match(users.authenticate(login, password), {
    onFailure: (e) => `${e._tag}: ${e.message}`,
    onSuccess: (p) => p
  })

const createAlice = (users: UsersService) =>
  users.create({ loginName: "alice", fullName: "Alice A", groups: ["readers"], password: "s3cret" })

describe("Users: default users and stored layout", () => {
  it.scoped("admin/changeit ($admins) and ops/changeit ($ops) exist after the first start", () =>
    Effect.gen(function* () {
      const { users, store } = yield* openNode()
      assert.deepStrictEqual(yield* auth(users, "admin", "changeit"), {
        name: "admin",
        groups: ["$admins"],
        anonymous: false
      })
      assert.deepStrictEqual(yield* auth(users, "ops", "changeit"), { name: "ops", groups: ["$ops"], anonymous: false })
      const list = yield* users.list
      assert.deepStrictEqual(
        list.map((u) => [u.loginName, u.fullName, u.groups, u.disabled]),
        [
          ["admin", "KurrentDB Administrator", ["$admins"], false],
          ["ops", "KurrentDB Operations", ["$ops"], false]
        ]
      )
      const adminEvents = yield* events(store, "$user-admin")
      assert.deepStrictEqual(
        adminEvents.map((e) => e.eventType),
        ["$UserCreated"]
      )
      const data = json(adminEvents[0]!.data)
      assert.deepStrictEqual(Object.keys(data), ["loginName", "fullName", "hash", "disabled", "groups"])
      assert.match(data.hash as string, /^\$scrypt\$ln=4,r=1,p=1\$/)
      const meta = yield* store.getStreamMetadata("$user-admin")
      assert.deepStrictEqual(meta.metadata.acl, {
        read: undefined,
        write: ["$admins"],
        delete: ["$admins"],
        metaRead: undefined,
        metaWrite: ["$admins"]
      })
      const listed = yield* events(store, "$users")
      assert.deepStrictEqual(
        listed.map((e) => [e.eventType, e.data.toString(), e.flags & 1]),
        [
          ["$User", "admin", 0],
          ["$User", "ops", 0]
        ]
      )
    })
  )

  it.scoped(
    "configured default passwords; nothing is re-created on restart; createDefaultUsers=false creates none",
    () =>
      Effect.gen(function* () {
        const node = yield* openNode({ defaultAdminPassword: "a-pw", defaultOpsPassword: "o-pw" })
        assert.deepStrictEqual(node.users.createdDefaultUsers, ["admin", "ops"])
        assert.strictEqual(yield* outcome(node.users.authenticate("admin", "a-pw")), "Success")
        assert.strictEqual(yield* outcome(node.users.authenticate("ops", "o-pw")), "Success")
        yield* node.users.resetPassword("admin", "new-pw")
        yield* node.restart
        assert.deepStrictEqual(node.users.createdDefaultUsers, [], "a restart creates none")
        assert.strictEqual(yield* outcome(node.users.authenticate("admin", "new-pw")), "Success")
        assert.strictEqual((yield* events(node.store, "$users")).length, 2)
        const bare = yield* openNode({ createDefaultUsers: false })
        assert.deepStrictEqual(bare.users.createdDefaultUsers, [])
        assert.strictEqual(yield* outcome(bare.users.authenticate("admin", "changeit")), "AuthenticationFailed")
        assert.strictEqual(
          yield* outcome(bare.users.list),
          "UserNotFound",
          "no $users stream: NotFound, as the reference"
        )
      })
  )
})

describe("Users: lifecycle", () => {
  it.scoped("create is idempotent with the same password and a Conflict with another; invalid input is rejected", () =>
    Effect.gen(function* () {
      const { users, store } = yield* openNode()
      yield* createAlice(users)
      yield* createAlice(users)
      assert.strictEqual((yield* events(store, "$user-alice")).length, 1, "the idempotent create wrote nothing")
      assert.strictEqual(
        yield* outcome(users.create({ loginName: "alice", fullName: "x", groups: [], password: "other" })),
        "UserConflict"
      )
      const invalid = (loginName: string, password = "pw", groups: Array<string> = []) =>
        Effect.match(users.create({ loginName, fullName: "", groups, password }), {
          onFailure: (e) => (e._tag === "UserInvalidArgument" ? e.message : e._tag),
          onSuccess: () => "created"
        })
      assert.strictEqual(yield* invalid(""), "The login name is empty")
      assert.match(yield* invalid("a:b"), /contains ':'/)
      assert.match(yield* invalid("$current"), /reserved/)
      assert.match(yield* invalid("a\nb"), /control character/)
      assert.match(yield* invalid("a\ud800"), /well-formed/)
      assert.strictEqual(yield* invalid("carol", ""), "The password is empty")
      assert.strictEqual(yield* invalid("carol", "pw", ["ok", ""]), "A group name is empty")
      assert.strictEqual(yield* invalid("carol with spaces/and-slash"), "created")
    })
  )

  it.scoped("get, update, enable/disable, reset and change password", () =>
    Effect.gen(function* () {
      const { users, store } = yield* openNode()
      yield* createAlice(users)
      assert.deepStrictEqual(yield* users.get("alice"), {
        loginName: "alice",
        fullName: "Alice A",
        groups: ["readers"],
        disabled: false,
        updatedMicros: 0
      })
      yield* users.update("alice", { fullName: "Alice B" })
      assert.deepStrictEqual((yield* users.get("alice")).groups, ["readers"], "absent groups are kept")
      yield* users.update("alice", { groups: ["writers", "$ops"] })
      const updated = yield* users.get("alice")
      assert.deepStrictEqual([updated.fullName, updated.groups], ["Alice B", ["writers", "$ops"]])
      assert.deepStrictEqual(yield* auth(users, "alice", "s3cret"), {
        name: "alice",
        groups: ["writers", "$ops"],
        anonymous: false
      })

      yield* users.disable("alice")
      assert.isTrue((yield* users.get("alice")).disabled)
      assert.strictEqual(yield* auth(users, "alice", "s3cret"), "AuthenticationFailed: Invalid login or password")
      yield* users.enable("alice")
      assert.strictEqual(yield* outcome(users.authenticate("alice", "s3cret")), "Success")

      yield* users.resetPassword("alice", "reset-pw")
      assert.strictEqual(yield* outcome(users.authenticate("alice", "s3cret")), "AuthenticationFailed")
      assert.strictEqual(yield* outcome(users.authenticate("alice", "reset-pw")), "Success")

      assert.strictEqual(yield* outcome(users.changePassword("alice", "wrong", "x")), "UserUnauthorized")
      yield* users.changePassword("alice", "reset-pw", "changed-pw")
      assert.strictEqual(yield* outcome(users.authenticate("alice", "reset-pw")), "AuthenticationFailed")
      assert.strictEqual(yield* outcome(users.authenticate("alice", "changed-pw")), "Success")
      assert.strictEqual(yield* outcome(users.resetPassword("alice", "")), "UserInvalidArgument")

      const types = (yield* events(store, "$user-alice")).map((e) => e.eventType)
      assert.deepStrictEqual(types, ["$UserCreated", ...Array(6).fill("$UserUpdated")])
      // Password, group, disable changes are announced; enable is not (as the reference).
      const notices = yield* events(store, "$users-password-notifications")
      assert.deepStrictEqual(
        notices.map((e) => [e.eventType, json(e.data)]),
        Array(5).fill(["$PasswordChanged", { loginName: "alice" }])
      )
      assert.strictEqual((yield* store.getStreamMetadata("$users-password-notifications")).metadata.maxAge, 3600)
      for (const op of [
        users.get("nobody"),
        users.update("nobody", {}),
        users.enable("nobody"),
        users.disable("nobody"),
        users.delete("nobody"),
        users.resetPassword("nobody", "x"),
        users.changePassword("nobody", "x", "y")
      ]) {
        assert.strictEqual(yield* outcome(op), "UserNotFound")
      }
    })
  )

  it.scoped("delete soft-deletes the stream; the login can be created again with a fresh history", () =>
    Effect.gen(function* () {
      const node = yield* openNode()
      yield* createAlice(node.users)
      yield* node.users.update("alice", { groups: ["old"] })
      assert.strictEqual(yield* outcome(node.users.authenticate("alice", "s3cret")), "Success")
      yield* node.users.delete("alice")
      assert.strictEqual(yield* outcome(node.users.get("alice")), "UserNotFound")
      assert.strictEqual(yield* auth(node.users, "alice", "s3cret"), "AuthenticationFailed: Invalid login or password")
      assert.deepStrictEqual(
        (yield* node.users.list).map((u) => u.loginName),
        ["admin", "ops"]
      )
      assert.strictEqual((yield* node.store.readStreamForward("$user-alice", 0, 10))._tag, "NoStream")

      yield* node.users.create({ loginName: "alice", fullName: "New Alice", groups: [], password: "fresh" })
      yield* node.restart
      const again = yield* node.users.get("alice")
      assert.deepStrictEqual([again.fullName, again.groups], ["New Alice", []])
      assert.strictEqual(yield* outcome(node.users.authenticate("alice", "s3cret")), "AuthenticationFailed")
      assert.strictEqual(yield* outcome(node.users.authenticate("alice", "fresh")), "Success")
      assert.deepStrictEqual(
        (yield* events(node.store, "$user-alice")).map((e) => [e.eventNumber, e.eventType]),
        [[2, "$UserCreated"]],
        "old events hidden"
      )
      assert.deepStrictEqual((yield* node.store.getStreamMetadata("$user-alice")).metadata.acl?.write, ["$admins"])
      assert.deepStrictEqual(
        (yield* node.users.list).map((u) => u.loginName),
        ["admin", "alice", "ops"],
        "listed once though $users names it twice"
      )
    })
  )

  it.scoped("a hard-deleted user stream cannot be re-created (Conflict)", () =>
    Effect.gen(function* () {
      const { users, store } = yield* openNode()
      yield* createAlice(users)
      yield* store.deleteStream("$user-alice", ExpectedVersion.Any, true)
      assert.strictEqual(yield* outcome(users.get("alice")), "UserNotFound")
      assert.strictEqual(
        yield* outcome(users.create({ loginName: "alice", fullName: "", groups: [], password: "x" })),
        "UserConflict"
      )
    })
  )

  it.scoped("list is sorted by login as the reference (culture order, not code points); current needs a user", () =>
    Effect.gen(function* () {
      const { users } = yield* openNode()
      for (const login of ["Zed", "bob", "Bob", "_x", "émile"])
        yield* users.create({ loginName: login, fullName: "", groups: [], password: "pw" })
      assert.deepStrictEqual(
        (yield* users.list).map((u) => u.loginName),
        ["_x", "admin", "bob", "Bob", "émile", "ops", "Zed"]
      )
      assert.strictEqual((yield* users.current({ name: "bob", groups: [], anonymous: false })).loginName, "bob")
      assert.strictEqual(yield* outcome(users.current({ name: "", groups: [], anonymous: true })), "UserUnauthorized")
      assert.strictEqual(
        yield* outcome(users.current({ name: "system", groups: ["$admins"], anonymous: false })),
        "UserNotFound"
      )
    })
  )
})

describe("Users: authentication", () => {
  it.scoped("unknown login, wrong password and disabled user fail with the same error", () =>
    Effect.gen(function* () {
      const { users } = yield* openNode()
      yield* createAlice(users)
      yield* users.create({ loginName: "dora", fullName: "", groups: [], password: "pw" })
      yield* users.disable("dora")
      const failures = [
        yield* auth(users, "nobody", "s3cret"),
        yield* auth(users, "alice", "wrong"),
        yield* auth(users, "dora", "pw"),
        yield* auth(users, "", "")
      ]
      assert.deepStrictEqual(new Set(failures), new Set(["AuthenticationFailed: Invalid login or password"]))
      // A successful login is cached; the cache does not let a wrong password through afterwards.
      assert.strictEqual(yield* outcome(users.authenticate("alice", "s3cret")), "Success")
      assert.strictEqual(yield* outcome(users.authenticate("alice", "s3cret")), "Success")
      assert.strictEqual(yield* outcome(users.authenticate("alice", "s3cre")), "AuthenticationFailed")
      assert.strictEqual(yield* outcome(users.authenticate("alice", "s3cret")), "Success")
    })
  )

  it.scoped(
    "changes written straight to the user stream reach authentication (commit listener invalidates the cache)",
    () =>
      Effect.gen(function* () {
        const { users, store } = yield* openNode()
        yield* createAlice(users)
        assert.strictEqual(yield* outcome(users.authenticate("alice", "s3cret")), "Success")
        const stored = json((yield* events(store, "$user-alice"))[0]!.data)
        assert.isTrue(verifyPassword("s3cret", stored.hash as string))
        yield* store.append("$user-alice", ExpectedVersion.Any, [
          jsonEvent(1, "$UserUpdated", { ...stored, disabled: true })
        ])
        // The listener runs on its own fiber: give it the turn.
        let result = ""
        for (let i = 0; i < 100 && result !== "AuthenticationFailed"; i++) {
          yield* Effect.yieldNow()
          result = yield* outcome(users.authenticate("alice", "s3cret"))
        }
        assert.strictEqual(result, "AuthenticationFailed")
        // And a stream deleted underneath: the user is gone.
        yield* store.append("$user-alice", ExpectedVersion.Any, [jsonEvent(2, "$UserUpdated", stored)])
        yield* store.deleteStream("$user-alice", ExpectedVersion.Any, false)
        for (let i = 0; i < 100 && (yield* outcome(users.get("alice"))) !== "UserNotFound"; i++)
          yield* Effect.yieldNow()
        assert.strictEqual(yield* outcome(users.get("alice")), "UserNotFound")
      })
  )

  it.scoped("unreadable user data: the user is unusable (500-class, login fails) until an admin deletes it", () =>
    Effect.gen(function* () {
      const { users, store } = yield* openNode()
      yield* store.append("$user-mallory", ExpectedVersion.Any, [
        jsonEvent(3, "$UserCreated", { loginName: "mallory", hash: 5 })
      ])
      yield* store.append("$users", ExpectedVersion.Any, [
        { ...jsonEvent(4, "$User", null), isJson: false, data: Buffer.from("mallory") }
      ])
      const failure = yield* Effect.flip(users.get("mallory"))
      assert.strictEqual(failure._tag, "UserStoreFailed")
      assert.match(
        failure._tag === "UserStoreFailed" ? failure.message : "",
        /The data of user 'mallory' \(\$user-mallory@0\) is not a valid user/
      )
      assert.strictEqual(yield* auth(users, "mallory", "x"), "AuthenticationFailed: Invalid login or password")
      assert.strictEqual(
        yield* outcome(users.list),
        "UserStoreFailed",
        "as the reference, one unreadable user fails the listing"
      )
      assert.strictEqual(yield* outcome(users.update("mallory", {})), "UserStoreFailed")
      assert.strictEqual(
        yield* outcome(users.create({ loginName: "mallory", fullName: "", groups: [], password: "x" })),
        "UserConflict"
      )
      yield* users.delete("mallory")
      assert.strictEqual(yield* outcome(users.get("mallory")), "UserNotFound")
      assert.deepStrictEqual(
        (yield* users.list).map((u) => u.loginName),
        ["admin", "ops"]
      )
    })
  )

  it.scoped(
    "a write to the user stream between the service's read and write makes the change a Conflict, not a lost update",
    () =>
      Effect.gen(function* () {
        const { store } = yield* openNode()
        let armed = false
        // The store as the service sees it: right after it reads alice, someone else appends to her stream.
        const racing: EventStoreService = {
          ...store,
          readStreamBackward: (stream, from, count, options) =>
            Effect.tap(store.readStreamBackward(stream, from, count, options), () => {
              if (!armed || stream !== "$user-alice") return Effect.void
              armed = false
              return Effect.orDie(
                store.append(stream, ExpectedVersion.Any, [
                  jsonEvent(9, "$UserUpdated", { hash: "x", fullName: "other writer" })
                ])
              )
            })
        }
        const users = yield* makeUsers(testSecurityConfig).pipe(Effect.provideService(EventStore, racing), Effect.orDie)
        yield* createAlice(users)
        armed = true
        const error = yield* Effect.flip(users.update("alice", { fullName: "mine" }))
        assert.strictEqual(error._tag, "UserConflict")
        assert.match(error._tag === "UserConflict" ? error.message : "", /changed concurrently/)
        // Concurrent updates through the service itself serialize and all succeed.
        yield* Effect.all(
          Array.from({ length: 5 }, (_, i) => users.update("alice", { fullName: `n${i}`, groups: [] })),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(
          (yield* events(store, "$user-alice")).map((e) => e.eventType),
          ["$UserCreated", ...Array(6).fill("$UserUpdated")]
        )
      })
  )
})
