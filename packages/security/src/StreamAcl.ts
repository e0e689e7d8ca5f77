/**
 * Stream ACL resolution, pure. For action `a` on a stream the roles are the first list
 * that is set among: the stream's own `$acl.a`; the last `$settings` event's `$userStreamAcl.a` (or
 * `$systemStreamAcl.a` for streams starting with `$`); the built-in defaults (`$all` for user streams,
 * `$admins` for system streams). Each action falls back on its own (an `$acl` with only `$w` still takes `$r`
 * from the settings).
 *
 * Before roles are looked at: an empty stream name means `$all`; writing or deleting `$all` is denied to
 * everyone; on a metastream `$$x`, read and write become `$mr`/`$mw` of `x` and anything else is an invalid
 * metadata operation (denied to everyone, admins too); `$admins` (and the system account) pass everything
 * else. A role matches the user's login or one of its groups; `$all` matches everyone, anonymous included.
 */
import {
  isMetastream,
  isSystemStream,
  originalStreamOf,
  parseJsonObject,
  parseMetadata,
  utf8Text,
  AllStream,
  type Acl
} from "@vellum/storage"
import { isAdmin, type Principal, type StreamAction } from "./Principal.js"

/** The defaults of `$settings` that matter here. */
export interface SystemSettings {
  readonly userStreamAcl?: Acl
  readonly systemStreamAcl?: Acl
}

export const NoSettings: SystemSettings = {}

const everyone = ["$all"]
const admins = ["$admins"]
export const DefaultUserStreamAcl: Required<Acl> = {
  read: everyone,
  write: everyone,
  delete: everyone,
  metaRead: everyone,
  metaWrite: everyone
}
export const DefaultSystemStreamAcl: Required<Acl> = {
  read: admins,
  write: admins,
  delete: admins,
  metaRead: admins,
  metaWrite: admins
}

const AclField = { $r: "read", $w: "write", $d: "delete", $mr: "metaRead", $mw: "metaWrite" } as const satisfies Record<
  StreamAction,
  keyof Acl
>

/** The ACL of a JSON value, with exactly the leniency of stream metadata `$acl` (storage's parser does the work). */
const aclOf = (value: unknown): Acl | undefined =>
  value === undefined ? undefined : parseMetadata(Buffer.from(JSON.stringify({ $acl: value })), true).acl

/** Parses a `$settings` event's data; anything unreadable gives no settings (the defaults apply). */
export const parseSystemSettings = (data: Uint8Array): SystemSettings => {
  const o = parseJsonObject(utf8Text(data))
  if (o === undefined) return NoSettings
  return { userStreamAcl: aclOf(o.$userStreamAcl), systemStreamAcl: aclOf(o.$systemStreamAcl) }
}

/** The stream whose ACL decides, and the action looked up in it. */
export interface AclTarget {
  readonly stream: string
  readonly action: StreamAction
}

/** Where the check for `action` on `stream` is decided, or undefined when the operation is denied to everyone. */
export const aclTarget = (stream: string, action: StreamAction): AclTarget | undefined => {
  const name = stream === "" ? AllStream : stream
  if (name === AllStream && (action === "$w" || action === "$d")) return undefined
  if (!isMetastream(name)) return { stream: name, action }
  if (action === "$r") return { stream: originalStreamOf(name), action: "$mr" }
  if (action === "$w") return { stream: originalStreamOf(name), action: "$mw" }
  return undefined
}

/** The roles allowed to do `target.action` on `target.stream`, given its own `$acl` and the settings. */
export const effectiveRoles = (
  target: AclTarget,
  streamAcl: Acl | undefined,
  settings: SystemSettings
): ReadonlyArray<string> => {
  const field = AclField[target.action]
  const system = isSystemStream(target.stream)
  return (
    streamAcl?.[field] ??
    (system ? settings.systemStreamAcl : settings.userStreamAcl)?.[field] ??
    (system ? DefaultSystemStreamAcl : DefaultUserStreamAcl)[field]
  )
}

/** Does one of the roles name this principal? */
export const rolesGrant = (principal: Principal, roles: ReadonlyArray<string>): boolean => {
  if (roles.includes("$all")) return true
  if (principal.anonymous) return false
  return roles.some((role) => role === principal.name || principal.groups.includes(role))
}

/** The whole decision, for a target whose own `$acl` and the settings are known. */
export const decideAccess = (
  principal: Principal,
  target: AclTarget,
  streamAcl: Acl | undefined,
  settings: SystemSettings
): boolean => isAdmin(principal) || rolesGrant(principal, effectiveRoles(target, streamAcl, settings))
