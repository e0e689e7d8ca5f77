/**
 * Leadership: whether a clustered store leads, and what a write round waits for while it does.
 *
 * A clustered store refuses client writes (NotLeader) until `lead` has written its epoch and that epoch
 * is committed (so the first client round plans against a state that holds the earlier terms' tail), and
 * again from `stopLeading` or the first failed quorum wait. A round waits for the cluster's gate, or for
 * the node to stop leading, whichever comes first: either way a stopped leader's round ends at once as
 * CommitTimeout (its records are in the log, so the outcome is unknown), never hangs.
 */
import { Deferred, Effect, Either } from "effect"
import { CommitTimeout, NotLeader } from "../errors.js"
import type { ReadError } from "../log/TransactionLog.js"
import type { CommitGate, NotLeading } from "./ReplicaLog.js"

interface Term {
  readonly gate: CommitGate
  readonly stopped: Deferred.Deferred<void>
  /** Its epoch is committed: client writes are taken. */
  ready: boolean
}

const notLeading: NotLeading = { _tag: "NotLeading" }

export class Leadership {
  private term: Term | undefined

  constructor(
    /** Indexes the log from the committed position up to a position (the tail of earlier terms). */
    private readonly commitThrough: (position: number) => Effect.Effect<void, ReadError>,
    readonly commitTimeoutMillis: number
  ) {}

  get leading(): boolean {
    return this.term !== undefined
  }

  /** Why a client write is refused now, or undefined when this node leads and takes writes. */
  refusal(): NotLeader | undefined {
    if (this.term?.ready === true) return undefined
    return new NotLeader({
      message:
        this.term === undefined
          ? "this node is not the leader of its cluster: writes go to the leader"
          : "this node is becoming the leader: writes are taken once its epoch is committed"
    })
  }

  start(gate: CommitGate): Effect.Effect<void> {
    return Effect.map(Deferred.make<void>(), (stopped) => {
      this.term = { gate, stopped, ready: false }
    })
  }

  /** The epoch of the term is committed: client writes are taken from now on. */
  ready(): void {
    if (this.term !== undefined) this.term.ready = true
  }

  readonly stop: Effect.Effect<void> = Effect.suspend(() => {
    const term = this.term
    this.term = undefined
    return term === undefined ? Effect.void : Deferred.succeed(term.stopped, undefined)
  })

  /**
   * A durable round ending at `end` waits for its quorum. Fails with CommitTimeout when the node stops
   * leading first (and then it stops leading for good: later rounds' gates fail at once). The caller
   * indexes, in log order, once the gate has passed (see `commitBefore`).
   */
  awaitGate(end: number): Effect.Effect<void, CommitTimeout> {
    return Effect.suspend(() => {
      const term = this.term
      if (term === undefined) return Effect.fail(this.lost())
      const stopped = Effect.as(Deferred.await(term.stopped), Either.left(notLeading))
      return Effect.flatMap(
        Effect.raceFirst(Effect.either(term.gate(end)), stopped),
        (outcome): Effect.Effect<void, CommitTimeout> => {
          if (Either.isRight(outcome)) return Effect.void
          if (this.term === term) this.term = undefined
          return Effect.fail(this.lost())
        }
      )
    })
  }

  /**
   * Indexes everything from the committed position up to `position`: after a round's gate passed, the tail of
   * earlier terms before the round (the round's own records are the writer's to index).
   */
  commitBefore(position: number): Effect.Effect<void, ReadError> {
    return this.commitThrough(position)
  }

  private lost(): CommitTimeout {
    return new CommitTimeout({
      message: "this node stopped leading before the write was on a quorum: it may still be committed, or not"
    })
  }
}
