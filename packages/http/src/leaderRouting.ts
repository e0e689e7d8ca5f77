/**
 * Client routing in a cluster: only the leader takes writes. A write (a route marked `writes`), or any
 * request that says requires-leader (`Kurrent-RequireLeader`, `ES-RequireLeader` or the legacy
 * `ES-RequireMaster` = True), reaching a node that is not the leader is answered here, before its handler:
 *
 * - a node that follows a known leader (a follower, clone, catching-up or pre-replica node, or a read-only
 *   replica) answers 307 to the same path and query on the leader's advertised HTTP endpoint;
 * - a node that knows no leader, or is in a state that takes no writes (starting, looking for a leader,
 *   electing, becoming leader, resigning, shutting down), answers 503 at once, with the reason: it never
 *   waits for an election.
 *
 * Everything else (plain reads, node endpoints) is served by the node that got it. The reference forwards a
 * follower's writes to the leader itself; Vellum redirects instead (docs/decisions.md).
 */
import type { LeaderEndpoint, VNodeState } from "@vellum/cluster"
import type { NormalizedHeaders } from "./HttpRequest.js"
import type { Reply } from "./Reply.js"
import { statusReply } from "./replies.js"

/** What routing needs to know of the node: its state and the leader it follows, if any. */
export interface NodeRole {
  readonly state: VNodeState
  readonly leader: LeaderEndpoint | undefined
}

/** A single node: the leader, always (routing then never answers). */
export const singleNodeRole: NodeRole = { state: "Leader", leader: undefined }

/**
 * States in which a node that knows its leader sends clients there: it replicates from that leader, or is a
 * read-only replica (which never takes a client's write).
 */
const followingStates: ReadonlySet<VNodeState> = new Set<VNodeState>([
  "PreReplica",
  "CatchingUp",
  "Clone",
  "Follower",
  "ReadOnlyLeaderless",
  "PreReadOnlyReplica",
  "ReadOnlyReplica"
])

const REQUIRE_LEADER_HEADERS = ["kurrent-requireleader", "es-requireleader", "es-requiremaster"] as const

/**
 * Whether any of the three requires-leader headers says `True` (in any case), as the handlers read it. A
 * malformed value does not count: the handlers that read the header answer it 400 on whichever node gets it.
 */
export const saysRequireLeader = (headers: NormalizedHeaders): boolean => {
  for (const name of REQUIRE_LEADER_HEADERS) {
    const value = headers[name]
    if (value !== undefined && value.toLowerCase() === "true") return true
  }
  return false
}

/** `host:port` for a URL or a Host header: an IPv6 literal goes in brackets. */
export const leaderAuthority = (leader: LeaderEndpoint): string =>
  `${leader.httpHost.includes(":") ? `[${leader.httpHost}]` : leader.httpHost}:${leader.httpPort}`

/** The same path and query on the leader. */
export const leaderLocation = (scheme: string, leader: LeaderEndpoint, rawPath: string, rawQuery: string): string =>
  `${scheme}://${leaderAuthority(leader)}${rawPath}${rawQuery === "" ? "" : `?${rawQuery}`}`

const notReady = (why: string): Reply => ({
  ...statusReply(503, "Server Is Not Ready", { "Retry-After": "1" }),
  body: why
})

/** Why a node in this state takes no writes, for the 503's body. */
const notReadyReason = (state: VNodeState, leader: LeaderEndpoint | undefined): string => {
  switch (state) {
    case "Initializing":
      return "The node is starting up; it takes no writes yet."
    case "ShuttingDown":
    case "Shutdown":
      return "The node is shutting down; it takes no writes."
    case "PreLeader":
      return "The node has been elected leader and is not taking writes yet; try again shortly."
    case "ResigningLeader":
      return "The node is resigning as leader; try again once the cluster has elected a new one."
    default:
      return leader === undefined
        ? `No leader is known (node state: ${state}); try again once the cluster has elected one.`
        : `The node takes no writes while in state ${state}; try again shortly.`
  }
}

export interface RoutedRequest {
  /** The route writes through the leader's writer. */
  readonly writes: boolean
  readonly headers: NormalizedHeaders
  /** The scheme the client used (the redirect keeps it). */
  readonly scheme: string
  readonly rawPath: string
  readonly rawQuery: string
}

/** Whether the request must be served by the leader (then its answer depends on the node's role). */
export const needsLeader = (request: Pick<RoutedRequest, "writes" | "headers">): boolean =>
  request.writes || saysRequireLeader(request.headers)

/**
 * The answer for a request that needs the leader on a node in `role`, or undefined when this node serves it
 * (it is the leader).
 */
export const leaderRoutingReply = (request: RoutedRequest, role: NodeRole): Reply | undefined => {
  if (role.state === "Leader") return undefined
  const leader = role.leader
  if (leader !== undefined && followingStates.has(role.state)) {
    const location = leaderLocation(request.scheme, leader, request.rawPath, request.rawQuery)
    return statusReply(307, "Temporary Redirect", { Location: location })
  }
  return notReady(notReadyReason(role.state, leader))
}
