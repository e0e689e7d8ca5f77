/** The reference model's expected-version rule, a pure function of what a commit can see (model.ts says why). */
import { ExpectedAny, ExpectedNoStream, ExpectedStreamExists, LongMax, metastreamOf } from "./names.js"

// ---------------------------------------------------------------------------------------------------
// Expected versions

export type Decision =
  | { readonly _tag: "Ok"; readonly current: number; readonly softDeleted: boolean }
  | { readonly _tag: "Idempotent"; readonly first: number; readonly last: number }
  | { readonly _tag: "WrongExpectedVersion"; readonly current: number }
  | { readonly _tag: "StreamDeleted" }

export interface CachedEvent {
  readonly stream: string
  readonly eventNumber: number
}

/** What the expected-version rule looks at. */
export interface CommitView {
  /** −1 when the stream has no events; LongMax when it (or, for a metastream, its stream) is hard-deleted. */
  readonly lastEventNumber: (stream: string) => number
  /** Metadata `$tb` is long.MaxValue (never true for a metastream). */
  readonly isSoftDeleted: (stream: string) => boolean
  /** The id of the event stored at that number (undefined past the end or when unknown). */
  readonly storedEventId: (stream: string, eventNumber: number) => string | undefined
  /** The writer's committed-event-id cache. */
  readonly cached: (eventId: string) => CachedEvent | undefined
}

const ok = (current: number, softDeleted: boolean): Decision => ({ _tag: "Ok", current, softDeleted })
const wev = (current: number): Decision => ({ _tag: "WrongExpectedVersion", current })
const deleted: Decision = { _tag: "StreamDeleted" }

/** The expected-version "order of checks", step by step. */
export const decideCommit = (
  view: CommitView,
  stream: string,
  expected: number,
  eventIds: ReadonlyArray<string>
): Decision => {
  const cur = view.lastEventNumber(stream)
  // 2. hard-deleted: StreamDeleted, whatever the expected version.
  if (cur === LongMax) return deleted
  // 4. StreamExists: soft-deleted → StreamDeleted; no events and no metadata → WEV; otherwise as Any.
  if (expected === ExpectedStreamExists) {
    if (view.isSoftDeleted(stream)) return deleted
    if (cur < 0 && view.lastEventNumber(metastreamOf(stream)) < 0) return wev(cur)
  }
  // 5. Any / StreamExists: idempotency through the committed-events cache.
  if (expected === ExpectedAny || expected === ExpectedStreamExists) {
    if (eventIds.length === 0) return ok(cur, view.isSoftDeleted(stream))
    const hits = eventIds.map((id) => {
      const hit = view.cached(id)
      return hit !== undefined && hit.stream === stream ? hit : undefined
    })
    const first = hits[0]
    if (first === undefined) return ok(cur, view.isSoftDeleted(stream))
    const last = hits[hits.length - 1]
    if (last === undefined || hits.some((h) => h === undefined)) return wev(cur) // CorruptedIdempotency
    return { _tag: "Idempotent", first: first.eventNumber, last: last.eventNumber }
  }
  // 6. N < cur (NoStream included): compare ids with the events stored at N+1, N+2, …
  if (expected < cur) {
    if (eventIds.length === 0) return wev(cur)
    for (let i = 0; i < eventIds.length; i++) {
      if (view.storedEventId(stream, expected + 1 + i) === eventIds[i]) continue
      if (i === 0 && expected === ExpectedNoStream && view.isSoftDeleted(stream)) return ok(cur, true)
      return wev(cur)
    }
    return { _tag: "Idempotent", first: expected + 1, last: expected + eventIds.length }
  }
  // 7. N > cur → WEV.   8. N == cur → Ok.
  if (expected > cur) return wev(cur)
  return ok(cur, view.isSoftDeleted(stream))
}
