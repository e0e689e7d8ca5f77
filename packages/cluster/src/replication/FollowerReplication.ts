/**
 * The follower's side of replication: one subscription to the leader it follows, until the channel breaks,
 * the leader refuses, or the leader stops sending (no Data or Commit within a heartbeat interval plus the
 * heartbeat timeout). It sends its writer checkpoint and newest epochs; the leader answers where their
 * logs part, and the follower cuts its divergent tail back to there (refusing to cut more than
 * `maxTruncationBytes`); then it writes each slice as it comes (whole units, so its writer checkpoint
 * never lands inside one) and installs each scavenged chunk file sent whole, acknowledges what it has
 * flushed (and the bytes it holds of a file still coming, for the leader's send window), and indexes up to the leader's replication
 * checkpoint — never past what it holds.
 */
import { Effect, Schema, type Scope } from "effect"
import { assert, timedOut, type NetworkService, type PeerAddress } from "@vellum/platform"
import type { ReplicaLog } from "@vellum/storage"
import { decodeMessage, encodeMessage, type ReplicationMessage } from "./messages.js"

/** Following the leader would cut more of the log than the node may cut: the node refuses to go on. */
export class TruncationRefused extends Schema.TaggedError<TruncationRefused>()("TruncationRefused", {
  leader: Schema.String,
  writerCheckpoint: Schema.Number,
  truncateTo: Schema.Number,
  maxTruncationBytes: Schema.Number
}) {
  override get message() {
    return (
      `following the leader at ${this.leader} would cut ${this.writerCheckpoint - this.truncateTo} bytes of this ` +
      `node's log (from ${this.writerCheckpoint} back to ${this.truncateTo}), more than the ${this.maxTruncationBytes} ` +
      `bytes MaxTruncation allows; the node will not cut it: raise MaxTruncation (-1: no limit) or rebuild the node`
    )
  }
}

export interface FollowerSettings {
  /** This node's internal address (how the leader names it). */
  readonly self: PeerAddress
  readonly promotable: boolean
  readonly heartbeatIntervalMs: number
  readonly heartbeatTimeoutMs: number
  readonly maxTruncationBytes: number
  /** How many of its newest epochs a follower sends (the reference's 20). */
  readonly epochsSent: number
}

/** Where a follower stands in its subscription (its node state follows from it). */
export type FollowerProgress = "Subscribing" | "CatchingUp" | "CaughtUp"

/** Within this many bytes of the leader's log a follower counts as caught up (the reference's clone threshold). */
export const CaughtUpBytes = 1024

/** Runs one subscription to `leader`; ends when it breaks (the caller retries while it still follows). */
export const follow = (
  settings: FollowerSettings,
  network: NetworkService,
  replica: ReplicaLog,
  leader: PeerAddress,
  onProgress: (progress: FollowerProgress) => void
): Effect.Effect<void, TruncationRefused, Scope.Scope> =>
  Effect.gen(function* () {
    onProgress("Subscribing")
    const silence = settings.heartbeatIntervalMs + settings.heartbeatTimeoutMs
    const channel = yield* network.open(leader, silence)
    const send = (message: ReplicationMessage) => channel.send(encodeMessage(message))
    // One watchdog per subscription rather than a time limit on every receive: the leader is silent too long
    // when this node has waited `silence` for its next message (time spent writing what came does not count).
    const clock = yield* Effect.clock
    let waitingSince: number | undefined
    const receive = Effect.suspend(() => {
      waitingSince = clock.unsafeCurrentTimeMillis()
      return Effect.ensuring(
        channel.receive,
        Effect.sync(() => {
          waitingSince = undefined
        })
      )
    })
    const watchdog = Effect.gen(function* () {
      for (;;) {
        const quiet = waitingSince === undefined ? 0 : clock.unsafeCurrentTimeMillis() - waitingSince
        if (quiet >= silence) return yield* timedOut(leader, silence, "no message from the leader")
        yield* Effect.sleep(silence - quiet)
      }
    })
    const subscription = Effect.gen(function* () {
      const epochs = yield* replica.epochs(settings.epochsSent)
      yield* send({
        _tag: "Subscribe",
        follower: settings.self,
        promotable: settings.promotable,
        writer: replica.writerCheckpoint(),
        epochs: epochs.map((e) => ({ position: e.position, number: e.epochNumber, id: e.epochId }))
      })
      const answer = decodeMessage(yield* receive)
      if (answer?._tag !== "Subscribed") return
      const writer = replica.writerCheckpoint()
      // The leader never places a follower past its own log: that would be a bug in the epochs rule.
      if (answer.position > writer)
        return yield* Effect.logError(`the leader placed this node past its log: ${answer.position} > ${writer}`)
      if (answer.position < writer) {
        if (settings.maxTruncationBytes >= 0 && writer - answer.position > settings.maxTruncationBytes)
          return yield* new TruncationRefused({
            leader,
            writerCheckpoint: writer,
            truncateTo: answer.position,
            maxTruncationBytes: settings.maxTruncationBytes
          })
        // Committed records are on a quorum, and every leader holds them: no leader ever asks to cut them.
        assert(answer.position >= replica.committed(), "FollowerReplication: committed records are never cut")
        yield* Effect.logWarning(
          `cutting this node's log back from ${writer} to ${answer.position} to follow ${leader}`
        )
        yield* replica.truncate(answer.position)
      }
      yield* send({ _tag: "Ack", flushed: replica.writerCheckpoint(), chunkBytes: 0 })
      onProgress("CatchingUp")
      for (;;) {
        const message = decodeMessage(yield* receive)
        if (message === undefined) return
        if (message._tag === "Data") {
          yield* replica.appendRaw(message.slice)
          yield* send({ _tag: "Ack", flushed: replica.writerCheckpoint(), chunkBytes: 0 })
        } else if (message._tag === "RawChunk") {
          // A piece of a scavenged chunk's file: the last one installs it and moves the writer checkpoint.
          const { piece } = message
          yield* Effect.tapError(replica.installChunk(piece), (error) =>
            // A refused file (one this log cannot take in place of its own) comes again at every subscription.
            error._tag === "InvalidRequest"
              ? Effect.logWarning(`the chunk file ${leader} sent cannot be installed: ${error.message}`)
              : Effect.void
          )
          const held = piece.offset + piece.bytes.length
          yield* send({
            _tag: "Ack",
            flushed: replica.writerCheckpoint(),
            chunkBytes: held >= piece.fileSize ? 0 : held
          })
        } else if (message._tag === "Commit") {
          yield* replica.commitTo(Math.min(message.position, replica.writerCheckpoint()))
          onProgress(message.leaderWriter - replica.writerCheckpoint() <= CaughtUpBytes ? "CaughtUp" : "CatchingUp")
        }
      }
    })
    yield* Effect.raceFirst(subscription, watchdog)
  }).pipe(
    Effect.catchAll((error) =>
      error._tag === "TruncationRefused"
        ? Effect.fail(error)
        : Effect.logDebug(`replication from ${leader} ended: ${error.message}`)
    )
  )
