/**
 * The link check (LinkAccess.ts): a reader may see a link's target exactly when a direct read of the target
 * would be allowed: `$r` of the target under its `$acl`, the `$settings` defaults and the system-stream
 * rules; `$mr` for a metastream target. Admins are decided without a read.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { EventStore, ExpectedVersion } from "@vellum/storage"
import {
  anonymousPrincipal,
  linkAccessFor,
  StreamAccess,
  type Principal,
  type StreamAccessService,
  StreamAccessPolicy
} from "../src/index.js"
import { jsonEvent, storeLayer } from "./support.js"

const mallory: Principal = { name: "mallory", groups: [], anonymous: false }
const reader: Principal = { name: "reader", groups: ["readers"], anonymous: false }
const admin: Principal = { name: "root", groups: ["$admins"], anonymous: false }

describe("linkAccessFor", () => {
  it.scoped("allows a target exactly when the reader's direct read of it is allowed", () =>
    Effect.gen(function* () {
      const store = yield* EventStore
      const access = yield* StreamAccess
      const may = (p: Principal, stream: string) => linkAccessFor(access, p).mayRead(stream)
      yield* store.append("orders", ExpectedVersion.Any, [jsonEvent(1, "t", {})])
      yield* store.append("secret", ExpectedVersion.Any, [jsonEvent(2, "t", {})])
      yield* store.setStreamMetadata(
        "secret",
        ExpectedVersion.Any,
        Buffer.from(JSON.stringify({ $acl: { $r: "readers", $mr: "$admins" } }))
      )

      // User streams are open by default; system streams (a user's record) are for admins.
      assert.isTrue(yield* may(mallory, "orders"))
      assert.isTrue(yield* may(anonymousPrincipal, "orders"))
      assert.isFalse(yield* may(mallory, "$user-alice"))
      assert.isFalse(yield* may(anonymousPrincipal, "$user-alice"))
      assert.isTrue(yield* may(admin, "$user-alice"))
      // The target's own `$acl`, by group.
      assert.isFalse(yield* may(mallory, "secret"))
      assert.isTrue(yield* may(reader, "secret"))
      assert.isTrue(yield* may(admin, "secret"))
      // A metastream target is read with `$mr` of its stream.
      assert.isFalse(yield* may(reader, "$$secret"))
      assert.isTrue(yield* may(mallory, "$$orders"))
      assert.isFalse(yield* may(mallory, "$all"))
      // `$settings` defaults apply as for a direct read.
      yield* store.append("$settings", ExpectedVersion.Any, [
        jsonEvent(3, "$settings", { $userStreamAcl: { $r: "readers" } })
      ])
      assert.isFalse(yield* may(mallory, "orders"))
      assert.isTrue(yield* may(reader, "orders"))
    }).pipe(Effect.provide(StreamAccessPolicy.layer), Effect.provide(storeLayer))
  )

  it.effect("takes the answer that needs no read when the policy has one (admins), and asks `$r` otherwise", () =>
    Effect.gen(function* () {
      const asked: Array<string> = []
      const policy: StreamAccessService = {
        decideNow: (p) => (p === admin ? true : undefined),
        check: (p, stream, action) => Effect.sync(() => (asked.push(`${p.name} ${stream} ${action}`), false))
      }
      assert.isTrue(yield* linkAccessFor(policy, admin).mayRead("$user-alice"))
      assert.isFalse(yield* linkAccessFor(policy, mallory).mayRead("$user-alice"))
      assert.deepStrictEqual(asked, ["mallory $user-alice $r"])
    })
  )
})
