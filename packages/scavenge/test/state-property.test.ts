/**
 * Property: whatever sequence of transactions, rollbacks, power cuts in the middle of a commit (or of a
 * compaction, or of recovery itself), crashes and reopens happens, the scavenge state reads exactly like a
 * model that applies only the committed transactions, one after another. A commit cut short by power loss
 * is all-or-nothing: the reopened state is the model before it or after it, never a mixture.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Disk, MemoryDisk, Prng } from "@vellum/platform"
import { Effect, Exit } from "effect"
import {
  openScavengeState,
  type Checkpoint,
  type ChunkTimeRange,
  type MetastreamData,
  type OriginalStreamData,
  type ScavengeState,
  type StateTransaction
} from "../src/state/index.js"
import { cutDisk } from "./state-support.js"

const DIR = "/state"
const NAMES = ["a", "b", "c", "$sys", "ünï", "zz"]
const CHUNKS = [0, 1, 2, 3, 4, 5]
const sp = { position: 1000, number: 1, effectiveNowMicros: 123_456, threshold: 0 }

type Op =
  | { readonly k: "orig"; readonly name: string; readonly data: OriginalStreamData }
  | { readonly k: "meta"; readonly name: string; readonly data: MetastreamData }
  | { readonly k: "weight"; readonly chunk: number; readonly w: number }
  | { readonly k: "delWeights"; readonly from: number; readonly to: number }
  | { readonly k: "range"; readonly chunk: number; readonly range: ChunkTimeRange }
  | { readonly k: "clearMetas" }
  | { readonly k: "delSpent"; readonly includeArchived: boolean }

type Step =
  | { readonly k: "commit"; readonly ops: ReadonlyArray<Op>; readonly checkpoint: Checkpoint }
  | { readonly k: "rollback"; readonly ops: ReadonlyArray<Op> }
  | {
      readonly k: "cutCommit"
      readonly ops: ReadonlyArray<Op>
      readonly checkpoint: Checkpoint
      readonly budget: number
    }
  | { readonly k: "crash"; readonly strict: boolean; readonly recoveryBudget: number | undefined }
  | { readonly k: "reopen" }

const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined })
const name = fc.constantFrom(...NAMES)
const chunk = fc.constantFrom(...CHUNKS)
const original: fc.Arbitrary<OriginalStreamData> = fc.record({
  isTombstoned: fc.boolean(),
  maxAgeSeconds: opt(fc.nat()),
  maxCount: opt(fc.nat()),
  truncateBefore: opt(fc.oneof(fc.nat(), fc.constant(2 ** 63))),
  discardPoint: fc.nat(),
  maybeDiscardPoint: fc.nat(),
  status: fc.constantFrom("Active", "Archived", "Spent")
})
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("orig" as const), name, data: original }), weight: 5 },
  {
    arbitrary: fc.record({
      k: fc.constant("meta" as const),
      name: name.map((n) => `$$${n}`),
      data: fc.record({ isTombstoned: fc.boolean(), discardPoint: fc.nat() })
    }),
    weight: 3
  },
  { arbitrary: fc.record({ k: fc.constant("weight" as const), chunk, w: fc.integer({ min: 0, max: 4 }) }), weight: 4 },
  { arbitrary: fc.record({ k: fc.constant("delWeights" as const), from: chunk, to: chunk }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("range" as const),
      chunk,
      range: fc.record({ minMicros: fc.integer(), maxMicros: fc.integer() })
    }),
    weight: 2
  },
  { arbitrary: fc.constant({ k: "clearMetas" as const }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("delSpent" as const), includeArchived: fc.boolean() }), weight: 1 }
)
const ops = fc.array(op, { maxLength: 12 })
const checkpoint: fc.Arbitrary<Checkpoint> = fc.oneof(
  fc.record({ stage: fc.constant("Accumulating" as const), sp: fc.constant(sp), doneLogicalChunk: opt(fc.nat(100)) }),
  fc.record({ stage: fc.constant("Calculating" as const), sp: fc.constant(sp), doneStream: opt(name) }),
  fc.record({
    stage: fc.constant("ExecutingChunks" as const),
    sp: fc.constant(sp),
    doneLogicalChunk: opt(fc.nat(100))
  }),
  fc.record({
    stage: fc.constantFrom("MergingChunks" as const, "ExecutingIndex" as const, "Cleaning" as const, "Done" as const),
    sp: fc.constant(sp)
  })
)
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("commit" as const), ops, checkpoint }), weight: 6 },
  { arbitrary: fc.record({ k: fc.constant("rollback" as const), ops }), weight: 1 },
  { arbitrary: fc.record({ k: fc.constant("cutCommit" as const), ops, checkpoint, budget: fc.nat(9) }), weight: 3 },
  {
    arbitrary: fc.record({ k: fc.constant("crash" as const), strict: fc.boolean(), recoveryBudget: opt(fc.nat(4)) }),
    weight: 2
  },
  { arbitrary: fc.constant({ k: "reopen" as const }), weight: 1 }
)

/** The committed state as plain Maps; ops applied one after another. */
interface Model {
  readonly checkpoint: Checkpoint | undefined
  readonly originals: Map<string, OriginalStreamData>
  readonly metas: Map<string, MetastreamData>
  readonly weights: Map<number, number>
  readonly ranges: Map<number, ChunkTimeRange>
}

