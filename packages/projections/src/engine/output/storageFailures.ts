/**
 * What the output writer does when the store refuses a read or an append: a failure that may pass (a disk
 * error, writes refused while the log recovers, a write whose outcome is unknown) is retried with backoff —
 * an append is retried with the same event ids and expected version, so one that did land answers as an
 * idempotent success; anything else ends the projection's run with a reason.
 */
import { Duration, Effect, Schedule } from "effect"
import type { AppendError, ReadFailure } from "@vellum/storage"
import type { OutputFault } from "../OutputWriter.js"

/** Retries at most this many times (the reference gives up after 12 attempts too). */
export const maxRetries = 12

/** Exponential backoff from 100 ms, each wait at most 10 s, jittered (Effect's Clock and Random). */
const backoff = Schedule.exponential(Duration.millis(100)).pipe(
  Schedule.union(Schedule.spaced(Duration.seconds(10))),
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(maxRetries))
)

export const outputFault = (reason: string): OutputFault => ({ _tag: "OutputFault", reason })

type StorageFailure = AppendError | ReadFailure

const isTransient = (error: StorageFailure): boolean =>
  error._tag === "DiskError" ||
  error._tag === "StorageFailed" ||
  error._tag === "WriteTimeout" ||
  error._tag === "CommitTimeout"

/** The reason a failure that is not retried (or no longer) gives the projection's fault. */
const reasonOf = (stream: string, error: StorageFailure, retried: boolean): string => {
  switch (error._tag) {
    case "WrongExpectedVersion":
      return `The '${stream}' stream has been written to from the outside. Expected Version: ${error.expectedVersion}, Current Version: ${error.currentVersion}.`
    case "StreamDeleted":
      return `Stream : ${stream} is deleted. Cannot emit events to it`
    case "NotLeader":
      return `This node stopped leading while writing to '${stream}' (${error.message}); the projection runs on the new leader.`
    default:
      return retried
        ? `Failed to write events to ${stream}. Retry limit of ${maxRetries} reached. Reason: ${error.message}`
        : `Failed to write events to ${stream}. Reason: ${error.message}`
  }
}

/** Runs a store call on behalf of `stream`, retrying what may pass, and turns the rest into a fault. */
export const withStorageRetry = <A, E extends StorageFailure>(
  stream: string,
  call: Effect.Effect<A, E>
): Effect.Effect<A, OutputFault> =>
  call.pipe(
    Effect.retry({ schedule: backoff, while: isTransient }),
    Effect.mapError((error) => outputFault(reasonOf(stream, error, isTransient(error))))
  )
