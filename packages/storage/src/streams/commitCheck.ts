/**
 * The expected-version decision for one append or delete (following the
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
 *
 * The decision is plain synchronous code over a `SyncCommitState` (the writer decides thousands of appends a
 * second from caches). A lookup the state cannot answer from memory throws `Miss` naming the query; the
 * caller loads it (one Effect) and decides again. `checkCommit` is that loop for states whose lookups are
 * Effects.
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

/** A fact the decision needs about the log. */
export type CommitQuery =
  | { readonly _tag: "LastEventNumber"; readonly stream: string }
  | { readonly _tag: "IsSoftDeleted"; readonly stream: string }
  | { readonly _tag: "StoredEventId"; readonly stream: string; readonly eventNumber: number }

/** Thrown by a `SyncCommitState` lookup that needs a read; never escapes the callers in this package. */
export class Miss {
  constructor(readonly query: CommitQuery) {}
}

/** What the decision needs to know, answered from memory (or by throwing `Miss`). */
export interface SyncCommitState {
  readonly lastEventNumber: (stream: string) => number
  readonly isSoftDeleted: (stream: string) => boolean
  /** The writer's cache of recently written event ids (always in memory). */
  readonly knownEvent: (eventId: string) => KnownEvent | undefined
  /** The id of the event stored at a number (undefined past the end). */
  readonly storedEventId: (stream: string, eventNumber: number) => string | undefined
}

const wev = (current: number): CommitDecision => ({ _tag: "WrongExpectedVersion", current })

export const decideCommit = (
  state: SyncCommitState,
  stream: string,
  expectedVersion: number,
  eventIds: ReadonlyArray<string>
): CommitDecision => {
  const current = state.lastEventNumber(stream)
  if (current === DeletedStreamNumber) return { _tag: "Deleted" }

  if (expectedVersion === ExpectedVersion.StreamExists) {
    if (state.isSoftDeleted(stream)) return { _tag: "Deleted" }
    if (current < 0 && state.lastEventNumber(metastreamOf(stream)) < 0) return wev(current)
  }

  if (expectedVersion === ExpectedVersion.Any || expectedVersion === ExpectedVersion.StreamExists) {
    let first = -1
    let last = -1
    for (let i = 0; i < eventIds.length; i++) {
      const known = state.knownEvent(eventIds[i]!)
      if (known === undefined || known.stream !== stream) {
        return i === 0 ? { _tag: "Ok", current, softDeleted: state.isSoftDeleted(stream) } : wev(current)
      }
      if (i === 0) first = known.eventNumber
      last = known.eventNumber
    }
    if (eventIds.length === 0) return { _tag: "Ok", current, softDeleted: state.isSoftDeleted(stream) }
    return { _tag: "Idempotent", first, last }
  }

  if (expectedVersion < current) {
    let eventNumber = expectedVersion
    for (const eventId of eventIds) {
      eventNumber += 1
      const known = state.knownEvent(eventId)
      if (known !== undefined && known.stream === stream && known.eventNumber === eventNumber) continue
      if (state.storedEventId(stream, eventNumber) === eventId) continue
      if (eventNumber !== expectedVersion + 1) return wev(current)
      if (expectedVersion === ExpectedVersion.NoStream && state.isSoftDeleted(stream))
        return { _tag: "Ok", current, softDeleted: true }
      return wev(current)
    }
    if (eventNumber === expectedVersion) return wev(current)
    return { _tag: "Idempotent", first: expectedVersion + 1, last: eventNumber }
  }

  if (expectedVersion > current) return wev(current)
  return { _tag: "Ok", current, softDeleted: state.isSoftDeleted(stream) }
}

/** Lookups as Effects (for callers without caches). */
export interface CommitState<E> {
  readonly lastEventNumber: (stream: string) => Effect.Effect<number, E>
  readonly isSoftDeleted: (stream: string) => Effect.Effect<boolean, E>
  readonly knownEvent: (eventId: string) => KnownEvent | undefined
  readonly storedEventId: (stream: string, eventNumber: number) => Effect.Effect<string | undefined, E>
}

const keyOf = (q: CommitQuery): string =>
  q._tag === "StoredEventId" ? `${q._tag}\u0000${q.stream}\u0000${q.eventNumber}` : `${q._tag}\u0000${q.stream}`

/** Decides with Effect lookups: answers each `Miss` once, memoized, and decides again. */
export const checkCommit = <E>(
  state: CommitState<E>,
  stream: string,
  expectedVersion: number,
  eventIds: ReadonlyArray<string>
): Effect.Effect<CommitDecision, E> => {
  const answers = new Map<string, unknown>()
  const recall = <A>(q: CommitQuery): A => {
    const key = keyOf(q)
    if (!answers.has(key)) throw new Miss(q)
    return answers.get(key) as A
  }
  const sync: SyncCommitState = {
    lastEventNumber: (s) => recall<number>({ _tag: "LastEventNumber", stream: s }),
    isSoftDeleted: (s) => recall<boolean>({ _tag: "IsSoftDeleted", stream: s }),
    knownEvent: state.knownEvent,
    storedEventId: (s, n) => recall<string | undefined>({ _tag: "StoredEventId", stream: s, eventNumber: n })
  }
  const load = (q: CommitQuery): Effect.Effect<unknown, E> =>
    q._tag === "LastEventNumber"
      ? state.lastEventNumber(q.stream)
      : q._tag === "IsSoftDeleted"
        ? state.isSoftDeleted(q.stream)
        : state.storedEventId(q.stream, q.eventNumber)
  const attempt: Effect.Effect<CommitDecision, E> = Effect.suspend(() => {
    try {
      return Effect.succeed(decideCommit(sync, stream, expectedVersion, eventIds))
    } catch (e) {
      if (!(e instanceof Miss)) throw e
      return Effect.flatMap(load(e.query), (answer) => {
        answers.set(keyOf(e.query), answer)
        return attempt
      })
    }
  })
  return attempt
}
