/**
 * The leader's side of replication. While the node leads a term, followers subscribe over a channel
 * (messages.ts); each is placed by the epochs rule (subscriptionPosition.ts), sent raw slices of the log
 * — whole write units, the uncommitted tail included; a chunk the leader has scavenged, whose positions are
 * no longer contiguous, as its file whole, in pieces — as far ahead of its last ack as the send window
 * allows (a file's unacknowledged bytes count while it is sent), and the replication checkpoint (`Commit`, which is also the heartbeat). Each ack of a voting
 * follower feeds the ReplicationTracker; the term's commit gate lets a write round through once the
 * tracker has a quorum past it.
 *
 * Raft's rule on earlier terms: a leader never commits by counting copies of records from earlier terms
 * alone. Nothing commits until the quorum holds this term's epoch record (the first gated write of the
 * term), and then everything before it commits with it.
 */
import { Effect, type Scope } from "effect"
import type { Channel, NetworkService } from "@vellum/platform"
import { isRawChunk, type CommitGate, type NotLeading, type ReplicaLog } from "@vellum/storage"
import { ReplicationTracker } from "./ReplicationTracker.js"
import { subscriptionPosition } from "./subscriptionPosition.js"
import { decodeMessage, encodeMessage, type ReplicationMessage } from "./messages.js"
import { Signal } from "./Signal.js"

export interface LeaderReplicationSettings {
  readonly clusterSize: number
  readonly heartbeatIntervalMs: number
  /** Bytes sent and not yet acknowledged, at most (the reference's 16 MiB). */
  readonly sendWindowBytes: number
  /** Bytes per Data message, about. */
  readonly sliceBytes: number
}

interface Waiter {
  readonly end: number
  readonly resume: (effect: Effect.Effect<void, NotLeading>) => void
}

/** One term of leading. */
interface Term {
  readonly tracker: ReplicationTracker
  /** Where the first gated write of the term (its epoch) ends; nothing commits before a quorum has it. */
  epochEnd: number | undefined
  /** What was committed when the term began (the commit position until the epoch is on a quorum). */
  readonly committedBefore: number
  waiters: Array<Waiter>
  /** Each subscribed follower's last ack. */
  readonly acks: Map<string, number>
  /** Each subscribed follower's last ack of the bytes it holds of a chunk file being sent (0: none). */
  readonly fileAcks: Map<string, number>
  ended: boolean
}

const notLeading: NotLeading = { _tag: "NotLeading" }

export interface LeaderReplication {
  /** Begins a term: returns the gate the store's writer waits on. */
  readonly begin: () => CommitGate
  /** Ends the term: waiting writes fail (their outcome is unknown), subscriptions close. */
  readonly end: Effect.Effect<void>
  /** The replication checkpoint of the current term (what is committed cluster-wide), if leading. */
  readonly committed: () => number | undefined
  /** Each subscribed voter's flushed position, for choosing whom to hand over to. */
  readonly followerPositions: () => ReadonlyMap<string, number>
}

