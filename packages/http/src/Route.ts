/**
 * A route of the HTTP API as data: method, path template, who may call it (first-level authorization),
 * the codecs it accepts and produces, and a handler from a decoded request to a
 * Reply. The pipeline (authentication → route match → 415/406 → authorization → handler) is one
 * generic piece of code over a list of these, so every route family (streams, users, node endpoints,
 * admin, subscriptions) plugs in the same way.
 */
import type { Clock, Context, Effect } from "effect"
import type { Answer } from "./Answer.js"
import type { Principal } from "@vellum/security"
import type { Reply } from "./Reply.js"
import type { HttpSettings } from "./HttpConfig.js"

export type Method = "GET" | "POST" | "PUT" | "DELETE"

/**
 * First-level authorization: `anonymous` anyone; `authenticated` any user (or anonymous when the node
 * allows anonymous endpoint access); `ops` `$ops` or `$admins`; `admins` `$admins`; `handler`: the handler
 * decides (stream routes check the stream ACL themselves).
 */
export type Access = "anonymous" | "authenticated" | "ops" | "admins" | "handler"

export interface RouteInput {
  readonly principal: Principal
  /** Path placeholders, percent-decoded (`{stream}` → "a/b" for `/streams/a%2Fb`). */
  readonly params: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  /** Request headers with lower-cased names. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The request body (undefined for GET/DELETE without one). */
  readonly body: Uint8Array | undefined
  /** `scheme://host[:port][/prefix]` for absolute links (Host, advertise-as, X-Forwarded-*). */
  readonly baseUrl: string
  /** The raw request URL (for the redirects that use it). */
  readonly requestUrl: string
  /** The negotiated response media type (one of the route's responseCodecs). */
  readonly responseType: string
  /** The request media type the body was accepted as (routes with requestCodecs only). */
  readonly requestType: string | undefined
  /**
   * The node's HTTP settings (anonymous gates, limits, caching). Passed in the input rather than provided as a
   * service per request: providing a service copies the fiber's whole context (~11 µs a request).
   */
  readonly settings: HttpSettings
}

export interface RouteDef<R = never> {
  readonly method: Method
  /** Path template with `{name}` placeholders, e.g. `/streams/{stream}/metadata`. */
  readonly path: string
  readonly access: Access
  /**
   * The route writes through the store's writer (appends, deletes, metadata, user management), so only the
   * leader serves it: elsewhere the pipeline redirects it or refuses it (leaderRouting.ts). Node-local
   * endpoints (shutdown, scavenge, resign, priority) are not writes in this sense.
   */
  readonly writes?: boolean
  /**
   * Only the leader serves it, and a node that does not lead passes the request to the leader over the
   * cluster's internal channel and relays the leader's answer, as the reference's HTTP forwarder does
   * (persistent subscriptions: their groups run on the leader alone). With no leader known the node answers
   * it itself.
   */
  readonly forwardsToLeader?: boolean
  /** Media types the body may have (missing → no body expected, no 415 check). */
  readonly requestCodecs?: ReadonlyArray<string>
  /** Media types the route can answer with, preferred first (the first is the default). */
  readonly responseCodecs: ReadonlyArray<string>
  /**
   * The route answers in its first response codec whatever `Accept` and `?format=` ask for (no 406): the
   * reference's plugin endpoints (ASP.NET minimal APIs) do not negotiate.
   */
  readonly ignoresAccept?: boolean
  readonly handle: (input: RouteInput) => Effect.Effect<Reply, never, R>
  /**
   * The handler as plain code given its services (Answer.ts): the pipeline calls it, when present, instead of
   * `handle`, which must then be this very function in an Effect (`handlerOf`), so both forms run one code.
   * The clock is the one the fiber would have (reads judge `$maxAge` by it).
   */
  readonly answer?: (input: RouteInput, services: Context.Context<R>, clock: Clock.Clock) => Answer<R>
}
