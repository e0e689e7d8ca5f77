/**
 * The users the ACL actor creates, as the node's user store must know them, and the users API commands that
 * change them (sent as the admin). Each command's answer is exact for the state: create (a new login, or a
 * deleted one again) 201; disable, enable, delete 200. A command left without an answer (a 5xx, a 408, a
 * crash while it ran: the user's events may or may not have been written) makes the user `uncertain`: it
 * is never used again, as a caller or in a command, since no later answer about it could be checked.
 */
import { Effect } from "effect"
import type { Prng } from "@vellum/platform"
import type { Reply } from "@vellum/http"
import type { AdminRequest } from "../httpStore.js"
import { describeReply } from "../atomReplies.js"
import type { CoverageMark } from "../coverage.js"

export type UserState = "active" | "disabled" | "deleted" | "uncertain"

export interface SimUser {
  readonly login: string
  readonly password: string
  readonly groups: ReadonlyArray<string>
  state: UserState
}

/** Groups users are put in; `$admins` makes a user an administrator. */
export const UserGroups = ["g1", "g2"] as const
export const MaxUsers = 6

export type CommandResult =
  { readonly _tag: "Done"; readonly mark: CoverageMark } | { readonly _tag: "Failed"; readonly why: string }

interface Command {
  readonly user: SimUser
  readonly method: string
  readonly url: string
  readonly body: object | undefined
  readonly status: number
  readonly then: UserState
  readonly mark: CoverageMark
}

/** Picks a command valid for the users' states (undefined when none is). */
const pickCommand = (prng: Prng, users: Array<SimUser>): Command | undefined => {
  const usable = users.filter((u) => u.state !== "uncertain")
  const path = (u: SimUser) => `/users/${encodeURIComponent(u.login)}`
  const create = (user: SimUser): Command => ({
    user,
    method: "POST",
    url: "/users/",
    body: { loginName: user.login, fullName: `Sim ${user.login}`, groups: user.groups, password: user.password },
    status: 201,
    then: "active",
    mark: "acl.user.created"
  })
  const r = prng.next()
  if (users.length < MaxUsers && (r < 0.35 || usable.length === 0)) {
    const k = users.length
    const groups = UserGroups.filter(() => prng.chance(0.5))
    const user: SimUser = {
      login: `u${k}`,
      password: `pw-${k}-${prng.int(0, 999)}`,
      groups: prng.chance(0.08) ? [...groups, "$admins"] : groups,
      state: "deleted"
    }
    users.push(user)
    return create(user)
  }
  if (usable.length === 0) return undefined
  const user = prng.pick(usable)
  if (user.state === "deleted") return create(user)
  const toggle = user.state === "disabled" ? "enable" : "disable"
  return prng.chance(0.6)
    ? command(
        user,
        "POST",
        `${path(user)}/command/${toggle}`,
        toggle === "enable" ? "active" : "disabled",
        `acl.user.${toggle}d`
      )
    : command(user, "DELETE", path(user), "deleted", "acl.user.deleted")
}

/** A command without a body, answered 200. */
const command = (user: SimUser, method: string, url: string, then: UserState, mark: CoverageMark): Command => ({
  user,
  method,
  url,
  body: undefined,
  status: 200,
  then,
  mark
})

const unanswered = (reply: Reply): boolean => reply.status >= 500 || reply.status === 408

/** One users API command as the admin; the user's state follows the answer. */
export const runUserCommand = (
  prng: Prng,
  users: Array<SimUser>,
  admin: AdminRequest
): Effect.Effect<CommandResult | undefined> => {
  const command = pickCommand(prng, users)
  if (command === undefined) return Effect.succeed(undefined)
  const { user } = command
  const headers: Record<string, string> = { accept: "application/json" }
  if (command.body !== undefined) headers["content-type"] = "application/json"
  const body = command.body === undefined ? undefined : Buffer.from(JSON.stringify(command.body), "utf8")
  // Uncertain while the command runs: a crash may cut it after its write.
  const before = user.state
  user.state = "uncertain"
  return Effect.map(admin(command.method, command.url, headers, body), (reply): CommandResult => {
    const what = `${command.method} ${command.url} (${user.login} was ${before})`
    if (reply.status === command.status) {
      user.state = command.then
      return { _tag: "Done", mark: command.mark }
    }
    if (unanswered(reply) && reply.reason?.startsWith("Internal Server Error:") !== true) {
      user.state = "uncertain"
      return { _tag: "Done", mark: "acl.user.uncertain" }
    }
    return { _tag: "Failed", why: `${what}: ${describeReply(reply)}, expected ${command.status}` }
  })
}
