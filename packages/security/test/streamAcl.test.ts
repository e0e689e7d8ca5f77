/**
 * Stream ACL resolution: a table of the pure rules (own `$acl` → `$settings` → built-in
 * defaults, per action; metastreams; `$all`; `$admins`; the `$all` role; logins as roles), then the
 * StreamAccess layer against a real EventStore, where metadata and `$settings` changes apply to the next check.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect } from "effect"
import { EventStore, ExpectedVersion, type Acl } from "@vellum/storage"
import {
  aclTarget,
  anonymousPrincipal,
  decideAccess,
  NoSettings,
  parseSystemSettings,
  StreamAccess,
  systemPrincipal,
  type Principal,
  type StreamAction,
  type SystemSettings,
  StreamAccessPolicy
} from "../src/index.js"
import { jsonEvent, storeLayer } from "./support.js"

const user = (name: string, ...groups: Array<string>): Principal => ({ name, groups, anonymous: false })
const alice = user("alice", "readers")
const bob = user("bob")
const adminByGroup = user("root", "$admins")
const adminByLogin = user("admin")

const settings = (value: unknown): SystemSettings => parseSystemSettings(Buffer.from(JSON.stringify(value)))

/** The pure decision with the same pre-checks as the layer (target first; undefined target = denied). */
const allowed = (
  p: Principal,
  stream: string,
  action: StreamAction,
  acl: Acl | undefined = undefined,
  s: SystemSettings = NoSettings
) => {
  const target = aclTarget(stream, action)
  return target !== undefined && decideAccess(p, target, acl, s)
}

describe("stream ACL rules (pure)", () => {
  it("built-in defaults: user streams are open to everyone, system streams to $admins only", () => {
    for (const action of ["$r", "$w", "$d", "$mr", "$mw"] as const) {
      assert.isTrue(allowed(anonymousPrincipal, "orders", action), `anonymous ${action} on a user stream`)
      assert.isTrue(allowed(bob, "orders", action))
      assert.isFalse(allowed(bob, "$system", action), `bob ${action} on a system stream`)
      assert.isFalse(allowed(anonymousPrincipal, "$settings", action))
      assert.isTrue(allowed(adminByGroup, "$system", action))
      assert.isTrue(allowed(adminByLogin, "$system", action), "login admin counts as $admins")
      assert.isTrue(allowed(systemPrincipal, "$system", action))
    }
  })

  it("a stream's own $acl wins, per action; roles match logins and groups", () => {
    const acl: Acl = { read: ["readers"], write: ["bob"], metaRead: [] }
    assert.isTrue(allowed(alice, "orders", "$r", acl), "alice is in group readers")
    assert.isFalse(allowed(bob, "orders", "$r", acl))
    assert.isFalse(allowed(anonymousPrincipal, "orders", "$r", acl))
    assert.isTrue(allowed(bob, "orders", "$w", acl), "bob by login")
    assert.isFalse(allowed(alice, "orders", "$w", acl))
    assert.isFalse(allowed(alice, "orders", "$mr", acl), "an empty list allows nobody but admins")
    assert.isTrue(allowed(adminByGroup, "orders", "$mr", acl))
    // Unset actions fall back to the defaults on their own.
    assert.isTrue(allowed(anonymousPrincipal, "orders", "$d", acl))
    assert.isTrue(allowed(alice, "orders", "$mw", acl))
  })

  it("an own $acl can open a system stream; the $all role admits anonymous too", () => {
    assert.isTrue(allowed(anonymousPrincipal, "$ce-orders", "$r", { read: ["$all"] }))
    assert.isTrue(allowed(bob, "$ce-orders", "$r", { read: ["$all", "x"] }))
    assert.isFalse(allowed(bob, "$ce-orders", "$w", { read: ["$all"] }))
  })

  it("$settings defaults sit between the own $acl and the built-in ones", () => {
    const s = settings({ $userStreamAcl: { $r: "readers", $w: ["bob", "readers"] }, $systemStreamAcl: { $r: "$all" } })
    assert.isTrue(allowed(alice, "orders", "$r", undefined, s))
    assert.isFalse(allowed(bob, "orders", "$r", undefined, s))
    assert.isTrue(allowed(bob, "orders", "$w", undefined, s))
    assert.isTrue(allowed(anonymousPrincipal, "orders", "$d", undefined, s), "$d unset in settings: built-in $all")
    assert.isTrue(allowed(bob, "$stats", "$r", undefined, s), "$systemStreamAcl applies to system streams")
    assert.isFalse(allowed(bob, "$stats", "$w", undefined, s))
    assert.isTrue(allowed(bob, "orders", "$r", { read: ["bob"] }, s), "own $acl beats settings")
  })

  it("metastreams map read/write to $mr/$mw of their stream; other actions on them are denied to everyone", () => {
    const acl: Acl = { metaRead: ["alice"], metaWrite: ["bob"] }
    assert.deepStrictEqual(aclTarget("$$orders", "$r"), { stream: "orders", action: "$mr" })
    assert.deepStrictEqual(aclTarget("$$orders", "$w"), { stream: "orders", action: "$mw" })
    assert.deepStrictEqual(aclTarget("$$$settings", "$r"), { stream: "$settings", action: "$mr" })
    assert.isTrue(allowed(alice, "$$orders", "$r", acl))
    assert.isFalse(allowed(alice, "$$orders", "$w", acl))
    assert.isTrue(allowed(bob, "$$orders", "$w", acl))
    for (const action of ["$d", "$mr", "$mw"] as const) {
      assert.isUndefined(aclTarget("$$orders", action))
      assert.isFalse(allowed(adminByGroup, "$$orders", action), `${action} on a metastream, even for admins`)
    }
    assert.isFalse(allowed(bob, "$$$settings", "$r"), "metadata of a system stream: $admins by default")
  })

  it("$all is a system stream: admins read it; nobody writes or deletes it; '' means $all", () => {
    assert.isFalse(allowed(bob, "$all", "$r"))
    assert.isTrue(allowed(adminByGroup, "$all", "$r"))
    assert.isTrue(allowed(bob, "$all", "$r", { read: ["$all"] }), "its ACL can open it")
    for (const action of ["$w", "$d"] as const) {
      assert.isFalse(allowed(systemPrincipal, "$all", action))
      assert.isFalse(allowed(systemPrincipal, "", action))
    }
    assert.deepStrictEqual(aclTarget("", "$r"), { stream: "$all", action: "$r" })
  })

  it("unreadable settings give no settings; invalid ACLs inside them are ignored", () => {
    assert.deepStrictEqual(parseSystemSettings(Buffer.from("not json")), NoSettings)
    assert.deepStrictEqual(parseSystemSettings(Buffer.from("[1]")), NoSettings)
    const s = settings({ $userStreamAcl: { $r: 5 }, $systemStreamAcl: { $w: "ops", $x: "y" } })
    assert.isUndefined(s.userStreamAcl)
    assert.isUndefined(s.systemStreamAcl)
    assert.deepStrictEqual(settings({ $userStreamAcl: { $r: "a", $w: ["b", "c"] } }).userStreamAcl?.write, ["b", "c"])
  })
})