const emptyModel = (): Model => ({
  checkpoint: undefined,
  originals: new Map(),
  metas: new Map(),
  weights: new Map(),
  ranges: new Map()
})

const applyModel = (m: Model, list: ReadonlyArray<Op>, cp: Checkpoint): Model => {
  const next: Model = {
    checkpoint: cp,
    originals: new Map(m.originals),
    metas: new Map(m.metas),
    weights: new Map(m.weights),
    ranges: new Map(m.ranges)
  }
  for (const o of list) {
    if (o.k === "orig") next.originals.set(o.name, o.data)
    else if (o.k === "meta") next.metas.set(o.name, o.data)
    else if (o.k === "weight") next.weights.set(o.chunk, (next.weights.get(o.chunk) ?? 0) + o.w)
    else if (o.k === "delWeights")
      for (const c of [...next.weights.keys()]) {
        if (c >= o.from && c <= o.to) next.weights.delete(c)
      }
    else if (o.k === "range") next.ranges.set(o.chunk, o.range)
    else if (o.k === "clearMetas") next.metas.clear()
    else
      for (const [n, d] of [...next.originals]) {
        if (d.status === "Spent" || (o.includeArchived && d.status === "Archived")) next.originals.delete(n)
      }
  }
  return next
}

const applyTx = (tx: StateTransaction, list: ReadonlyArray<Op>): void => {
  for (const o of list) {
    if (o.k === "orig") tx.setOriginalStream(o.name, o.data)
    else if (o.k === "meta") tx.setMetastream(o.name, o.data)
    else if (o.k === "weight") tx.addChunkWeight(o.chunk, o.w)
    else if (o.k === "delWeights") tx.deleteChunkWeights(o.from, o.to)
    else if (o.k === "range") tx.setChunkTimeRange(o.chunk, o.range)
    else if (o.k === "clearMetas") tx.deleteAllMetastreams()
    else tx.deleteSpentStreams(o.includeArchived)
  }
}

const viewModel = (m: Model) => ({
  checkpoint: m.checkpoint,
  originals: NAMES.map((n) => m.originals.get(n)),
  metas: NAMES.map((n) => m.metas.get(`$$${n}`)),
  weights: [...m.weights].sort((a, b) => a[0] - b[0]).map(([logicalChunk, weight]) => ({ logicalChunk, weight })),
  ranges: CHUNKS.map((c) => m.ranges.get(c)),
  active: [...m.originals]
    .filter(([, d]) => d.status === "Active")
    .map(([n]) => n)
    .sort(),
  sizes: [m.originals.size, m.metas.size, m.weights.size, m.ranges.size]
})

