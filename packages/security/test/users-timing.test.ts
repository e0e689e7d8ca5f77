/**
 * Wrong credentials must not reveal whether a login exists, by timing either: every failure runs exactly one
 * slow hash (a decoy hash for unknown logins), and only a repeated correct password skips it (the
 * verified-credentials cache). Counted on the real scrypt calls instead of measured, so the test is exact.
 */
import { describe, it, assert } from "@effect/vitest"
import { vi } from "vitest"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { openNode, outcome } from "./support.js"

vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>()
  return { ...actual, scryptSync: vi.fn(actual.scryptSync) }
})

const slowHashes = () => vi.mocked(crypto.scryptSync).mock.calls.length

describe("Users: authentication timing", () => {
  it.scoped("unknown login, wrong password, disabled user: one slow hash each; a cached correct password: none", () =>
    Effect.gen(function* () {
      const { users } = yield* openNode()
      yield* users.create({ loginName: "alice", fullName: "", groups: [], password: "pw" })
      yield* users.create({ loginName: "dora", fullName: "", groups: [], password: "pw" })
      yield* users.disable("dora")

      const cost = (effect: Effect.Effect<unknown, unknown>) =>
        Effect.gen(function* () {
          const before = slowHashes()
          const result = yield* outcome(Effect.mapError(effect, () => ({ _tag: "Failed" })))
          return `${result} after ${slowHashes() - before} hash(es)`
        })

      assert.strictEqual(yield* cost(users.authenticate("nobody", "pw")), "Failed after 1 hash(es)")
      assert.strictEqual(
        yield* cost(users.authenticate("nobody", "pw")),
        "Failed after 1 hash(es)",
        "cached unknown login: still hashed"
      )
      assert.strictEqual(yield* cost(users.authenticate("alice", "wrong")), "Failed after 1 hash(es)")
      assert.strictEqual(yield* cost(users.authenticate("dora", "pw")), "Failed after 1 hash(es)")
      assert.strictEqual(yield* cost(users.authenticate("alice", "pw")), "Success after 1 hash(es)")
      assert.strictEqual(yield* cost(users.authenticate("alice", "pw")), "Success after 0 hash(es)")
      assert.strictEqual(
        yield* cost(users.authenticate("alice", "wrong")),
        "Failed after 1 hash(es)",
        "a cached user with a wrong password pays too"
      )
      yield* users.disable("alice")
      assert.strictEqual(
        yield* cost(users.authenticate("alice", "pw")),
        "Failed after 1 hash(es)",
        "disabling drops the cached success"
      )
    })
  )
})
