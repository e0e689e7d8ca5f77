/**
 * A cluster member: gossip, elections and replication over the node's `Network`, driving its clustered
 * store (`ReplicaLog`), and the `ClusterStatus` the rest of the node reads.
 *
 * Roles follow the election (a read-only replica has no election: it follows the one alive leader gossip
 * shows):
 * - elected for a term → PreLeader: the term's replication begins, and the store writes the term's epoch
 *   behind the commit gate; once a quorum holds it → Leader, and writes are taken;
 * - following a leader → PreReplica while subscribing, CatchingUp while behind, Follower once within
 *   `CaughtUpBytes` of the leader (a lost subscription is retried every 500 ms while that node leads);
 * - no leader known → Unknown;
 * - resigning: ResigningLeader while writes in flight reach their quorum (new writes are turned away by
 *   the HTTP routing), then the election hands over to the most caught-up voter.
 * Every member starts from the vote promise its disk kept (PromiseFile.ts), raised to the newest epoch in
 * its log so that a term it stands for is always newer than every epoch it holds.
 */
import { Clock, Context, Deferred, Effect, Fiber, Layer, Runtime, type Scope } from "effect"
import { Disk, Network, type NetworkService, type PeerAddress } from "@vellum/platform"
import { EventStore, type ReplicaLog } from "@vellum/storage"
import { peerAddressOf, type ClusterSettings } from "./ClusterSettings.js"
import { ClusterStatus, type ClusterStatusService, type LeaderEndpoint } from "./ClusterStatus.js"
import { EMPTY_UUID, type MemberInfo } from "./MemberInfo.js"
import type { VNodeState } from "./VNodeState.js"
import * as Gossip from "./gossip/Gossip.js"
import * as ElectionService from "./elections/ElectionService.js"
import { openPromiseFile } from "./elections/PromiseFile.js"
import * as LeaderReplication from "./replication/LeaderReplication.js"
import { follow, type FollowerProgress, TruncationRefused } from "./replication/FollowerReplication.js"
import { Protocol, makeProtocolMux } from "./network/ProtocolMux.js"
import * as Forwarding from "./forwarding/Forwarding.js"

export { TruncationRefused }

export interface ClusterNodeOptions {
  readonly settings: ClusterSettings
  readonly instanceId: string
  readonly version: string
  /** The data directory (the vote promise lives there beside the log). */
  readonly dataDir: string
}

/** The member's status, and what the node's other parts need of it (forwarding its writes to the leader). */
export interface ClusterMember extends ClusterStatusService {
  /** The internal address of the leader this node follows, if it follows one. */
  readonly leaderAddress: () => PeerAddress | undefined
  /** Another protocol on the member's network address. */
  readonly protocol: (id: Protocol) => NetworkService
}

type Role =
  | { readonly _tag: "Leaderless" }
  | { readonly _tag: "Leading"; readonly term: number; ready: boolean; resigning: boolean }
  | { readonly _tag: "Following"; readonly leader: PeerAddress; progress: FollowerProgress }

const RESUBSCRIBE_MS = 500

/** The state a role shows in gossip, `/info` and the routing. */
const stateOf = (role: Role, readOnly: boolean): VNodeState => {
  switch (role._tag) {
    case "Leaderless":
      return readOnly ? "ReadOnlyLeaderless" : "Unknown"
    case "Leading":
      return !role.ready ? "PreLeader" : role.resigning ? "ResigningLeader" : "Leader"
    case "Following":
      if (readOnly) return role.progress === "Subscribing" ? "PreReadOnlyReplica" : "ReadOnlyReplica"
      return role.progress === "Subscribing" ? "PreReplica" : role.progress === "CatchingUp" ? "CatchingUp" : "Follower"
  }
}

