/**
 * The implementation's pure expected-version decision (packages/storage/src/streams/commitCheck.ts: the
 * synchronous `decideCommit` the writer uses, and `checkCommit`, its loop over Effect lookups) against the
 * model's transcription of the expected-version rules (`decideCommit` in ../src/model.ts), on
 * random stream states: streams and metastreams with events whose ids come from a small pool (so
 * duplicates, partial overlaps and ids of other streams are common), hard and soft deletion, and a
 * committed-event-id cache holding a random subset of what was written (the cache a restart leaves).
 *
 * The spec's worked examples are checked explicitly against both.
 */
import { describe, it } from "vitest"
import assert from "node:assert/strict"
import * as fc from "fast-check"
import { Effect } from "effect"
import {
  Miss,
  checkCommit,
  decideCommit as implDecideCommit,
  type CommitDecision,
  type CommitState,
  type SyncCommitState
} from "../../packages/storage/src/streams/commitCheck.js"
import * as M from "../../simulation/src/model.js"

const STREAMS = ["a", "b", "$$a", "$$b"] as const
const ORIGINALS = ["a", "b"] as const
const ID_POOL = ["e0", "e1", "e2", "e3", "e4", "e5"] as const

interface State {
  readonly events: ReadonlyMap<string, ReadonlyArray<string>>
  readonly hardDeleted: ReadonlySet<string>
  readonly softDeleted: ReadonlySet<string>
  readonly cache: ReadonlyMap<string, M.CachedEvent>
}

const stateArb: fc.Arbitrary<State> = fc
  .record({
    lists: fc.tuple(...STREAMS.map(() => fc.array(fc.constantFrom(...ID_POOL), { maxLength: 4 }))),
    hard: fc.subarray([...ORIGINALS]),
    soft: fc.subarray([...ORIGINALS]),
    /** Which written events the cache still holds, in which write order (later writes of an id win). */
    cacheOrder: fc.array(fc.nat(), { maxLength: 16 })
  })
  .map(({ lists, hard, soft, cacheOrder }) => {
    const events = new Map<string, Array<string>>(STREAMS.map((s, i) => [s, [...lists[i]!]]))
    // A soft-deleted stream has metadata ($tb = long.MaxValue), so its metastream has an event.
    for (const s of soft)
      if (events.get(M.metastreamOf(s))!.length === 0) events.get(M.metastreamOf(s))!.push("meta-tb")
    const written: Array<M.CachedEvent & { id: string }> = []
    for (const [stream, ids] of events) ids.forEach((id, eventNumber) => written.push({ id, stream, eventNumber }))
    const cache = new Map<string, M.CachedEvent>()
    for (const k of cacheOrder) {
      if (written.length === 0) break
      const w = written[k % written.length]!
      cache.set(w.id, { stream: w.stream, eventNumber: w.eventNumber })
    }
    return { events, hardDeleted: new Set(hard), softDeleted: new Set(soft), cache }
  })

const originalOf = (s: string) => (M.isMetastream(s) ? M.originalStreamOf(s) : s)

const viewOf = (st: State): M.CommitView => ({
  lastEventNumber: (s) => (st.hardDeleted.has(originalOf(s)) ? M.LongMax : (st.events.get(s)?.length ?? 0) - 1),
  isSoftDeleted: (s) => !M.isMetastream(s) && st.softDeleted.has(s),
  storedEventId: (s, n) => st.events.get(s)?.[n],
  cached: (id) => st.cache.get(id)
})

const commitStateOf = (st: State): CommitState<never> => {
  const view = viewOf(st)
  return {
    lastEventNumber: (s) => Effect.succeed(view.lastEventNumber(s)),
    isSoftDeleted: (s) => Effect.succeed(view.isSoftDeleted(s)),
    knownEvent: (id) => view.cached(id),
    storedEventId: (s, n) => Effect.succeed(view.storedEventId(s, n))
  }
}

