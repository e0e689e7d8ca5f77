/**
 * How users live in the database, as in the reference server: one stream per user, `$user-{login}`, whose
 * last event (`$UserCreated`, then `$UserUpdated`) holds the whole user as JSON; the stream's ACL lets only
 * `$admins` write, delete or change its metadata. `$users` lists logins (`$User` events, the login as
 * non-JSON data; repeated after a re-creation, so readers deduplicate). Changes that must end sessions
 * (password, groups, disable, delete) are announced with a `$PasswordChanged` event in
 * `$users-password-notifications` (kept one hour).
 *
 * The stored JSON follows the reference's camelCase `UserData` except that `hash` is our self-describing
 * encoded hash (Password.ts), which carries the salt, instead of separate `hash` and `salt` fields.
 */
import { isWellFormedText, parseJsonObject, utf8Text } from "@vellum/storage"
import type { Principal } from "./Principal.js"

export const UserStreamPrefix = "$user-"
export const UsersStream = "$users"
export const PasswordNotificationsStream = "$users-password-notifications"

export const UserEventTypes = {
  Created: "$UserCreated",
  Updated: "$UserUpdated",
  /** In `$users`. */
  User: "$User",
  /** In `$users-password-notifications`. */
  PasswordChanged: "$PasswordChanged"
} as const

export const userStream = (loginName: string): string => UserStreamPrefix + loginName

/** The login a `$user-…` stream (or its metastream) belongs to, else undefined. */
export const loginOfStream = (stream: string): string | undefined => {
  const name = stream.startsWith("$$") ? stream.slice(2) : stream
  return name.startsWith(UserStreamPrefix) ? name.slice(UserStreamPrefix.length) : undefined
}

/** Metadata of a user stream: only `$admins` write, delete and write metadata (read falls back to system defaults). */
export const userStreamMetadata = (): Buffer =>
  Buffer.from(JSON.stringify({ $acl: { $w: "$admins", $d: "$admins", $mw: "$admins" } }))

/** Notifications are only needed while sessions could still use old credentials. */
export const passwordNotificationsMetadata = (): Buffer => Buffer.from(JSON.stringify({ $maxAge: 3600 }))

export interface StoredUser {
  readonly loginName: string
  readonly fullName: string
  readonly groups: ReadonlyArray<string>
  readonly disabled: boolean
  /** Encoded password hash (Password.ts). */
  readonly hash: string
}

/** A user as the API shows it: the stored fields without the hash, plus when it last changed. */
export interface UserDetails {
  readonly loginName: string
  readonly fullName: string
  readonly groups: ReadonlyArray<string>
  readonly disabled: boolean
  /** Creation time of the user's last event, microseconds since the Unix epoch. */
  readonly updatedMicros: number
}

export const encodeUser = (user: StoredUser): Buffer =>
  Buffer.from(
    JSON.stringify({
      loginName: user.loginName,
      fullName: user.fullName,
      hash: user.hash,
      disabled: user.disabled,
      groups: user.groups
    })
  )

const isStringArray = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((v) => typeof v === "string")

/** Parses a user event's data; undefined when it is not a user (then the user is unusable, never half-read). */
export const decodeUser = (loginName: string, data: Uint8Array): StoredUser | undefined => {
  const o = parseJsonObject(utf8Text(data))
  if (o === undefined) return undefined
  const fullName = o.fullName ?? ""
  const groups = o.groups ?? []
  const disabled = o.disabled ?? false
  if (
    typeof o.hash !== "string" ||
    typeof fullName !== "string" ||
    !isStringArray(groups) ||
    typeof disabled !== "boolean"
  )
    return undefined
  // The stream names the user (the reference answers with the requested login too).
  return { loginName, fullName, groups, disabled, hash: o.hash }
}

export const principalOf = (user: StoredUser): Principal => ({
  name: user.loginName,
  groups: user.groups,
  anonymous: false
})

/**
 * Why a login cannot be created, or undefined when it can. Beyond non-empty it must survive the places a
 * login travels: Basic credentials (no `:`), the `$current` route (reserved), stream names (well-formed
 * Unicode) and header/URL text (no control characters).
 */
export const invalidLoginName = (loginName: string): string | undefined => {
  if (loginName.length === 0) return "The login name is empty"
  if (loginName.length > 256) return "The login name is longer than 256 characters"
  if (loginName.includes(":")) return "The login name contains ':' (Basic credentials could not carry it)"
  if (loginName === "$current") return "'$current' is reserved (GET /users/$current is the caller)"
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(loginName)) return "The login name contains a control character"
  if (!isWellFormedText(loginName)) return "The login name is not well-formed Unicode"
  return undefined
}

export const invalidPassword = (password: string): string | undefined =>
  password.length === 0 ? "The password is empty" : undefined

export const invalidGroups = (groups: ReadonlyArray<string>): string | undefined =>
  groups.some((g) => g.length === 0) ? "A group name is empty" : undefined