/** Starts the member for the scope's life. Fails only if the node must not go on (a cut past MaxTruncation). */
export const make = (
  options: ClusterNodeOptions,
  network: NetworkService,
  replica: ReplicaLog
): Effect.Effect<ClusterMember, never, Scope.Scope | Disk> =>
  Effect.gen(function* () {
    const { settings } = options
    const self = peerAddressOf(settings.internal)
    const readOnly = settings.readOnlyReplica
    const scope = yield* Effect.scope
    let role: Role = { _tag: "Leaderless" }
    let priority = settings.nodePriority
    /** Why the node cannot go on as a member, once it cannot. */
    const failed = yield* Deferred.make<string>()
    const mux = makeProtocolMux(network)

    const lastEpoch = Effect.map(Effect.orDie(replica.epochs(1)), (es) => es[0])

    const selfMember: Effect.Effect<MemberInfo> = Effect.gen(function* () {
      const epoch = yield* lastEpoch
      const adv = settings.httpAdvertised
      return {
        instanceId: options.instanceId,
        timeStamp: yield* Clock.currentTimeMillis,
        state: stateOf(role, readOnly),
        isAlive: true,
        internalTcpIp: settings.internal.host,
        internalTcpPort: settings.internal.port,
        internalSecureTcpPort: 0,
        externalTcpIp: adv.host,
        externalTcpPort: 0,
        externalSecureTcpPort: 0,
        internalHttpEndPointIp: adv.host,
        internalHttpEndPointPort: adv.port,
        httpEndPointIp: adv.host,
        httpEndPointPort: adv.port,
        lastCommitPosition: replica.committed(),
        writerCheckpoint: replica.writerCheckpoint(),
        chaserCheckpoint: replica.writerCheckpoint(),
        epochPosition: epoch?.position ?? -1,
        epochNumber: epoch?.epochNumber ?? -1,
        epochId: epoch?.epochId ?? EMPTY_UUID,
        nodePriority: priority,
        isReadOnlyReplica: readOnly,
        esVersion: options.version
      }
    })

    const gossip = yield* Gossip.make(
      {
        ...Gossip.defaultGossipSettings(settings.gossipSeeds),
        intervalMillis: settings.gossipIntervalMs,
        timeoutMillis: settings.gossipTimeoutMs,
        deadMemberRemovalMillis: settings.deadMemberRemovalPeriodSec * 1000
      },
      mux.protocol(Protocol.Gossip),
      Effect.map(selfMember, (member) => ({
        member,
        state: member.state,
        leaderInstanceId: leaderMember()?.instanceId
      }))
    )

    /** The gossip record of the node at a internal address, if gossip knows it. */
    const memberAt = (address: PeerAddress): MemberInfo | undefined =>
      gossip.known().find((m) => Gossip.internalAddress(m) === address)

    function leaderMember(): MemberInfo | undefined {
      return role._tag === "Following" ? memberAt(role.leader) : undefined
    }

    const leaderReplication = yield* LeaderReplication.make(
      {
        clusterSize: settings.clusterSize,
        heartbeatIntervalMs: settings.heartbeatIntervalMs,
        sendWindowBytes: 16 * 1024 * 1024,
        sliceBytes: 64 * 1024
      },
      mux.protocol(Protocol.Replication),
      replica
    )

    // ---- following ----
    let follower: Fiber.RuntimeFiber<void> | undefined
    const followerSettings = {
      self,
      promotable: !readOnly,
      heartbeatIntervalMs: settings.heartbeatIntervalMs,
      heartbeatTimeoutMs: settings.heartbeatTimeoutMs,
      maxTruncationBytes: settings.maxTruncationBytes,
      epochsSent: 20
    }
    const stopFollowing = () => {
      const fiber = follower
      follower = undefined
      return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
    }
    const startFollowing = (leader: PeerAddress) =>
      Effect.gen(function* () {
        yield* stopFollowing()
        const following: Role = { _tag: "Following", leader, progress: "Subscribing" }
        role = following
        const loop = Effect.forever(
          Effect.zipRight(
            Effect.scoped(
              follow(followerSettings, mux.protocol(Protocol.Replication), replica, leader, (progress) => {
                if (role === following) following.progress = progress
              })
            ),
            Effect.sleep(RESUBSCRIBE_MS)
          )
        ).pipe(
          Effect.catchAll((refused) =>
            Effect.gen(function* () {
              yield* Effect.logError(refused.message)
              yield* Deferred.succeed(failed, refused.message)
            })
          )
        )
        follower = yield* Effect.forkIn(loop, scope)
      })

    // ---- leading ----
    const startLeading = (term: number) =>
      Effect.gen(function* () {
        yield* stopFollowing()
        if (role._tag === "Leading") yield* stopLeading
        const leading: Role = { _tag: "Leading", term, ready: false, resigning: false }
        role = leading
        const gate = leaderReplication.begin()
        // Waiting for the epoch's quorum runs beside the role changes: a step down must not wait for it.
        yield* Effect.forkIn(
          Effect.gen(function* () {
            const led = yield* Effect.either(replica.lead(term, options.instanceId, gate))
            if (led._tag === "Right" && role === leading) {
              leading.ready = true
              yield* Effect.logInfo(`leading term ${term} from position ${led.right.position}`)
            }
          }),
          scope
        )
      })

    const stopLeading = Effect.gen(function* () {
      yield* leaderReplication.end
      yield* replica.stopLeading
    })

    /** Follows what the election decided; runs in its own fiber, one change at a time. */
    const react = (view: ElectionService.ElectionView) =>
      Effect.gen(function* () {
        if (view.role === "Leader") return // onElected starts the term
        if (role._tag === "Leading") yield* stopLeading
        if (view.leader !== undefined && view.leader !== self) {
          if (role._tag !== "Following" || role.leader !== view.leader) yield* startFollowing(view.leader)
        } else if (role._tag !== "Leaderless") {
          yield* stopFollowing()
          role = { _tag: "Leaderless" }
        }
      })
    const changes = yield* Effect.makeSemaphore(1)
    const serially = <A, E>(effect: Effect.Effect<A, E>) => Effect.forkIn(changes.withPermits(1)(effect), scope)

    const runtime = yield* Effect.runtime<never>()
    let election: ElectionService.ElectionService | undefined
    const currentView = Effect.suspend(() =>
      election === undefined
        ? Effect.succeed<ElectionService.ElectionView>({ term: 0, role: "Follower", leader: undefined })
        : election.view
    )
    if (!readOnly) {
      const promises = yield* Effect.orDie(openPromiseFile(options.dataDir))
      const newest = yield* lastEpoch
      // A new machine: no promise kept, no log (Election.ElectionContext's `newcomer`).
      const newMachine = newest === undefined && promises.promise.term === 0 && promises.promise.votedFor === undefined
      // A term this node stands for must be newer than every epoch its log holds.
      if (newest !== undefined && promises.promise.term < newest.epochNumber)
        yield* Effect.orDie(promises.keep({ term: newest.epochNumber, votedFor: undefined }))
      const voters = [self, ...settings.gossipSeeds]
      election = yield* ElectionService.make(
        {
          self,
          voters,
          electionTimeoutMillis: settings.leaderElectionTimeoutMs,
          // Several heartbeats per timeout, so one lost heartbeat does not start an election.
          heartbeatMillis: Math.max(1, Math.floor(settings.leaderElectionTimeoutMs / 4))
        },
        mux.protocol(Protocol.Election),
        promises,
        {
          tip: Effect.map(lastEpoch, (epoch) => ({
            epochNumber: epoch?.epochNumber ?? -1,
            writerCheckpoint: replica.writerCheckpoint()
          })),
          priorityRank: Effect.sync(() => {
            const others = voters.filter((v) => v !== self).map((v) => memberAt(v)?.nodePriority ?? 0)
            return others.filter((p) => p > priority).length
          }),
          addressOf: (voter) => voter,
          newcomer: newMachine
            ? Effect.map(lastEpoch, (epoch) =>
                epoch !== undefined
                  ? undefined
                  : {
                      othersHaveEpochs: gossip
                        .known()
                        .some((m) => m.instanceId !== options.instanceId && m.epochNumber >= 0)
                    }
              )
            : undefined,
          // Only if it still leads that term when its turn comes (it may have stepped down meanwhile).
          onElected: (term) =>
            Effect.asVoid(
              serially(
                Effect.flatMap(currentView, (view) =>
                  view.role === "Leader" && view.term === term ? startLeading(term) : react(view)
                )
              )
            ),
          // The view as it is when the change is handled, not as it was when it was announced: changes are
          // handled one at a time, and an older view handled after a newer one would undo it.
          onViewChange: () => void Runtime.runFork(runtime)(serially(Effect.flatMap(currentView, react)))
        }
      )
    } else {
      // A read-only replica follows the one alive leader gossip shows.
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.gen(function* () {
            const leaders = gossip.known().filter((m) => m.isAlive && m.state === "Leader" && !m.isReadOnlyReplica)
            const leader = leaders.length === 1 ? Gossip.internalAddress(leaders[0]!) : undefined
            yield* changes.withPermits(1)(react({ term: 0, role: "Follower", leader }))
            yield* Effect.sleep(RESUBSCRIBE_MS)
          })
        )
      )
    }

    yield* Effect.orDie(mux.start)

    const leaderEndpoint = (): LeaderEndpoint | undefined => {
      if (role._tag === "Leading")
        return role.ready
          ? {
              instanceId: options.instanceId,
              httpHost: settings.httpAdvertised.host,
              httpPort: settings.httpAdvertised.port
            }
          : undefined
      const member = leaderMember()
      return member === undefined
        ? undefined
        : { instanceId: member.instanceId, httpHost: member.httpEndPointIp, httpPort: member.httpEndPointPort }
    }

    const resign = Effect.gen(function* () {
      const current = role
      if (current._tag !== "Leading" || !current.ready || current.resigning || election === undefined) return
      current.resigning = true
      // Drain: writes already taken reach their quorum (bounded by the commit timeout).
      const deadline = (yield* Clock.currentTimeMillis) + settings.commitTimeoutMs
      while ((leaderReplication.committed() ?? 0) < replica.writerCheckpoint()) {
        if ((yield* Clock.currentTimeMillis) >= deadline) break
        yield* Effect.sleep(10)
      }
      let successor: string | undefined
      let best = -1
      for (const [voter, position] of leaderReplication.followerPositions())
        if (position > best) {
          best = position
          successor = voter
        }
      yield* election.resign(successor)
    })

    const leaderAddress = () => (role._tag === "Following" ? role.leader : undefined)
    const status: ClusterMember = {
      leaderAddress,
      protocol: mux.protocol,
      clusterSize: settings.clusterSize,
      isReadOnlyReplica: readOnly,
      state: () => stateOf(role, readOnly),
      leadingTerm: () => (role._tag === "Leading" ? role.term : undefined),
      leader: leaderEndpoint,
      members: () => gossip.members,
      receiveGossip: (_self, received) => gossip.receive(received),
      resign: Effect.asVoid(serially(resign)),
      setPriority: (p) =>
        Effect.sync(() => {
          priority = p
        }),
      priority: () => priority,
      failure: Deferred.await(failed),
      internal: { protocol: mux.protocol, addressOf: Gossip.internalAddress, leaderAddress }
    }
    return status
  })

/**
 * The member as the node's `ClusterStatus`, over the node's store, network and disk; and the node's store
 * for everything above it, with the writes its own services make forwarded to the leader while it does
 * not lead (forwarding/Forwarding.ts).
 */
export const layer = (
  options: ClusterNodeOptions
): Layer.Layer<ClusterStatus | EventStore, never, EventStore | Network | Disk> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const store = yield* EventStore
      const network = yield* Network
      const replica = store.replica
      if (replica === undefined) return yield* Effect.dieMessage("a cluster member needs a clustered store")
      const member = yield* make(options, network, replica)
      const forwarding = yield* Forwarding.make(
        { timeoutMs: options.settings.commitTimeoutMs + 2_000 },
        member.protocol(Protocol.Forward),
        store,
        member.leaderAddress
      )
      return Context.make(ClusterStatus, member as ClusterStatusService).pipe(Context.add(EventStore, forwarding))
    })
  )