/** The implementation's decision in the model's terms. */
const normalize = (d: CommitDecision): M.Decision =>
  d._tag === "Deleted"
    ? { _tag: "StreamDeleted" }
    : d._tag === "Ok"
      ? { _tag: "Ok", current: d.current, softDeleted: d.softDeleted }
      : d._tag === "Idempotent"
        ? { _tag: "Idempotent", first: d.first, last: d.last }
        : { _tag: "WrongExpectedVersion", current: d.current }

/**
 * The writer's synchronous state: lookups not yet "loaded" throw Miss, as a cold cache does; the caller
 * loads the fact and decides again (what the writer's planner does).
 */
const syncDecision = (st: State, stream: string, expected: number, ids: ReadonlyArray<string>): CommitDecision => {
  const view = viewOf(st)
  const loaded = new Set<string>()
  const need = (key: string, query: ConstructorParameters<typeof Miss>[0]) => {
    if (!loaded.has(key)) throw new Miss(query)
  }
  const state: SyncCommitState = {
    lastEventNumber: (s) => (need(`last ${s}`, { _tag: "LastEventNumber", stream: s }), view.lastEventNumber(s)),
    isSoftDeleted: (s) => (need(`soft ${s}`, { _tag: "IsSoftDeleted", stream: s }), view.isSoftDeleted(s)),
    knownEvent: (id) => view.cached(id),
    storedEventId: (s, n) => (
      need(`stored ${s} ${n}`, { _tag: "StoredEventId", stream: s, eventNumber: n }),
      view.storedEventId(s, n)
    )
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      return implDecideCommit(state, stream, expected, ids)
    } catch (e) {
      if (!(e instanceof Miss)) throw e
      const q = e.query
      loaded.add(
        q._tag === "LastEventNumber"
          ? `last ${q.stream}`
          : q._tag === "IsSoftDeleted"
            ? `soft ${q.stream}`
            : `stored ${q.stream} ${q.eventNumber}`
      )
    }
  }
  throw new Error("decideCommit keeps missing")
}

/** Both implementation entry points must agree; returns their decision in the model's terms. */
const implementation = (st: State, stream: string, expected: number, ids: ReadonlyArray<string>): M.Decision => {
  const viaEffect = normalize(Effect.runSync(checkCommit(commitStateOf(st), stream, expected, ids)))
  const viaSync = normalize(syncDecision(st, stream, expected, ids))
  assert.deepStrictEqual(viaSync, viaEffect, "decideCommit (with Miss reloads) and checkCommit disagree")
  return viaEffect
}

const expectedArb = fc.constantFrom(M.ExpectedAny, M.ExpectedNoStream, M.ExpectedStreamExists, 0, 1, 2, 3, 4, 5)

/** Batch ids: random from the pool (plus a never-written id), or a run of the stream's own ids. */
const requestArb = (st: State) =>
  fc.constantFrom(...STREAMS).chain((stream) => {
    const own = st.events.get(stream)!
    return fc.record({
      stream: fc.constant(stream),
      expected: fc.oneof(
        expectedArb,
        fc.integer({ min: -1, max: own.length }).map((n) => n)
      ),
      ids: fc.oneof(
        fc.array(fc.constantFrom(...ID_POOL, "fresh"), { maxLength: 4 }),
        fc.tuple(fc.nat(4), fc.integer({ min: 0, max: 4 })).map(([start, len]) => own.slice(start, start + len)),
        fc
          .tuple(fc.nat(4), fc.integer({ min: 1, max: 3 }))
          .map(([start, len]) => [...own.slice(start, start + len), "fresh"])
      )
    })
  })

