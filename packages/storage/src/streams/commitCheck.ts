/**
 * The expected-version decision for one append or delete (spec/storage-and-cluster.md §3.2, following the
 * reference server's IndexWriter.CheckCommit case by case):
 *
 * - a hard-deleted stream: Deleted, whatever the expected version;
 * - StreamExists (-4): Deleted on a soft-deleted stream; WEV when the stream has no events and no metadata;
 *   otherwise as Any;
 * - Any (-2) / StreamExists: idempotency through the event-id cache — first id unknown → Ok; first known
 *   but a later one not → WEV (corrupted idempotency); all known → Idempotent with the original numbers;
 * - N < current (NoStream = -1 included): compare the ids with the events stored at N+1, N+2, … — all
 *   match → Idempotent; first mismatch → WEV, except NoStream on a soft-deleted stream → Ok (recreate);
 *   a later mismatch or running past the end → WEV; an empty batch → WEV;
 * - N > current → WEV; N == current → Ok.
 *
 * "Ok" carries whether the stream is soft-deleted, because then the append recreates it.
 */
import { Effect } from "effect"
import { DeletedStreamNumber, ExpectedVersion, metastreamOf } from "./names.js"

export type CommitDecision =
  | { readonly _tag: "Ok"; readonly current: number; readonly softDeleted: boolean }
  | { readonly _tag: "Idempotent"; readonly first: number; readonly last: number }
  | { readonly _tag: "WrongExpectedVersion"; readonly current: number }
  | { readonly _tag: "Deleted" }

export interface KnownEvent {
  readonly stream: string
  readonly eventNumber: number
}

/** What the decision needs to know about the log, including the writer's not-yet-indexed writes. */
export interface CommitState<E> {
  readonly lastEventNumber: (stream: string) => Effect.Effect<number, E>
  readonly isSoftDeleted: (stream: string) => Effect.Effect<boolean, E>
  /** The writer's cache of recently written event ids. */
  readonly knownEvent: (eventId: string) => KnownEvent | undefined
  /** The id of the event stored at a number (undefined past the end). */
  readonly storedEventId: (stream: string, eventNumber: number) => Effect.Effect<string | undefined, E>
}

export const checkCommit = <E>(
  state: CommitState<E>,
  stream: string,
  expectedVersion: number,
  eventIds: ReadonlyArray<string>
): Effect.Effect<CommitDecision, E> =>
  Effect.gen(function*() {
    const current = yield* state.lastEventNumber(stream)
    if (current === DeletedStreamNumber) return { _tag: "Deleted" } as const

    if (expectedVersion === ExpectedVersion.StreamExists) {
      if (yield* state.isSoftDeleted(stream)) return { _tag: "Deleted" } as const
      if (current < 0 && (yield* state.lastEventNumber(metastreamOf(stream))) < 0) {
        return { _tag: "WrongExpectedVersion", current } as const
      }
    }

    if (expectedVersion === ExpectedVersion.Any || expectedVersion === ExpectedVersion.StreamExists) {
      let first = -1
      let last = -1
      for (let i = 0; i < eventIds.length; i++) {
        const known = state.knownEvent(eventIds[i]!)
        if (known === undefined || known.stream !== stream) {
          return i === 0
            ? { _tag: "Ok", current, softDeleted: yield* state.isSoftDeleted(stream) } as const
            : { _tag: "WrongExpectedVersion", current } as const
        }
        if (i === 0) first = known.eventNumber
        last = known.eventNumber
      }
      if (eventIds.length === 0) return { _tag: "Ok", current, softDeleted: yield* state.isSoftDeleted(stream) } as const
      return { _tag: "Idempotent", first, last } as const
    }

    if (expectedVersion < current) {
      let eventNumber = expectedVersion
      for (const eventId of eventIds) {
        eventNumber += 1
        const known = state.knownEvent(eventId)
        if (known !== undefined && known.stream === stream && known.eventNumber === eventNumber) continue
        if ((yield* state.storedEventId(stream, eventNumber)) === eventId) continue
        if (eventNumber !== expectedVersion + 1) return { _tag: "WrongExpectedVersion", current } as const
        if (expectedVersion === ExpectedVersion.NoStream && (yield* state.isSoftDeleted(stream))) {
          return { _tag: "Ok", current, softDeleted: true } as const
        }
        return { _tag: "WrongExpectedVersion", current } as const
      }
      if (eventNumber === expectedVersion) return { _tag: "WrongExpectedVersion", current } as const
      return { _tag: "Idempotent", first: expectedVersion + 1, last: eventNumber } as const
    }

    if (expectedVersion > current) return { _tag: "WrongExpectedVersion", current } as const
    return { _tag: "Ok", current, softDeleted: yield* state.isSoftDeleted(stream) } as const
  })