describe("StreamAccess layer over the EventStore", () => {
  const check = (p: Principal, stream: string, action: StreamAction) =>
    Effect.flatMap(StreamAccess, (a) => a.check(p, stream, action))

  it.scoped("reads the stream's $acl and the last $settings event; changes apply to the next check", () =>
    Effect.gen(function* () {
      const store = yield* EventStore
      assert.isTrue(yield* check(bob, "orders", "$r"))
      yield* store.setStreamMetadata(
        "orders",
        ExpectedVersion.Any,
        Buffer.from(JSON.stringify({ $acl: { $r: "alice" } }))
      )
      assert.isFalse(yield* check(bob, "orders", "$r"))
      assert.isTrue(yield* check(alice, "orders", "$r"))
      assert.isTrue(yield* check(bob, "orders", "$w"), "unset $w: default")

      yield* store.append("$settings", ExpectedVersion.Any, [
        jsonEvent(1, "$settings", { $userStreamAcl: { $w: "alice" }, $systemStreamAcl: { $r: "bob" } })
      ])
      assert.isFalse(yield* check(bob, "orders", "$w"))
      assert.isTrue(yield* check(bob, "$stats-1", "$r"))
      assert.isFalse(yield* check(alice, "$stats-1", "$r"))

      // Only the last $settings event counts (any event type).
      yield* store.append("$settings", ExpectedVersion.Any, [
        jsonEvent(2, "whatever", { $userStreamAcl: { $w: "bob" } })
      ])
      assert.isTrue(yield* check(bob, "orders", "$w"))
      assert.isFalse(yield* check(bob, "$stats-1", "$r"), "system defaults back to $admins")

      // Metastreams: `$$orders` read is `$mr` of orders.
      yield* store.setStreamMetadata(
        "orders",
        ExpectedVersion.Any,
        Buffer.from(JSON.stringify({ $acl: { $mr: "bob" } }))
      )
      assert.isTrue(yield* check(bob, "$$orders", "$r"))
      assert.isFalse(yield* check(alice, "$$orders", "$r"))
      assert.isFalse(yield* check(adminByGroup, "$$orders", "$d"))
      assert.isTrue(yield* check(adminByGroup, "$$orders", "$w"))
      assert.isFalse(yield* check(systemPrincipal, "$all", "$w"))
      assert.isTrue(yield* check(adminByGroup, "$all", "$r"))
      assert.isFalse(yield* check(bob, "$all", "$r"))
      yield* store.setStreamMetadata("$all", ExpectedVersion.Any, Buffer.from(JSON.stringify({ $acl: { $r: "$all" } })))
      assert.isTrue(yield* check(anonymousPrincipal, "$all", "$r"))
    }).pipe(Effect.provide(StreamAccessPolicy.layer), Effect.provide(storeLayer))
  )
})