describe("expected-version decision: checkCommit against the model", () => {
  it("agrees on random states (checkCommit and the writer's synchronous decideCommit)", () => {
    fc.assert(
      fc.property(
        stateArb.chain((st) => fc.tuple(fc.constant(st), requestArb(st))),
        ([st, req]) => {
          const model = M.decideCommit(viewOf(st), req.stream, req.expected, req.ids)
          const impl = implementation(st, req.stream, req.expected, req.ids)
          assert.deepStrictEqual(impl, model)
        }
      ),
      { numRuns: 5000 }
    )
  })

  describe("the spec's worked examples", () => {
    /** Both deciders on one state. */
    const both = (st: State, stream: string, expected: number, ids: ReadonlyArray<string>, want: M.Decision) => {
      assert.deepStrictEqual(M.decideCommit(viewOf(st), stream, expected, ids), want, "model")
      assert.deepStrictEqual(implementation(st, stream, expected, ids), want, "checkCommit")
    }
    const state = (
      events: Record<string, ReadonlyArray<string>>,
      opts: { soft?: Array<string>; hard?: Array<string>; cached?: boolean } = {}
    ): State => {
      const map = new Map<string, ReadonlyArray<string>>(Object.entries(events))
      const cache = new Map<string, M.CachedEvent>()
      if (opts.cached !== false)
        for (const [stream, ids] of map) ids.forEach((id, eventNumber) => cache.set(id, { stream, eventNumber }))
      return { events: map, hardDeleted: new Set(opts.hard ?? []), softDeleted: new Set(opts.soft ?? []), cache }
    }
    const wev = (current: number): M.Decision => ({ _tag: "WrongExpectedVersion", current })
    const idem = (first: number, last: number): M.Decision => ({ _tag: "Idempotent", first, last })
    const ok = (current: number, softDeleted = false): M.Decision => ({ _tag: "Ok", current, softDeleted })

    it("retries against e0..e5 (cur = 5)", () => {
      const st = state({ s: ["e0", "e1", "e2", "e3", "e4", "e5"] })
      both(st, "s", -1, ["e0"], idem(0, 0))
      both(st, "s", -2, ["e0"], idem(0, 0))
      both(st, "s", 5, ["e0"], ok(5))
      both(st, "s", 6, ["e0"], wev(5))
      both(st, "s", 4, ["e0"], wev(5))
      both(st, "s", -2, ["e1"], idem(1, 1))
    })

    it("a partial overlap that runs past the end is WEV", () => {
      const st = state({ s: ["e0", "e1"] })
      both(st, "s", -1, ["e0"], idem(0, 0))
      both(st, "s", 0, ["e1"], idem(1, 1))
      both(st, "s", -2, ["e0"], idem(0, 0))
      both(st, "s", -1, ["e0", "e1", "e2"], wev(1))
    })

    it("after a restart (empty cache) an Any retry is appended again, an explicit one stays idempotent", () => {
      const st = state({ s: ["e0", "e1"] }, { cached: false })
      both(st, "s", -2, ["e0"], ok(1))
      both(st, "s", -1, ["e0", "e1"], idem(0, 1))
    })

    it("StreamExists, hard and soft deletion", () => {
      both(state({}), "s", -4, ["x"], wev(-1))
      both(state({ $$s: ["m"] }), "s", -4, ["x"], ok(-1))
      both(state({ s: ["e0"] }, { hard: ["s"] }), "s", -2, ["x"], { _tag: "StreamDeleted" })
      both(state({ s: ["e0"] }, { hard: ["s"] }), "$$s", -1, ["x"], { _tag: "StreamDeleted" })
      const soft = state({ s: ["e0", "e1"], $$s: ["tb"] }, { soft: ["s"] })
      both(soft, "s", -4, ["x"], { _tag: "StreamDeleted" })
      both(soft, "s", -1, ["x"], ok(1, true))
      both(soft, "s", -2, ["x"], ok(1, true))
      both(soft, "s", 1, ["x"], ok(1, true))
      both(soft, "s", 0, ["x"], wev(1))
      both(soft, "s", 2, ["x"], wev(1))
    })

    it("empty batches", () => {
      const st = state({ s: ["e0"] })
      both(st, "s", -2, [], ok(0))
      both(st, "s", -1, [], wev(0))
      both(st, "s", 0, [], ok(0))
    })
  })
})
