/**
 * Forwarding: the writes a node's own services make (default users, scavenge points and history,
 * statistics) reach the leader when the node does not lead, as the reference forwards them. Clients'
 * HTTP writes are not forwarded but redirected (leaderRouting in packages/http); this is for what runs
 * inside the node.
 *
 * The node's store is wrapped: a write the local store refuses with NotLeader goes to the leader as one
 * request; the leader runs it on its own store and answers with the result or the error. The follower then
 * waits until the write has replicated to it and is committed here, so the service that wrote can read it
 * back at once (a scavenge on a follower reads the log up to its own scavenge point). A request that gets
 * no answer, or a write that does not arrive here in time, is a CommitTimeout: its outcome is unknown.
 */
import { Clock, Effect, type Scope } from "effect"
import type { NetworkService, PeerAddress } from "@vellum/platform"
import { CommitTimeout, type AppendError, type EventStoreService, NotLeader } from "@vellum/storage"
import {
  decodeAnswer,
  decodeWrite,
  encodeAnswer,
  encodeWrite,
  type Answer,
  type ForwardedResult,
  type ForwardedWrite
} from "./messages.js"

export interface ForwardingSettings {
  /** How long a forwarded write may take, its replication back here included. */
  readonly timeoutMs: number
}

/** Runs a forwarded write on this node's own store. */
const runLocally = (store: EventStoreService, write: ForwardedWrite): Effect.Effect<ForwardedResult, AppendError> => {
  switch (write.op) {
    case "append":
      return Effect.map(store.append(write.stream, write.expectedVersion, write.events), (r) => ({ ...r }))
    case "delete":
      return Effect.map(store.deleteStream(write.stream, write.expectedVersion, write.hard), (r) => ({ ...r }))
    case "metadata":
      return Effect.map(
        store.setStreamMetadata(write.stream, write.expectedVersion, write.metadata, {
          ...(write.eventId !== undefined ? { eventId: write.eventId } : {}),
          ...(write.isJson !== undefined ? { isJson: write.isJson } : {})
        }),
        (r) => ({ ...r })
      )
    case "scavengePoint":
      return Effect.map(store.writeScavengePoint(write.effectiveNowMicros, write.threshold), (r) => ({ ...r }))
  }
}

/** Serves forwarded writes, and returns the node's store with its writes forwarded while it does not lead. */
export const make = (
  settings: ForwardingSettings,
  network: NetworkService,
  store: EventStoreService,
  leaderAddress: () => PeerAddress | undefined
): Effect.Effect<EventStoreService, never, Scope.Scope> =>
  Effect.gen(function* () {
    yield* network
      .serve({
        onRequest: (_from, bytes) => {
          const write = decodeWrite(bytes)
          if (write === undefined) return Effect.die("malformed forwarded write")
          return Effect.map(Effect.either(runLocally(store, write)), (outcome): Uint8Array =>
            encodeAnswer(
              outcome._tag === "Right" ? { ok: true, result: outcome.right } : { ok: false, error: outcome.left }
            )
          )
        },
        onChannel: (channel) => channel.close
      })
      .pipe(Effect.orDie)

    const unknownOutcome = (why: string) => new CommitTimeout({ message: `${why}: the write's outcome is unknown` })

    /** Until this node has committed `position` (the write's last record), bounded by the deadline. */
    const replicatedHere = (position: number, deadline: number): Effect.Effect<void, CommitTimeout> =>
      Effect.gen(function* () {
        while ((yield* store.committedPosition) <= position) {
          if ((yield* Clock.currentTimeMillis) >= deadline)
            return yield* unknownOutcome(`the leader wrote it at ${position}, but it did not replicate here in time`)
          yield* Effect.sleep(10)
        }
      })

    const forward = <A extends ForwardedResult>(
      write: ForwardedWrite,
      notLeader: NotLeader
    ): Effect.Effect<A, AppendError> =>
      Effect.gen(function* () {
        const leader = leaderAddress()
        if (leader === undefined) return yield* notLeader
        const deadline = (yield* Clock.currentTimeMillis) + settings.timeoutMs
        const reply = yield* Effect.either(network.request(leader, encodeWrite(write), settings.timeoutMs))
        if (reply._tag === "Left") {
          // Unreachable: nothing was sent. Timed out: it may have been written.
          if (reply.left._tag === "NetworkUnreachable")
            return yield* new NotLeader({ message: `the leader at ${leader} cannot be reached: ${reply.left.message}` })
          return yield* unknownOutcome(`the leader at ${leader} did not answer a forwarded write`)
        }
        const answer: Answer = decodeAnswer(reply.right)
        if (!answer.ok) return yield* Effect.fail(answer.error)
        if (answer.result.position >= 0) yield* replicatedHere(answer.result.position, deadline)
        return answer.result as unknown as A
      })

    const orForward = <A>(local: Effect.Effect<A, AppendError>, write: () => ForwardedWrite) =>
      Effect.catchIf(
        local,
        (e): e is NotLeader => e._tag === "NotLeader",
        (notLeader) => forward<A & ForwardedResult>(write(), notLeader)
      ) as Effect.Effect<A, AppendError>

    const forwarding: EventStoreService = {
      ...store,
      leaderOnly: store,
      // Its appends may go to the leader (an Effect): the callback form would skip that.
      appendThen: undefined,
      append: (stream, expectedVersion, events) =>
        orForward(store.append(stream, expectedVersion, events), () => ({
          op: "append",
          stream,
          expectedVersion,
          events
        })),
      deleteStream: (stream, expectedVersion, hard) =>
        orForward(store.deleteStream(stream, expectedVersion, hard), () => ({
          op: "delete",
          stream,
          expectedVersion,
          hard
        })),
      setStreamMetadata: (stream, expectedVersion, metadata, options) =>
        orForward(store.setStreamMetadata(stream, expectedVersion, metadata, options), () => ({
          op: "metadata",
          stream,
          expectedVersion,
          metadata,
          eventId: options?.eventId,
          isJson: options?.isJson
        })),
      writeScavengePoint: (effectiveNowMicros, threshold) =>
        orForward(store.writeScavengePoint(effectiveNowMicros, threshold), () => ({
          op: "scavengePoint",
          effectiveNowMicros,
          threshold
        }))
    }
    return forwarding
  })
