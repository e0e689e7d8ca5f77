/**
 * The gossip service: push-pull rounds over the `Network`. Each round sends this node's view of the
 * cluster to one other member (or a seed it has not heard from yet), which merges it and answers with its
 * own merged view, which this node merges in turn (gossipMerge.ts holds the rules). Rounds come every
 * `fastIntervalMillis` for the first `fastRounds`, then every `intervalMillis`, as the reference's do.
 * A failed send marks the member dead at once (the followed leader excepted); an answer marks it alive.
 *
 * A member is reached at its internal endpoint (`internalTcpIp:internalTcpPort`), the node-to-node address.
 * Messages are JSON: `{ sender, members }`, `sender` being the member key (its HTTP endpoint) of the node
 * that sent it.
 */
import { Clock, Effect, Random, Ref, type Scope } from "effect"
import type { NetworkService, PeerAddress } from "@vellum/platform"
import { peerAddressOf } from "../ClusterSettings.js"
import { DeadMemberRemovalMillis, afterContact, afterFailedSend, mergeGossip } from "../gossipMerge.js"
import { memberKey, type MemberInfo } from "../MemberInfo.js"
import type { VNodeState } from "../VNodeState.js"

export interface GossipSettings {
  /** Internal addresses to gossip with until they answer (`--gossip-seed`). */
  readonly seeds: ReadonlyArray<PeerAddress>
  readonly intervalMillis: number
  readonly fastIntervalMillis: number
  readonly fastRounds: number
  readonly timeoutMillis: number
  /** How long a dead member is remembered (`DeadMemberRemovalPeriodSec`). */
  readonly deadMemberRemovalMillis: number
}

/**
 * The reference's timings: 100 ms for the first 20 rounds, then every 2 s; a round times out after 2.5 s; a
 * dead member is forgotten after 30 minutes.
 */
export const defaultGossipSettings = (seeds: ReadonlyArray<PeerAddress>): GossipSettings => ({
  seeds,
  intervalMillis: 2000,
  fastIntervalMillis: 100,
  fastRounds: 20,
  timeoutMillis: 2500,
  deadMemberRemovalMillis: DeadMemberRemovalMillis
})

/** What this node says of itself each round (it changes with its state and log). */
export interface SelfReport {
  readonly member: MemberInfo
  readonly state: VNodeState
  /** The instance id of the leader this node follows, if any. */
  readonly leaderInstanceId: string | undefined
}

export interface GossipService {
  /** Every member this node knows, itself included, ordered by key (its own record refreshed). */
  readonly members: Effect.Effect<ReadonlyArray<MemberInfo>>
  /** The members as last merged, without refreshing anything (for code that cannot wait). */
  readonly known: () => ReadonlyArray<MemberInfo>
  /** Merges members a peer sent by another way (`POST /gossip`) and returns the merged view. */
  readonly receive: (received: ReadonlyArray<MemberInfo>) => Effect.Effect<ReadonlyArray<MemberInfo>>
}

/** A member's node-to-node address, spelt as the seeds are (`peerAddressOf`: an IPv6 host in brackets). */
export const internalAddress = (m: MemberInfo): PeerAddress =>
  peerAddressOf({ host: m.internalTcpIp, port: m.internalTcpPort })

interface GossipMessage {
  readonly sender: string
  readonly members: ReadonlyArray<MemberInfo>
}

const encode = (message: GossipMessage): Uint8Array => new TextEncoder().encode(JSON.stringify(message))

const decode = (bytes: Uint8Array): GossipMessage | undefined => {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<GossipMessage>
    return typeof value.sender === "string" && Array.isArray(value.members) ? (value as GossipMessage) : undefined
  } catch {
    return undefined
  }
}

/** Starts gossiping for the scope's life: serves peers' rounds and runs its own. */
export const make = (
  settings: GossipSettings,
  network: NetworkService,
  report: Effect.Effect<SelfReport>
): Effect.Effect<GossipService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const initial = yield* report
    const view = yield* Ref.make<ReadonlyArray<MemberInfo>>([initial.member])
    let known: ReadonlyArray<MemberInfo> = [initial.member]

    /** Folds what arrived (from `sender`, a member key, if a member sent it) into the view. */
    const merge = (received: ReadonlyArray<MemberInfo>, sender: string | undefined) =>
      Effect.gen(function* () {
        const self = yield* report
        const nowMillis = yield* Clock.currentTimeMillis
        const current = yield* Ref.get(view)
        const merged = mergeGossip({
          self: self.member,
          selfState: self.state,
          known: current,
          received,
          sender,
          leaderInstanceId: self.leaderInstanceId,
          nowMillis,
          deadMemberRemovalMillis: settings.deadMemberRemovalMillis
        })
        yield* Ref.set(view, merged.members)
        known = merged.members
        return merged.members
      })

    // A peer's round: merge what it sent, answer with the merged view. Malformed gossip gets no answer.
    yield* network
      .serve({
        onRequest: (_from, bytes) => {
          const message = decode(bytes)
          if (message === undefined) return Effect.die("malformed gossip")
          return Effect.map(merge(message.members, message.sender), (members) =>
            encode({ sender: memberKey(initial.member), members })
          )
        },
        onChannel: (channel) => channel.close
      })
      .pipe(Effect.orDie)

    /** Whom to gossip with: a random other member, or a seed nobody has heard from yet. */
    const pickPeer = Effect.gen(function* () {
      const members = yield* Ref.get(view)
      const selfAddress = internalAddress(initial.member)
      const known = new Set(members.map(internalAddress))
      const candidates = [
        ...members.map(internalAddress).filter((a) => a !== selfAddress),
        ...settings.seeds.filter((s) => !known.has(s) && s !== selfAddress)
      ]
      if (candidates.length === 0) return undefined
      return candidates[yield* Random.nextIntBetween(0, candidates.length)]
    })

    const round = Effect.gen(function* () {
      const peer = yield* pickPeer
      if (peer === undefined) return
      const self = yield* report
      const members = yield* merge([], undefined)
      const answer = yield* Effect.either(
        network.request(peer, encode({ sender: memberKey(self.member), members }), settings.timeoutMillis)
      )
      const key = members.find((m) => internalAddress(m) === peer)
      if (answer._tag === "Left") {
        if (key !== undefined)
          known = yield* Ref.updateAndGet(view, (ms) => afterFailedSend(ms, memberKey(key), self.leaderInstanceId))
        return
      }
      const message = decode(answer.right)
      if (message === undefined) return
      yield* merge(message.members, message.sender)
      known = yield* Ref.updateAndGet(view, (ms) => afterContact(ms, message.sender))
    })

    yield* Effect.forkScoped(
      Effect.gen(function* () {
        for (let n = 0; ; n++) {
          yield* round
          yield* Effect.sleep(n < settings.fastRounds ? settings.fastIntervalMillis : settings.intervalMillis)
        }
      })
    )
    // Merging nothing refreshes this node's own record and forgets long-dead members.
    return {
      members: merge([], undefined),
      known: () => known,
      receive: (received: ReadonlyArray<MemberInfo>) => merge(received, undefined)
    }
  })
