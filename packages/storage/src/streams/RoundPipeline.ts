/**
 * The clustered writer's pipeline: while written rounds wait for their quorum, the next rounds are planned
 * and written, and every round is committed and answered only once its own gate has passed, in log order.
 *
 * All rounds of one run share one RoundView, so a round is planned against committed state plus the
 * decisions of the rounds still waiting (expected versions, stream existence, deletes, metadata, event
 * ids), exactly as a round's later commands see its earlier ones. Nothing of a waiting round reaches the
 * read index before its gate passes. When a gate fails (the node stopped leading), that round's writes
 * are answered CommitTimeout (outcome unknown), every round after it wholly so — their decisions rested on
 * the uncertain one — and the view is dropped with them: a new leader may commit that tail or cut it.
 *
 * A run takes no more rounds once `maxRounds` wait, once a waiting round holds an epoch (a new term's
 * first state must be committed before clients are planned against it), while the node does not take
 * client writes, or once its view has served `maxViewRounds` rounds or remembered `maxViewIds` event ids
 * (the view grows with every round: the run drains and the next run starts a fresh one).
 */
import { Effect, Either, Fiber } from "effect"
import { CommitTimeout } from "../errors.js"
import type { Leadership } from "../replica/Leadership.js"
import type { RoundView, WriteError } from "./planner.js"

/** Rounds written and waiting for their quorum at once, at most. */
export const MAX_ROUNDS_IN_FLIGHT = 4
const MAX_VIEW_ROUNDS = 64
const MAX_VIEW_IDS = 32768

export interface PipelinedRound {
  /** The writer position before and after the round (equal: it wrote nothing). */
  readonly start: number
  readonly end: number
  readonly hasEpoch: boolean
}

export interface RoundPipelineParts<P, R extends PipelinedRound> {
  readonly leadership: Leadership
  readonly newView: () => RoundView
  /** Plans and writes a round; undefined when it is answered already (its write failed). */
  readonly writeRound: (batch: ReadonlyArray<P>, view: RoundView) => Effect.Effect<R | undefined>
  /** Indexes a committed round and answers it. */
  readonly finishRound: (round: R) => Effect.Effect<void>
  /** Answers a round whose own gate failed: its writes are uncertain. */
  readonly answerUncertain: (round: R, error: WriteError) => Effect.Effect<void>
  /** Answers every command of a round with `error`. */
  readonly answerAllWith: (round: R, error: WriteError) => Effect.Effect<void>
  /** The writer takes commands (it is not refusing them after a failed write). */
  readonly taking: () => boolean
  /** How many commands are queued. */
  readonly queued: () => number
  readonly takeNow: () => ReadonlyArray<P>
  /** Resolves once a command is queued (interruptible). */
  readonly commandsArrive: Effect.Effect<void>
  /** A round's commands have all been answered. */
  readonly release: (batch: ReadonlyArray<P>) => void
  /** A gate failed: the node stopped leading. */
  readonly onLost: () => void
}

interface Waiting<P, R> {
  readonly batch: ReadonlyArray<P>
  readonly round: R
  /** Its quorum wait; undefined for a round that wrote nothing (it waits only for the rounds before it). */
  readonly gate: Fiber.RuntimeFiber<Either.Either<void, CommitTimeout>> | undefined
}

const afterLost = new CommitTimeout({
  message:
    "an earlier write was not on a quorum when this node stopped leading: this one, planned after it, may still be committed, or not"
})

export const makeRoundPipeline =
  <P, R extends PipelinedRound>(parts: RoundPipelineParts<P, R>) =>
  (first: ReadonlyArray<P>): Effect.Effect<void> =>
    Effect.gen(function* () {
      const view = parts.newView()
      const waiting: Array<Waiting<P, R>> = []
      let viewRounds = 0
      const mayTakeRound = () =>
        waiting.length < MAX_ROUNDS_IN_FLIGHT &&
        viewRounds < MAX_VIEW_ROUNDS &&
        view.cachedIdCount() < MAX_VIEW_IDS &&
        parts.taking() &&
        parts.leadership.refusal() === undefined &&
        !waiting.some((w) => w.round.hasEpoch)

      let batch: ReadonlyArray<P> | undefined = first
      for (;;) {
        if (batch !== undefined) {
          const taken = batch
          batch = undefined
          viewRounds++
          const round = yield* parts.writeRound(taken, view)
          // A failed write is answered already, and the writer refuses from now on: the run drains.
          if (round !== undefined) {
            const gate =
              round.end > round.start
                ? yield* Effect.fork(Effect.either(parts.leadership.awaitGate(round.end)))
                : undefined
            waiting.push({ batch: taken, round, gate })
          } else parts.release(taken)
        }
        const head = waiting[0]
        if (head === undefined) return
        // A round that is committed already is answered first; else commands arriving meanwhile are written.
        if (head.gate !== undefined && head.gate.unsafePoll() === null && mayTakeRound()) {
          const next = yield* Effect.raceFirst(
            Effect.as(Fiber.await(head.gate), "head" as const),
            Effect.as(parts.commandsArrive, "commands" as const)
          )
          if (next === "commands") {
            if (parts.queued() > 0) batch = parts.takeNow()
            continue
          }
        }
        const passed = head.gate === undefined ? Either.right(undefined) : yield* Fiber.join(head.gate)
        const committed: Either.Either<void, WriteError> = Either.isLeft(passed)
          ? passed
          : head.round.end > head.round.start
            ? yield* Effect.either(parts.leadership.commitBefore(head.round.start))
            : Either.right(undefined)
        waiting.shift()
        if (Either.isRight(committed)) {
          yield* parts.finishRound(head.round)
          parts.release(head.batch)
          continue
        }
        yield* parts.answerUncertain(head.round, committed.left)
        parts.release(head.batch)
        for (const later of waiting) {
          if (later.gate !== undefined) yield* Fiber.interrupt(later.gate)
          yield* parts.answerAllWith(later.round, afterLost)
          parts.release(later.batch)
        }
        parts.onLost()
        return
      }
    })
