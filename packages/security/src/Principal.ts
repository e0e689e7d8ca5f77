/**
 * Who a request acts as, and the operations a stream ACL guards. The HTTP layer authenticates a request
 * into a Principal (Authenticator) and asks the StreamAccess policy before every stream operation.
 */
import { Context, Schema, type Effect } from "effect"

export interface Principal {
  /** Login name; "" for the anonymous principal. */
  readonly name: string
  /** Groups (roles) of the user, e.g. ["$admins"]. */
  readonly groups: ReadonlyArray<string>
  readonly anonymous: boolean
}

export const anonymousPrincipal: Principal = { name: "", groups: [], anonymous: true }

/** The ESDB system account: passes every check (used by the node itself and by `--insecure`). */
export const systemPrincipal: Principal = { name: "system", groups: ["$admins"], anonymous: false }

/** `$admins`: role `$admins` or login `admin`. */
export const isAdmin = (p: Principal): boolean => !p.anonymous && (p.name === "admin" || p.groups.includes("$admins"))
/** `$ops` or `$admins`: role `$ops`/`$admins`, or login `ops`/`admin`. */
export const isOpsOrAdmin = (p: Principal): boolean =>
  isAdmin(p) || (!p.anonymous && (p.name === "ops" || p.groups.includes("$ops")))

/** Stream ACL actions: read `$r`, write `$w`, delete `$d`, metadata read `$mr`, metadata write `$mw`. */
export type StreamAction = "$r" | "$w" | "$d" | "$mr" | "$mw"

/** Bad credentials: answered with 401 and `WWW-Authenticate: X-Basic realm="ESDB"` (variant 1). */
export class AuthenticationFailed extends Schema.TaggedError<AuthenticationFailed>()("AuthenticationFailed", {
  message: Schema.String
}) {}
/** The user store is not readable yet: 503 with Retry-After: 5. */
export class AuthenticationUnavailable extends Schema.TaggedError<AuthenticationUnavailable>()(
  "AuthenticationUnavailable",
  { message: Schema.String }
) {}
/** The Authorization header could not be decoded (the reference answers 500; we answer 400). */
export class MalformedCredentials extends Schema.TaggedError<MalformedCredentials>()("MalformedCredentials", {
  message: Schema.String
}) {}

export interface AuthenticatorService {
  /**
   * Authenticates a request from its headers (lower-cased names): `authorization` (Basic) and, when
   * trusted auth is enabled, `kurrent-trustedauth` / `es-trustedauth`. No credentials → anonymous.
   */
  readonly authenticate: (
    headers: Readonly<Record<string, string | undefined>>
  ) => Effect.Effect<Principal, AuthenticationFailed | AuthenticationUnavailable | MalformedCredentials>
}

export class Authenticator extends Context.Tag("@vellum/security/Authenticator")<
  Authenticator,
  AuthenticatorService
>() {}

export interface StreamAccessService {
  /**
   * May `principal` perform `action` on `stream`? In order: the stream's own `$acl`, then the
   * last `$settings` event's `$userStreamAcl`/`$systemStreamAcl`, then built-in defaults; metastreams map to
   * `$mr`/`$mw` of their stream. Does not apply the anonymous gate (`AllowAnonymousStreamAccess`), which the
   * HTTP layer applies first.
   */
  readonly check: (principal: Principal, stream: string, action: StreamAction) => Effect.Effect<boolean>
  /**
   * The answer of `check` when it needs no read (admins; actions with no ACL target), else undefined: lets a
   * hot path skip the Effect steps of `check` (each about a microsecond).
   */
  readonly decideNow?: (principal: Principal, stream: string, action: StreamAction) => boolean | undefined
}

export class StreamAccess extends Context.Tag("@vellum/security/StreamAccess")<StreamAccess, StreamAccessService>() {}
