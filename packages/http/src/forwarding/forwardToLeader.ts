/**
 * Leader forwarding, the follower's side. A route marked `forwardsToLeader` (persistent subscriptions: their
 * groups run on the leader alone) reaching a node that follows a known leader is not served there: the
 * request goes to the leader over the members' internal channel, the leader runs it through its own whole
 * pipeline (authenticating it again), and its reply comes back and is relayed as it is, status, reason,
 * headers and body byte for byte. As the reference's HTTP forwarder does it:
 *
 * - only in the states that follow a leader (pre-replica, catching up, clone, follower, read-only replica and
 *   pre-read-only replica); a leader, a node that knows no leader or is between roles answers itself;
 * - after authentication, the route's media types and its first-level authorization, which the follower
 *   checks itself (bad credentials are answered here, never sent on);
 * - every header goes with it but the hop-by-hop ones; `Host` names the leader's advertised HTTP endpoint,
 *   and `X-Forwarded-Host`, unless the client sent one, names the node the client called, so links in the
 *   answer point where the client went;
 * - a forward that fails (no answer in time, the leader unreachable, an answer that does not read) is a 500
 *   with the reason `Error while forwarding request`.
 *
 * A forwarded request is marked (`HttpRequest.forwarded`): the node that gets it answers it itself, whatever
 * it has become meanwhile, so a request never goes round the cluster.
 */
import { Effect } from "effect"
import { Protocol, type ClusterStatusService, type LeaderEndpoint, type VNodeState } from "@vellum/cluster"
import type { NetworkService, PeerAddress } from "@vellum/platform"
import type { HttpRequest, NormalizedHeaders } from "../HttpRequest.js"
import type { Reply } from "../Reply.js"
import { emptyReply } from "../replies.js"
import { leaderAuthority, type NodeRole } from "../leaderRouting.js"
import { decodeReply, encodeRequest } from "./messages.js"

/** What a cluster member needs to pass requests to its leader. */
export interface LeaderForwarding {
  /** The internal address of the leader this node follows, if it follows one. */
  readonly leaderAddress: () => PeerAddress | undefined
  /** The internal channel's protocol for forwarded requests. */
  readonly network: NetworkService
}

/** A cluster member's forwarding; none for a single node, which is always its own leader. */
export const leaderForwardingOf = (cluster: ClusterStatusService): LeaderForwarding | undefined => {
  const internal = cluster.internal
  if (internal === undefined) return undefined
  return { leaderAddress: internal.leaderAddress, network: internal.protocol(Protocol.HttpForward) }
}

/** The states in which a node passes requests to the leader it knows (the reference's, to the letter). */
const forwardingStates: ReadonlySet<VNodeState> = new Set<VNodeState>([
  "PreReplica",
  "CatchingUp",
  "Clone",
  "Follower",
  "PreReadOnlyReplica",
  "ReadOnlyReplica"
])

export interface ForwardTarget {
  readonly endpoint: LeaderEndpoint
  readonly address: PeerAddress
}

/** Where to pass a request now, or undefined when this node answers it itself. */
export const forwardTarget = (role: NodeRole, forwarding: LeaderForwarding): ForwardTarget | undefined => {
  if (role.leader === undefined || !forwardingStates.has(role.state)) return undefined
  const address = forwarding.leaderAddress()
  return address === undefined ? undefined : { endpoint: role.leader, address }
}

/** Connection-level headers: they describe the client's hop, not the request. */
const HopByHop: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect"
])

/** `host:port` of a base URL, the port always written (the scheme's default when the URL omits it). */
const authorityOf = (baseUrl: string): string | undefined => {
  try {
    const url = new URL(baseUrl)
    const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80"
    return `${url.hostname}:${port}`
  } catch {
    return undefined
  }
}

/**
 * The request's headers as the leader gets them: hop-by-hop ones dropped, `Host` the leader's, and
 * `X-Forwarded-Host` the node the client called (`baseUrl`: as this node would name itself in links), unless
 * the client sent its own.
 */
export const headersForLeader = (
  headers: NormalizedHeaders,
  leader: LeaderEndpoint,
  baseUrl: string
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name of Object.keys(headers)) {
    const value = headers[name]
    if (value !== undefined && !HopByHop.has(name)) out[name] = value
  }
  out["host"] = leaderAuthority(leader)
  if (out["x-forwarded-host"] === undefined) {
    const called = authorityOf(baseUrl)
    if (called !== undefined) out["x-forwarded-host"] = called
  }
  return out
}

/** The answer to a request whose forward failed, as the reference gives it: no body, the reason alone. */
export const forwardFailedReply: Reply = emptyReply(500, "Error while forwarding request")

/**
 * How long the follower waits for the leader's answer: the leader's own deadline for the request (its long
 * poll included) and a margin for the way there and back, so that the leader's 408 arrives before this gives up.
 */
export const forwardTimeoutMillis = (requestTimeoutMillis: number, longPollSeconds: number): number =>
  requestTimeoutMillis + longPollSeconds * 1000 + ForwardMarginMillis

export const ForwardMarginMillis = 5_000

export interface OutgoingRequest {
  readonly request: HttpRequest
  readonly headers: NormalizedHeaders
  readonly scheme: "http" | "https"
  /** The path and query as sent. */
  readonly rawPath: string
  readonly rawQuery: string
  /** This node's base URL for the request (how it names itself to the client). */
  readonly baseUrl: string
}

/** The leader's reply to `outgoing`, or undefined when the forward failed. */
export const sendToLeader = (
  forwarding: LeaderForwarding,
  target: ForwardTarget,
  outgoing: OutgoingRequest,
  timeoutMillis: number
): Effect.Effect<Reply | undefined> => {
  const message = encodeRequest({
    method: outgoing.request.method.toUpperCase(),
    url: outgoing.rawPath + (outgoing.rawQuery === "" ? "" : `?${outgoing.rawQuery}`),
    headers: headersForLeader(outgoing.headers, target.endpoint, outgoing.baseUrl),
    body: outgoing.request.body,
    scheme: outgoing.scheme,
    remote: outgoing.request.remote
  })
  return Effect.matchEffect(forwarding.network.request(target.address, message, timeoutMillis), {
    onFailure: (error) =>
      Effect.as(Effect.logDebug(`Forwarding ${outgoing.rawPath} to the leader failed: ${error.message}`), undefined),
    onSuccess: (bytes) => {
      const reply = decodeReply(bytes)
      return reply !== undefined
        ? Effect.succeed(reply)
        : Effect.as(Effect.logDebug(`The leader's answer to ${outgoing.rawPath} could not be read`), undefined)
    }
  })
}
