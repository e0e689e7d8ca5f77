/**
 * One `Network` address, several protocols: gossip, elections and replication each get a view of the node's
 * network that looks like a whole one (`protocol(id)`), and one server dispatches what arrives. A request
 * carries its protocol in its first byte; a channel's opener sends the protocol as the channel's first
 * message. Each protocol's `serve` only registers its handlers; `start` serves them all, so every protocol
 * must be made before the node starts serving, except that a protocol a node's service adds later
 * (auto-scavenge) is found from then on: until it registers, its requests go unanswered, as if lost.
 */
import { Effect, type Scope } from "effect"
import {
  NetworkUnreachable,
  type Channel,
  type NetworkHandlers,
  type NetworkService,
  type PeerAddress
} from "@vellum/platform"

/**
 * The protocol bytes. A number, once given, stays with its protocol (members of different versions share a
 * cluster while it is upgraded): a new protocol takes the next free number.
 *
 * 1-3 the cluster's own (gossip, elections, replication); 4 the node's own writes passed to the leader
 * (forwarding/); 5 a user's auto-scavenge command passed to the leader, 6 the leader's calls to a member's
 * scavenger (packages/auto-scavenge); 7 an HTTP request a follower passes to the leader and the leader's
 * answer (`forwardsToLeader` routes, packages/http's forwarding/).
 */
export const Protocol = {
  Gossip: 1,
  Election: 2,
  Replication: 3,
  Forward: 4,
  AutoScavenge: 5,
  NodeScavenge: 6,
  HttpForward: 7
} as const
export type Protocol = (typeof Protocol)[keyof typeof Protocol]

export interface ProtocolMux {
  readonly protocol: (id: Protocol) => NetworkService
  /** Serves every registered protocol at the node's address until the scope closes. */
  readonly start: Effect.Effect<void, NetworkUnreachable, Scope.Scope>
}

const tagged = (id: number, message: Uint8Array): Uint8Array => {
  const out = new Uint8Array(message.length + 1)
  out[0] = id
  out.set(message, 1)
  return out
}

export const makeProtocolMux = (network: NetworkService): ProtocolMux => {
  const handlers = new Map<number, NetworkHandlers>()

  const protocol = (id: Protocol): NetworkService => ({
    self: network.self,
    request: (peer, message, timeoutMillis) => network.request(peer, tagged(id, message), timeoutMillis),
    open: (peer: PeerAddress, timeoutMillis: number) =>
      Effect.flatMap(network.open(peer, timeoutMillis), (channel) =>
        Effect.as(
          Effect.mapError(
            channel.send(Uint8Array.of(id)),
            (closed) => new NetworkUnreachable({ peer, message: closed.message, cause: closed })
          ),
          channel
        )
      ),
    serve: (served) =>
      Effect.acquireRelease(
        Effect.sync(() => void handlers.set(id, served)),
        () => Effect.sync(() => void handlers.delete(id))
      )
  })

  const onRequest = (from: PeerAddress, message: Uint8Array): Effect.Effect<Uint8Array> => {
    const served = message.length > 0 ? handlers.get(message[0]!) : undefined
    // No answer is what an unknown protocol gets: the sender times out, as with any lost message.
    return served === undefined ? Effect.die("no such protocol") : served.onRequest(from, message.subarray(1))
  }

  const onChannel = (channel: Channel): Effect.Effect<void> =>
    Effect.gen(function* () {
      const first = yield* Effect.either(channel.receive)
      if (first._tag === "Left" || first.right.length !== 1) return yield* channel.close
      const served = handlers.get(first.right[0]!)
      if (served === undefined) return yield* channel.close
      yield* served.onChannel(channel)
    })

  return { protocol, start: network.serve({ onRequest, onChannel }) }
}
