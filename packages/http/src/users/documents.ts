/**
 * The users API's JSON documents and statuses, pure: the `{data, success, error}`
 * envelope of user details (with links) and lists, `$current` (no links, a real `dateLastUpdated`), the
 * `{loginName, success, error}` command result, and the one mapping from user errors to statuses.
 * Two-space indented, nulls written out. The reference's internal `label` property is left out
 * (its value is a deployment-dependent message label that nothing may rely on).
 */
import type { UserDetails, UserError } from "@vellum/security"
import { formatAtomDate } from "../atom/index.js"
import { stringifyIndented, type JsonValue } from "../lenientJson.js"
import type { Reply } from "../Reply.js"
import { badRequest, documentReply } from "../replies.js"
import { RefusedRetryAfter, writesRefusedStatus } from "../storageErrors.js"

const str = (value: string): JsonValue => ({ kind: "string", value })
const bool = (value: boolean): JsonValue => ({ kind: "boolean", value })
const Null: JsonValue = { kind: "null" }
const obj = (...members: Array<readonly [string, JsonValue]>): JsonValue => ({ kind: "object", members })
const arr = (items: ReadonlyArray<JsonValue>): JsonValue => ({ kind: "array", items })

/** Dates inside user JSON: ISO 8601 with an offset and up to seven fractional digits, trailing zeros trimmed. */
export const formatUserDate = (micros: number): string => formatAtomDate(micros).slice(0, -1) + "+00:00"

/** `<base>/users/<login>` — the login is not escaped in links, as the reference writes them. */
const userUrl = (baseUrl: string, loginName: string) => `${baseUrl}/users/${loginName}`

const link = (href: string, rel: string) => obj(["href", str(href)], ["rel", str(rel)])

const userLinks = (user: UserDetails, baseUrl: string): JsonValue => {
  const self = userUrl(baseUrl, user.loginName)
  return arr([
    link(`${self}/command/reset-password`, "reset-password"),
    link(`${self}/command/change-password`, "change-password"),
    link(self, "edit"),
    link(self, "delete"),
    user.disabled ? link(`${self}/command/enable`, "enable") : link(`${self}/command/disable`, "disable")
  ])
}

/** A user with links (`dateLastUpdated` is always null in this view, as the reference's formatted one). */
const formattedUser = (user: UserDetails, baseUrl: string): JsonValue =>
  obj(
    ["loginName", str(user.loginName)],
    ["fullName", str(user.fullName)],
    ["groups", arr(user.groups.map(str))],
    ["dateLastUpdated", Null],
    ["disabled", bool(user.disabled)],
    ["links", userLinks(user, baseUrl)]
  )

const json = (status: number, reason: string, value: JsonValue, headers: Record<string, string> = {}): Reply =>
  documentReply(status, reason, "application/json", stringifyIndented(value), headers)

const envelope = (data: JsonValue): JsonValue => obj(["data", data], ["success", bool(true)], ["error", str("Success")])

/** `GET /users/{login}`. */
export const userReply = (user: UserDetails, baseUrl: string): Reply =>
  json(200, "OK", envelope(formattedUser(user, baseUrl)))

/** `GET /users`: every user, in the order given (the store sorts by login). */
export const userListReply = (users: ReadonlyArray<UserDetails>, baseUrl: string): Reply =>
  json(200, "OK", envelope(arr(users.map((u) => formattedUser(u, baseUrl)))))

/** `GET /users/$current`: the raw user data, no links, with the date of its last change. */
export const currentUserReply = (user: UserDetails): Reply =>
  json(
    200,
    "OK",
    envelope(
      obj(
        ["loginName", str(user.loginName)],
        ["fullName", str(user.fullName)],
        ["groups", arr(user.groups.map(str))],
        ["dateLastUpdated", str(formatUserDate(user.updatedMicros))],
        ["disabled", bool(user.disabled)]
      )
    )
  )

/** A command's success: create (201 + Location), update, delete, enable, disable, reset, change. */
export const commandReply = (loginName: string, status = 200, headers: Record<string, string> = {}): Reply =>
  json(
    status,
    status === 201 ? "Created" : "OK",
    obj(["loginName", str(loginName)], ["success", bool(true)], ["error", str("Success")]),
    headers
  )

const ErrorStatus = {
  UserNotFound: [404, "Not Found", "NotFound"],
  UserConflict: [409, "Conflict", "Conflict"],
  UserUnauthorized: [401, "Unauthorized", "Unauthorized"],
  UserStoreFailed: [500, "Internal Server Error", "Error"]
} as const

/** The single answer shape errors of a details route use: `{"data": null, …}`. */
export type ErrorShape = { readonly _tag: "Details" } | { readonly _tag: "Command"; readonly loginName: string }

/**
 * The one mapping from user errors to replies: NotFound 404, Conflict 409, Unauthorized 401, Error 500 (507
 * or 503 with a `reason` when the store refuses writes after a disk error), in the envelope of the route;
 * invalid input is a plain-text 400 with the reason (as every validation 400).
 */
export const userErrorReply = (error: UserError, shape: ErrorShape): Reply => {
  if (error._tag === "UserInvalidArgument") return badRequest(error.message)
  const head: ReadonlyArray<readonly [string, JsonValue]> =
    shape._tag === "Details" ? [["data", Null]] : [["loginName", str(shape.loginName)]]
  if (error._tag === "UserStoreFailed" && error.writesRefused !== undefined) {
    // Writes refused after a disk error: the status appends get, and the reason (it names no file).
    const [status, reason] = writesRefusedStatus(error.writesRefused)
    return json(
      status,
      reason,
      obj(...head, ["success", bool(false)], ["error", str("Error")], ["reason", str(error.message)]),
      { "Retry-After": RefusedRetryAfter }
    )
  }
  const [status, reason, code] = ErrorStatus[error._tag]
  return json(status, reason, obj(...head, ["success", bool(false)], ["error", str(code)]))
}
