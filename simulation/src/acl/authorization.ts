/**
 * Who may do what to a stream: the authorization rules of the reference server, as its documentation and
 * its sources (EventStore/EventStore: src/EventStore.Core/Services/Storage/ReaderIndex/...,
 * .../Authorization/...) behave, written here from scratch as pure functions of the simulator's own state.
 *
 * A request is decided in this order:
 *
 * 1. Credentials. A Basic header whose login is unknown, deleted or disabled, or whose password is wrong,
 *    is answered 401 before anything else, with the `X-Basic` challenge (the node drops a user from its
 *    authentication cache as soon as the users API changed it, so a disable or delete applies to the very
 *    next request: no delay to model). No header at all is the anonymous caller.
 * 2. Anonymous callers may touch no stream unless the node allows anonymous stream access; then they are
 *    subject to the ACL like anyone, matching only the role `$all`.
 * 3. What the action is checked against: on a metastream `$$x`, a read is a metadata read of `x` and a write
 *    a metadata write of `x`; deleting a metastream is refused to everyone; writing or deleting `$all` is
 *    refused to everyone. The admin (login `admin`, or group `$admins`) passes everything else.
 * 4. The roles allowed for the action are the first that is set of: the stream's own `$acl` entry for the
 *    action; the last `$settings` event's `$userStreamAcl` (or `$systemStreamAcl` for a name starting with
 *    `$`, `$all` included) entry for it; the built-in default (`$all` for user streams, `$admins` for system
 *    streams). Each action falls back on its own. A role is a string or an array of strings.
 * 5. Granted when a role is `$all`, or is the caller's login or one of its groups.
 *
 * Every refusal after authentication is a 401 without the `X-Basic` challenge (the node adds a standard
 * Basic challenge to a refusal of an anonymous caller).
 */
import { isMalformedMetadata, isMetastream, isWellFormedAcl, originalStreamOf, parseJsonObject } from "../model.js"

export type AclAction = "$r" | "$w" | "$d" | "$mr" | "$mw"
export const AclActions: ReadonlyArray<AclAction> = ["$r", "$w", "$d", "$mr", "$mw"]

/** The roles set for each action (an action left out falls back). */
export type AclRoles = Partial<Record<AclAction, ReadonlyArray<string>>>

/** The defaults of the last `$settings` event. */
export interface AclSettings {
  readonly user: AclRoles | undefined
  readonly system: AclRoles | undefined
}

export const NoAclSettings: AclSettings = { user: undefined, system: undefined }

/** Who sends the request, as the node's user store knows them at that moment. */
export type Caller =
  | { readonly kind: "admin" }
  | { readonly kind: "user"; readonly login: string; readonly groups: ReadonlyArray<string> }
  | { readonly kind: "anonymous" }
  /** Credentials the node must refuse: a wrong password, an unknown, disabled or deleted login. */
  | { readonly kind: "badCredentials" }

/** What decided a request (the coverage marks name them). */
export type DecisionSource =
  "credentials" | "anonymousGate" | "deniedToAll" | "admins" | "streamAcl" | "userDefault" | "systemDefault" | "builtIn"

export type Verdict =
  | { readonly allowed: true; readonly source: DecisionSource }
  /** `badCredentials`: the 401 with the `X-Basic` challenge; `refused`: the 401 of an authorization refusal. */
  | { readonly allowed: false; readonly answer: "badCredentials" | "refused"; readonly source: DecisionSource }

export const isSystemStreamName = (stream: string): boolean => stream.startsWith("$")

/**
 * An `$acl`-shaped object (also the form of the settings' two defaults): the five role keys, each a string or
 * an array of strings; anything else (another key, a number, null) is malformed and sets nothing.
 */
export const parseAclRoles = (value: unknown): AclRoles | undefined => {
  if (!isWellFormedAcl(value)) return undefined
  const roles: Partial<Record<AclAction, ReadonlyArray<string>>> = {}
  for (const action of AclActions) {
    const r = value[action]
    if (r !== undefined) roles[action] = typeof r === "string" ? [r] : r
  }
  return roles
}

/**
 * The `$acl` of a stream's current metadata bytes (JSON-flagged, an object), if any. A malformed `$acl` (or a
 * malformed number beside it) makes the whole metadata empty, so the stream has no `$acl` at all.
 */
export const streamAclOf = (isJson: boolean, data: Uint8Array): AclRoles | undefined => {
  const o = isJson ? parseJsonObject(data) : undefined
  return o === undefined || isMalformedMetadata(o) ? undefined : parseAclRoles(o["$acl"])
}

/** The defaults a `$settings` event sets. */
export const parseAclSettings = (data: Uint8Array): AclSettings => {
  const o = parseJsonObject(data)
  if (o === undefined) return NoAclSettings
  return { user: parseAclRoles(o["$userStreamAcl"]), system: parseAclRoles(o["$systemStreamAcl"]) }
}

/** The stream and action a request is checked against; undefined when it is refused to everyone. */
export const checkedAs = (stream: string, action: AclAction): { stream: string; action: AclAction } | undefined => {
  if (stream === "$all" && (action === "$w" || action === "$d")) return undefined
  if (!isMetastream(stream)) return { stream, action }
  if (action === "$r") return { stream: originalStreamOf(stream), action: "$mr" }
  if (action === "$w") return { stream: originalStreamOf(stream), action: "$mw" }
  return undefined
}

/** Everything the decision needs about the world at the moment of the request. */
export interface AclWorld {
  /** The `$acl` of a stream's metadata as the model holds it. */
  readonly streamAcl: (stream: string) => AclRoles | undefined
  readonly settings: AclSettings
  /** The node's `AllowAnonymousStreamAccess`. */
  readonly anonymousStreamAccess: boolean
}

const allowed = (source: DecisionSource): Verdict => ({ allowed: true, source })
const refused = (source: DecisionSource): Verdict => ({ allowed: false, answer: "refused", source })

/** Whether `caller` may do `action` to `stream`. */
export const authorize = (world: AclWorld, caller: Caller, stream: string, action: AclAction): Verdict => {
  if (caller.kind === "badCredentials") return { allowed: false, answer: "badCredentials", source: "credentials" }
  if (caller.kind === "anonymous" && !world.anonymousStreamAccess) return refused("anonymousGate")
  const target = checkedAs(stream, action)
  if (target === undefined) return refused("deniedToAll")
  if (caller.kind === "admin") return allowed("admins")
  const system = isSystemStreamName(target.stream)
  const own = world.streamAcl(target.stream)?.[target.action]
  const fromSettings = (system ? world.settings.system : world.settings.user)?.[target.action]
  const [roles, source]: [ReadonlyArray<string>, DecisionSource] =
    own !== undefined
      ? [own, "streamAcl"]
      : fromSettings !== undefined
        ? [fromSettings, system ? "systemDefault" : "userDefault"]
        : [system ? ["$admins"] : ["$all"], "builtIn"]
  const grants =
    roles.includes("$all") ||
    (caller.kind === "user" && roles.some((role) => role === caller.login || caller.groups.includes(role)))
  return grants ? allowed(source) : refused(source)
}