const viewState = (s: ScavengeState) =>
  Effect.runSync(
    Effect.gen(function* () {
      const counts = s.counts()
      const first = yield* s.activeStreams(undefined, 2)
      const rest = yield* s.activeStreams(first.at(-1)?.[0], 100)
      return {
        checkpoint: s.checkpoint(),
        originals: yield* Effect.forEach(NAMES, (n) => s.originalStream(n)),
        metas: yield* Effect.forEach(NAMES, (n) => s.metastream(`$$${n}`)),
        weights: s.allChunkWeights(),
        ranges: CHUNKS.map((c) => s.chunkTimeRange(c)),
        active: [...first, ...rest].map(([n]) => n),
        sizes: [counts.originalStreams, counts.metastreams, counts.chunkWeights, counts.chunkTimeRanges]
      }
    })
  )

const sameView = (a: unknown, b: unknown): boolean => {
  try {
    expect(a).toEqual(b)
    return true
  } catch {
    return false
  }
}

const runCase = (
  steps: ReadonlyArray<Step>,
  seed: number,
  pageSize: number,
  compactAfterBytes: number,
  cacheBytes: number
): void => {
  const mem = new MemoryDisk()
  const prng = new Prng(seed)
  const cut = { used: 0, budget: Infinity }
  const disk = cutDisk(mem.service, cut)
  const open = () =>
    Effect.runSync(
      Effect.provideService(openScavengeState(DIR, { pageSize, cacheBytes, compactAfterBytes }), Disk, disk)
    )
  const commit = (s: ScavengeState, list: ReadonlyArray<Op>, cp: Checkpoint) =>
    Effect.runSyncExit(
      s.transaction((tx) =>
        Effect.suspend(() => {
          applyTx(tx, list)
          return tx.commit(cp)
        })
      )
    )
  const crashAndReopen = (strict: boolean) => {
    mem.crash(prng, strict ? "strict" : "random")
    cut.budget = Infinity
    return open()
  }

  let model = emptyModel()
  let state = open()
  for (const [i, s] of steps.entries()) {
    const where = `step ${i} (${s.k})`
    if (s.k === "commit") {
      expect(Exit.isSuccess(commit(state, s.ops, s.checkpoint)), where).toBe(true)
      model = applyModel(model, s.ops, s.checkpoint)
    } else if (s.k === "rollback") {
      const exit = Effect.runSyncExit(
        state.transaction((tx) =>
          Effect.zipRight(
            Effect.sync(() => applyTx(tx, s.ops)),
            Effect.fail("stop")
          )
        )
      )
      expect(Exit.isFailure(exit), where).toBe(true)
    } else if (s.k === "cutCommit") {
      cut.budget = cut.used + s.budget
      const exit = commit(state, s.ops, s.checkpoint)
      const after = applyModel(model, s.ops, s.checkpoint)
      state = crashAndReopen(false)
      const seen = viewState(state)
      if (Exit.isSuccess(exit)) expect(seen, where).toEqual(viewModel(after))
      else expect([viewModel(model), viewModel(after)], where).toContainEqual(seen)
      if (sameView(seen, viewModel(after))) model = after
    } else if (s.k === "crash") {
      mem.crash(prng, s.strict ? "strict" : "random")
      if (s.recoveryBudget !== undefined) {
        // Power fails again while recovery cuts the torn tail.
        cut.budget = cut.used + s.recoveryBudget
        Effect.runSyncExit(
          Effect.provideService(openScavengeState(DIR, { pageSize, cacheBytes, compactAfterBytes }), Disk, disk)
        )
      }
      state = crashAndReopen(s.strict)
    } else {
      Effect.runSync(state.close)
      state = open()
    }
    expect(viewState(state), where).toEqual(viewModel(model))
  }
}

describe("scavenge state: model property", () => {
  it("reads equal a model of the committed transactions, across rollbacks, power cuts, crashes and reopens", () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom(64, 512),
        fc.constantFrom(1, 700, 1 << 20),
        // 0: every commit with stream rows compacts; 2 KiB: pages come and go from the cache; 1 MiB: all resident.
        fc.constantFrom(0, 2048, 1 << 20),
        (steps, seed, pageSize, compactAfterBytes, cacheBytes) =>
          runCase(steps, seed, pageSize, compactAfterBytes, cacheBytes)
      ),
      { numRuns: 300 }
    )
  })
})
