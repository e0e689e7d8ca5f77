/**
 * What the ACL actor generates: identities to send a request as, `$acl` metadata, `$settings` bodies and
 * link events. Pure functions of the actor's Prng and what it knows.
 */
import type { Prng } from "@vellum/platform"
import type { ProposedEvent } from "@vellum/storage"
import { indentedJson } from "../client.js"
import type { CoverageMark } from "../coverage.js"
import { AclActions, type Caller } from "./authorization.js"
import { LinkEventType } from "./linkReads.js"
import { UserGroups, type SimUser } from "./simUsers.js"

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString("base64")}`
export const AdminCredentials = basic("admin", "changeit")

/** Who a request is sent as: its `Authorization` header, who the node must take it for, and its mark. */
export interface Identity {
  readonly authorization: string | undefined
  readonly caller: Caller
  readonly describe: string
  /** The mark of a refusal for bad credentials of this kind. */
  readonly badMark: CoverageMark | undefined
}

const asUser = (user: SimUser): Identity => {
  const badMark: CoverageMark | undefined =
    user.state === "disabled"
      ? "acl.disabledUser.refused"
      : user.state === "deleted"
        ? "acl.deletedUser.refused"
        : undefined
  const caller: Caller =
    user.state !== "active"
      ? { kind: "badCredentials" }
      : user.groups.includes("$admins")
        ? { kind: "admin" }
        : { kind: "user", login: user.login, groups: user.groups }
  return { authorization: basic(user.login, user.password), caller, describe: `${user.login}(${user.state})`, badMark }
}

export const adminIdentity: Identity = {
  authorization: AdminCredentials,
  caller: { kind: "admin" },
  describe: "admin",
  badMark: undefined
}

/** An active user who is no admin (the admin when there is none): the reader links are checked for. */
export const pickReader = (prng: Prng, users: ReadonlyArray<SimUser>): Identity => {
  const readers = users.filter((u) => u.state === "active" && !u.groups.includes("$admins"))
  return readers.length === 0 ? adminIdentity : asUser(prng.pick(readers))
}

/** A random identity: mostly users in their current state, sometimes the admin, bad passwords, anonymous. */
export const pickIdentity = (prng: Prng, users: ReadonlyArray<SimUser>): Identity => {
  const known = users.filter((u) => u.state !== "uncertain")
  const r = prng.next()
  if (r < 0.12 || known.length === 0) return adminIdentity
  if (r < 0.24)
    return { authorization: undefined, caller: { kind: "anonymous" }, describe: "anonymous", badMark: undefined }
  if (r < 0.32) {
    const user = prng.pick(known)
    return {
      authorization: basic(user.login, `${user.password}-wrong`),
      caller: { kind: "badCredentials" },
      describe: `${user.login}(wrong password)`,
      badMark: "acl.wrongPassword.refused"
    }
  }
  if (r < 0.36) {
    return {
      authorization: basic(`nobody-${prng.int(0, 9)}`, "pw"),
      caller: { kind: "badCredentials" },
      describe: "an unknown login",
      badMark: "acl.unknownUser.refused"
    }
  }
  return asUser(prng.pick(known))
}

/** One role list: a single string or an array, of everyone, the admins, a group or a login. */
const roles = (prng: Prng, users: ReadonlyArray<SimUser>): string | Array<string> => {
  const names = ["$all", "$admins", ...UserGroups, ...users.map((u) => u.login), "nobody"]
  if (prng.chance(0.5)) return prng.pick(names)
  return Array.from({ length: prng.int(1, 3) }, () => prng.pick(names))
}

/** An `$acl`-shaped object setting each action with probability `p`. */
const aclObject = (prng: Prng, users: ReadonlyArray<SimUser>, p: number): Record<string, string | Array<string>> => {
  const acl: Record<string, string | Array<string>> = {}
  for (const action of AclActions) if (prng.chance(p)) acl[action] = roles(prng, users)
  return acl
}

const jsonEvent = (eventId: string, eventType: string, value: object): ProposedEvent => ({
  eventId,
  eventType,
  isJson: true,
  data: Buffer.from(indentedJson(value)),
  metadata: Buffer.alloc(0)
})

/** `$acl` values the reference cannot read: they make the whole metadata empty (its `$maxCount` too). */
const MalformedAcls: ReadonlyArray<unknown> = [{ $r: 5 }, { $x: "g1" }, "g1", { $w: ["g1", 1] }, null]

/**
 * Stream metadata: an `$acl` (most often, sometimes with a `$maxCount`), a malformed `$acl` beside a
 * `$maxCount` (both void), or custom keys only (which clear the `$acl`).
 */
export const metadataEvent = (
  prng: Prng,
  eventId: string,
  users: ReadonlyArray<SimUser>
): { readonly event: ProposedEvent; readonly malformed: boolean } => {
  const r = prng.next()
  if (r < 0.75) {
    const maxCount = prng.chance(0.15) ? { $maxCount: prng.int(2, 6) } : {}
    return {
      event: jsonEvent(eventId, "$metadata", { $acl: aclObject(prng, users, 0.5), ...maxCount }),
      malformed: false
    }
  }
  if (r < 0.87) {
    const body = { $acl: prng.pick(MalformedAcls), $maxCount: 1 }
    return { event: jsonEvent(eventId, "$metadata", body), malformed: true }
  }
  return { event: jsonEvent(eventId, "$metadata", { owner: "acl" }), malformed: false }
}

/** A `$settings` event: user- and system-stream defaults, each present or not. */
export const settingsEvent = (prng: Prng, eventId: string, users: ReadonlyArray<SimUser>): ProposedEvent => {
  const body: Record<string, object> = {}
  if (prng.chance(0.7)) body["$userStreamAcl"] = aclObject(prng, users, 0.6)
  if (prng.chance(0.6)) body["$systemStreamAcl"] = aclObject(prng, users, 0.6)
  return jsonEvent(eventId, "settings", body)
}

/** A link to event `number` of `stream`. */
export const linkEvent = (eventId: string, stream: string, number: number): ProposedEvent => ({
  eventId,
  eventType: LinkEventType,
  isJson: false,
  data: Buffer.from(`${number}@${stream}`),
  metadata: Buffer.alloc(0)
})
