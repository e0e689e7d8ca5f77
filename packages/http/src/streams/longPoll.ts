/**
 * Long polling: a forward read that has nothing new waits until a commit touches the
 * stream (any commit, for `$all`) or the long poll expires, then runs once more and answers with that.
 * The commit subscription is taken before the first read, so a commit landing between the read and the
 * wait is not missed. Timers are Effect's (the simulator's clock in simulation).
 */
import { Duration, Effect, PubSub, Queue } from "effect"
import { EventStore, type CommitNotice } from "@vellum/storage"

export interface LongPoll<A, E, R> {
  /** The read, run once or twice. */
  readonly read: Effect.Effect<A, E, R>
  /** Whether a first result is "nothing new" and should wait. */
  readonly isEmpty: (result: A) => boolean
  /** Which commits wake the wait. */
  readonly wakesOn: (notice: CommitNotice) => boolean
  /** Seconds to wait at most; undefined: no long poll. */
  readonly seconds: number | undefined
}

export const withLongPoll = <A, E, R>(poll: LongPoll<A, E, R>): Effect.Effect<A, E, R | EventStore> => {
  const seconds = poll.seconds
  if (seconds === undefined) return poll.read
  return Effect.scoped(
    Effect.gen(function* () {
      const store = yield* EventStore
      const commits = yield* PubSub.subscribe(store.commits)
      const first = yield* poll.read
      if (!poll.isEmpty(first)) return first
      const wake = Effect.gen(function* () {
        while (!poll.wakesOn(yield* Queue.take(commits))) {
          /* keep waiting */
        }
      })
      yield* Effect.ignore(Effect.timeout(wake, Duration.seconds(seconds)))
      return yield* poll.read
    })
  )
}
