// The ACL actor's authorization model (simulation/src/acl/authorization.ts): its rules, one case each, so a
// change to the model that the seeds would take as the node's bug shows here first.
import { describe, expect, it } from "vitest"
import {
  authorize,
  parseAclSettings,
  streamAclOf,
  NoAclSettings,
  type AclRoles,
  type AclWorld,
  type Caller
} from "../src/acl/authorization.js"
import { parseModelMetadata } from "../src/model.js"

const json = (value: object) => Buffer.from(JSON.stringify(value))
const world = (acls: Record<string, AclRoles>, settings = NoAclSettings, anonymousStreamAccess = false): AclWorld => ({
  streamAcl: (stream) => acls[stream],
  settings,
  anonymousStreamAccess
})
const alice: Caller = { kind: "user", login: "alice", groups: ["g1"] }
const admin: Caller = { kind: "admin" }
const anonymous: Caller = { kind: "anonymous" }

describe("ACL actor's authorization model", () => {
  it("takes each action from the stream's $acl, else the settings default, else the built-in one", () => {
    const settings = parseAclSettings(json({ $userStreamAcl: { $r: "nobody" }, $systemStreamAcl: { $w: "g1" } }))
    const w = world({ s: streamAclOf(true, json({ $acl: { $w: ["x", "g1"] } }))! }, settings)
    expect(authorize(w, alice, "s", "$w")).toEqual({ allowed: true, source: "streamAcl" })
    expect(authorize(w, alice, "s", "$r")).toEqual({ allowed: false, answer: "refused", source: "userDefault" })
    expect(authorize(w, alice, "s", "$d")).toEqual({ allowed: true, source: "builtIn" })
    expect(authorize(w, alice, "$sys", "$w")).toEqual({ allowed: true, source: "systemDefault" })
    expect(authorize(w, alice, "$sys", "$r")).toEqual({ allowed: false, answer: "refused", source: "builtIn" })
    expect(authorize(w, alice, "$all", "$r")).toEqual({ allowed: false, answer: "refused", source: "builtIn" })
  })

  it("maps metastream reads and writes to $mr and $mw, and refuses deleting one or writing $all to everyone", () => {
    const w = world({ s: { $mr: ["alice"], $mw: ["nobody"] } })
    expect(authorize(w, alice, "$$s", "$r").allowed).toBe(true)
    expect(authorize(w, alice, "$$s", "$w").allowed).toBe(false)
    expect(authorize(w, admin, "$$s", "$d")).toEqual({ allowed: false, answer: "refused", source: "deniedToAll" })
    expect(authorize(w, admin, "$all", "$w").allowed).toBe(false)
    expect(authorize(w, admin, "$all", "$r")).toEqual({ allowed: true, source: "admins" })
  })

  it("refuses bad credentials first, and anonymous callers unless the gate is open, then only by $all", () => {
    const open = world({ s: { $r: ["$all"], $w: ["g1"] } }, NoAclSettings, true)
    expect(authorize(open, { kind: "badCredentials" }, "s", "$r")).toMatchObject({ answer: "badCredentials" })
    expect(authorize(world({}), anonymous, "s", "$r")).toMatchObject({ allowed: false, source: "anonymousGate" })
    expect(authorize(open, anonymous, "s", "$r").allowed).toBe(true)
    expect(authorize(open, anonymous, "s", "$w").allowed).toBe(false)
  })

  it("reads an $acl role as a string or an array of strings; a malformed $acl empties the whole metadata", () => {
    expect(streamAclOf(true, json({ $acl: { $r: "a", $w: ["b", "c"] } }))).toEqual({ $r: ["a"], $w: ["b", "c"] })
    for (const bad of [{ $r: 3 }, { $x: "a" }, "a", { $w: ["b", 4] }, null])
      expect(streamAclOf(true, json({ $acl: bad }))).toBeUndefined()
    expect(streamAclOf(true, json({ $acl: { $r: "a" }, $maxCount: "x" }))).toBeUndefined()
    expect(parseModelMetadata(true, json({ $acl: { $r: 3 }, $maxCount: 2 }))).toEqual({})
    expect(parseModelMetadata(true, json({ $acl: { $r: "a" }, $maxCount: 2 }))).toEqual({ maxCount: 2 })
    expect(streamAclOf(false, json({ $acl: { $r: "a" } }))).toBeUndefined()
  })
})