export const make = (
  settings: LeaderReplicationSettings,
  network: NetworkService,
  replica: ReplicaLog
): Effect.Effect<LeaderReplication, never, Scope.Scope> =>
  Effect.gen(function* () {
    let current: Term | undefined
    const changed = new Signal()

    const commitOf = (t: Term): number =>
      t.epochEnd !== undefined && t.tracker.replicated >= t.epochEnd ? t.tracker.replicated : t.committedBefore

    /** Lets through every waiting write the quorum now holds. */
    const release = (t: Term) => {
      const committed = commitOf(t)
      if (t.epochEnd === undefined || committed < t.epochEnd) return
      const still: Array<Waiter> = []
      for (const w of t.waiters) {
        if (w.end <= committed) w.resume(Effect.void)
        else still.push(w)
      }
      t.waiters = still
    }

    const begin = (): CommitGate => {
      if (current !== undefined) endTerm(current)
      const t: Term = {
        tracker: new ReplicationTracker(settings.clusterSize),
        epochEnd: undefined,
        committedBefore: replica.committed(),
        waiters: [],
        acks: new Map(),
        fileAcks: new Map(),
        ended: false
      }
      current = t
      return (endPosition) =>
        Effect.async<void, NotLeading>((resume) => {
          if (t.ended) return resume(Effect.fail(notLeading))
          t.epochEnd ??= endPosition
          t.tracker.leaderFlushed(Math.max(endPosition, t.tracker.replicated))
          t.waiters.push({ end: endPosition, resume })
          release(t)
          changed.notify()
        })
    }

    const endTerm = (t: Term) => {
      t.ended = true
      const waiting = t.waiters
      t.waiters = []
      for (const w of waiting) w.resume(Effect.fail(notLeading))
      if (current === t) current = undefined
      changed.notify()
    }

    const send = (channel: Channel, message: ReplicationMessage) => channel.send(encodeMessage(message))

    /** Reads the follower's acks until the channel breaks. */
    const readAcks = (channel: Channel, t: Term, follower: string, promotable: boolean) =>
      Effect.forever(
        Effect.gen(function* () {
          const message = decodeMessage(yield* channel.receive)
          if (message?._tag !== "Ack") return
          const known = t.acks.get(follower) ?? -1
          if (message.flushed > known) t.acks.set(follower, message.flushed)
          t.fileAcks.set(follower, message.chunkBytes)
          t.tracker.replicaAcked(follower, message.flushed, promotable)
          release(t)
          changed.notify()
        })
      )

    /** Streams the log to one follower from `from`, with the checkpoint as heartbeat, until the term ends. */
    const stream = (channel: Channel, t: Term, follower: string, from: number) =>
      Effect.gen(function* () {
        let next = from
        /** The scavenged chunk file being sent from `next`'s chunk: its id and the bytes sent of it. */
        let file: { readonly chunkId: string; readonly sent: number } | undefined
        let lastCommitSent = -1
        let lastSentAt = -Infinity
        const now = Effect.clockWith((clock) => clock.currentTimeMillis)
        while (!t.ended) {
          const acked = t.acks.get(follower) ?? from
          const unacked =
            file === undefined ? next - acked : file.sent - Math.min(file.sent, t.fileAcks.get(follower) ?? 0)
          if (next < replica.writerCheckpoint() && unacked < settings.sendWindowBytes) {
            const read = yield* replica.readRaw(next, settings.sliceBytes, file?.sent ?? 0)
            if (read !== undefined && isRawChunk(read)) {
              // Scavenged again while it was being sent: the new file goes from its start.
              if (file !== undefined && read.chunkId !== file.chunkId) {
                file = undefined
                continue
              }
              yield* send(channel, { _tag: "RawChunk", piece: read })
              const sent = read.offset + read.bytes.length
              file = sent < read.fileSize ? { chunkId: read.chunkId, sent } : undefined
              if (file === undefined) next = (read.endNumber + 1) * replica.chunkSize
              continue
            }
            if (read !== undefined) {
              yield* send(channel, { _tag: "Data", slice: read })
              next = read.completesChunk ? Math.ceil(read.end / replica.chunkSize) * replica.chunkSize : read.end
              continue
            }
          }
          const committed = commitOf(t)
          const at = yield* now
          if (committed !== lastCommitSent || at - lastSentAt >= settings.heartbeatIntervalMs) {
            yield* send(channel, { _tag: "Commit", position: committed, leaderWriter: replica.writerCheckpoint() })
            lastCommitSent = committed
            lastSentAt = at
          }
          yield* changed.wait
        }
      })

    const serveSubscription = (channel: Channel) =>
      Effect.gen(function* () {
        const first = decodeMessage(yield* channel.receive)
        if (first?._tag !== "Subscribe") return
        const t = current
        if (t === undefined || t.ended || t.epochEnd === undefined)
          return yield* send(channel, { _tag: "Refused", reason: "this node does not lead" })
        const leaderEpochs = [...(yield* replica.epochs(Number.MAX_SAFE_INTEGER))].reverse()
        const placed = subscriptionPosition(
          { epochs: first.epochs, writer: first.writer },
          {
            epochs: leaderEpochs.map((e) => ({ position: e.position, number: e.epochNumber, id: e.epochId })),
            writer: replica.writerCheckpoint()
          }
        )
        if (placed._tag === "Unplaceable") return yield* send(channel, { _tag: "Refused", reason: placed.reason })
        yield* send(channel, { _tag: "Subscribed", position: placed.position })
        t.acks.set(first.follower, placed.position)
        yield* Effect.raceFirst(
          readAcks(channel, t, first.follower, first.promotable),
          stream(channel, t, first.follower, placed.position)
        ).pipe(
          // A lost follower's acks count no more until it subscribes again.
          Effect.ensuring(
            Effect.sync(() => {
              t.acks.delete(first.follower)
              t.fileAcks.delete(first.follower)
              t.tracker.replicaLost(first.follower)
            })
          )
        )
      }).pipe(Effect.ignore)

    // The heartbeat: every stream wakes at least this often, to send the replication checkpoint.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(settings.heartbeatIntervalMs),
          Effect.sync(() => changed.notify())
        )
      )
    )

    yield* network
      .serve({
        onRequest: () => Effect.die("replication takes channels only"),
        onChannel: serveSubscription
      })
      .pipe(Effect.orDie)

    const service: LeaderReplication = {
      begin,
      end: Effect.sync(() => {
        if (current !== undefined) endTerm(current)
      }),
      committed: () => (current === undefined ? undefined : commitOf(current)),
      followerPositions: () => (current === undefined ? new Map() : new Map(current.acks))
    }
    return service
  })
