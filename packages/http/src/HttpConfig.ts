/**
 * The HTTP layer's settings: anonymous-access gates, limits, caching and the advertised address. The node
 * builds one from its configuration and hands it to `makeHandler`; the pipeline passes it to every handler
 * in `RouteInput.settings` (providing it as a service per request copied the fiber's context: ~11 µs).
 */
import { Effect } from "effect"
import type { RequestSample } from "./endpoints/NodeMetrics.js"
import type { NodeHealth } from "./endpoints/health.js"
import type { BodyResult } from "./streams/appendBody.js"
import { singleNodeRole, type NodeRole } from "./leaderRouting.js"
import type { LeaderForwarding } from "./forwarding/forwardToLeader.js"

/**
 * Parses append bodies from `minBodyBytes` on somewhere other than the event loop (the live node: a worker
 * thread), so that a large body does not hold up every other request while it is parsed.
 */
export interface AppendBodyParser {
  readonly minBodyBytes: number
  readonly parse: (
    body: Uint8Array,
    requestType: string,
    headerId: string | undefined,
    headerType: string | undefined
  ) => Effect.Effect<BodyResult>
}

export interface HttpSettings {
  /** `AllowAnonymousEndpointAccess`: anonymous callers pass `authenticated` routes (default false). */
  readonly allowAnonymousEndpointAccess: boolean
  /** `AllowAnonymousStreamAccess`: anonymous callers may use stream routes, subject to the ACL (default false). */
  readonly allowAnonymousStreamAccess: boolean
  /**
   * `MaxAppendSize`: the largest request body accepted, in bytes (a bigger one is answered 413 before it is
   * parsed), and the largest total of event data and metadata in one append (bodyLimit.ts).
   */
  readonly maxRequestBodyBytes: number
  /** Per-event limit of data + metadata on appends (the reference's min(MaxAppendEventSize, 4 MiB)). */
  readonly maxAppendEventBytes: number
  /** A reply not produced within this time is a 408 (long-poll reads get their long poll on top). */
  readonly requestTimeoutMillis: number
  /** `DisableHttpCaching`: every read says `max-age=0, no-cache, must-revalidate`. */
  readonly disableHttpCaching: boolean
  /** `AdvertiseHostToClientAs` / `NodeHostAdvertiseAs`: host used in absolute links instead of Host. */
  readonly advertiseHost?: string
  /** `AdvertiseNodePortToClientAs` / `NodePortAdvertiseAs`: port used in absolute links. */
  readonly advertisePort?: number
  /** Readiness for `/health/live` (204 when true, 503 when false). */
  readonly ready: Effect.Effect<boolean>
  /** Whether the node is healthy or degraded (writes refused), for `/health/ready`. */
  readonly health: Effect.Effect<NodeHealth>
  /**
   * The node's state and the leader it follows, read for each request that needs the leader (a write, or
   * requires-leader) to redirect or refuse it (leaderRouting.ts).
   */
  readonly nodeRole: Effect.Effect<NodeRole>
  /**
   * `nodeRole` read without an Effect, for the plain pipeline (Answer.ts); undefined (or absent) when it
   * cannot be, and `nodeRole` runs. Must give what `nodeRole` gives.
   */
  readonly nodeRoleNow?: () => NodeRole | undefined
  /**
   * How a cluster member passes `forwardsToLeader` routes to the leader it follows (forwarding/); without
   * it (a single node) every node answers them itself.
   */
  readonly leaderForwarding?: LeaderForwarding
  /** Called once per answered request (the node's metrics hook: a plain function, no Effect). */
  readonly observeRequest?: (sample: RequestSample) => void
  /** Parses large append bodies off the event loop; without it every body is parsed in place. */
  readonly appendBodyParser?: AppendBodyParser
}

export const defaultHttpSettings: HttpSettings = {
  allowAnonymousEndpointAccess: false,
  allowAnonymousStreamAccess: false,
  maxRequestBodyBytes: 1024 * 1024,
  maxAppendEventBytes: 4 * 1024 * 1024,
  requestTimeoutMillis: 10_000,
  disableHttpCaching: false,
  ready: Effect.succeed(true),
  health: Effect.succeed({ status: "healthy", reason: "", sinceMillis: undefined }),
  nodeRole: Effect.succeed(singleNodeRole)
}
