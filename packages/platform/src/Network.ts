/**
 * Network: the port every byte between two nodes goes through (gossip, elections, replication). Client
 * traffic (the HTTP API) does not: it has its own server and is driven in-process in the simulator.
 *
 * Two shapes of traffic, because the cluster needs both:
 * - `request`: one message, one reply, like one HTTP call. Each request stands alone, so the network may
 *   lose, duplicate, delay and reorder requests; a lost request or reply is a `NetworkTimedOut`. Gossip
 *   and elections use it, and their protocols tolerate all of that by design.
 * - `open`: a `Channel`, an ordered and reliable stream of messages in both directions, like one TCP
 *   connection. Nothing is lost, duplicated or reordered inside a channel; instead a channel can break,
 *   and then both ends see `NetworkClosed` and everything after the break is gone. Replication uses it,
 *   so a follower's log is a prefix of what the leader sent.
 *
 * Addresses are the nodes' internal endpoints, "host:port", separate from the HTTP endpoint clients use.
 * A node serves the network with `serve`; requests and channels reach its handlers with the sender's
 * address (the live layer admits only peers that prove they belong to the cluster).
 *
 * Implementations: `SimNetwork` (sim/SimNetwork.ts), with seeded per-link latency, loss, duplication,
 * partitions and node isolation, for the simulator and tests.
 */
import { Context, Schema, type Effect, type Scope } from "effect"

/** A node's internal endpoint, "host:port". */
export type PeerAddress = string

/** Nothing answers at that address, or the connection was refused. */
export class NetworkUnreachable extends Schema.TaggedError<NetworkUnreachable>()("NetworkUnreachable", {
  peer: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

/** No answer within the time allowed: the request, its reply or the peer was lost, or is just slow. */
export class NetworkTimedOut extends Schema.TaggedError<NetworkTimedOut>()("NetworkTimedOut", {
  peer: Schema.String,
  afterMillis: Schema.Number,
  message: Schema.String
}) {}

/** A `NetworkTimedOut` for a wait on `peer` that lasted `afterMillis`; `what` says what did not come. */
export const timedOut = (peer: PeerAddress, afterMillis: number, what: string): NetworkTimedOut =>
  new NetworkTimedOut({ peer, afterMillis, message: `${what} within ${afterMillis} ms` })

/** The channel broke or was closed; nothing more goes through it. */
export class NetworkClosed extends Schema.TaggedError<NetworkClosed>()("NetworkClosed", {
  peer: Schema.String,
  message: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {}

export type NetworkError = NetworkUnreachable | NetworkTimedOut | NetworkClosed

/** One end of an ordered, reliable stream of messages to one peer. */
export interface Channel {
  /** The other end's address. */
  readonly peer: PeerAddress
  /** Queues one message; fails once the channel is closed or broken. */
  readonly send: (message: Uint8Array) => Effect.Effect<void, NetworkClosed>
  /** The next message, waiting for it; fails once the channel is closed or broken and nothing is left. */
  readonly receive: Effect.Effect<Uint8Array, NetworkClosed>
  /** Closes this end; the other end's `receive` fails once it has read what was sent before. */
  readonly close: Effect.Effect<void>
}

export interface NetworkHandlers {
  /** Answers one request from a peer. A failure or defect here is no reply: the sender times out. */
  readonly onRequest: (from: PeerAddress, message: Uint8Array) => Effect.Effect<Uint8Array>
  /** Serves one channel a peer opened; the channel is closed when this ends. */
  readonly onChannel: (channel: Channel) => Effect.Effect<void>
}

export interface NetworkService {
  /** This node's own internal address. */
  readonly self: PeerAddress
  /** Sends a request and waits up to `timeoutMillis` for its reply. */
  readonly request: (
    peer: PeerAddress,
    message: Uint8Array,
    timeoutMillis: number
  ) => Effect.Effect<Uint8Array, NetworkUnreachable | NetworkTimedOut>
  /** Opens a channel to a peer, waiting up to `timeoutMillis` for it to be accepted; closed with the scope. */
  readonly open: (
    peer: PeerAddress,
    timeoutMillis: number
  ) => Effect.Effect<Channel, NetworkUnreachable | NetworkTimedOut, Scope.Scope>
  /** Serves requests and channels addressed to `self` until the scope closes. */
  readonly serve: (handlers: NetworkHandlers) => Effect.Effect<void, NetworkUnreachable, Scope.Scope>
}

export class Network extends Context.Tag("@vellum/platform/Network")<Network, NetworkService>() {}
