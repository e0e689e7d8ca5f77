/**
 * A scavenge judges `$maxAge` by its point's EffectiveNow, never by the clock. Random workloads (events
 * written at varied times, every kind of metadata the model handles) are written once; then the last
 * scavenge runs twice from copies of the same disk: once uninterrupted with the clock frozen at the point,
 * once with the clock moving on after every commit of the state (the first comes right after the point is
 * written, and each phase starts with one, so the clock moves between the point and every phase and while
 * phases progress), stopped at random commits, sometimes with a power loss, the clock moving on again
 * before each resume. Both must leave the same store (the log before the point, every stream read and `$all`
 * at the point's time and at the end, the index), and each must agree with the reference model at the
 * point's EffectiveNow. Runs: VELLUM_SCAVENGE_RUNS (default small, so the file stays within seconds).
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Effect } from "effect"
import { Prng, type MemoryDisk } from "@vellum/platform"
import { RecordKind, type LogRecord } from "@vellum/storage"
import { scavengeModel } from "./model/index.js"
import { checkRun, isEvent, isHistory, observe, sorted } from "./scavenger-check.js"
import { runWorkload, type RunOptions, type ScavengeAndCheck, type ScavengeStep } from "./scavenger-run.js"
import {
  closeNode,
  copyDisk,
  logRecords,
  openNode,
  scavenge,
  stopAfterCommit,
  type Node,
  type StateWrapper
} from "./scavenger-support.js"
import {
  ManualClock,
  METADATA,
  PROPERTY_TIMEOUT_MILLIS,
  propertyParameters,
  runQuietly,
  STREAMS,
  workloadArb,
  type Workload
} from "./scavenger-workload.js"

/** A stop of the moving-clock run, and what happens before it resumes. */
interface Stop {
  /** The run stops right after this commit of the state (counted from its start or resume). */
  readonly afterCommit: number
  /** A power loss follows the stop (else the node is closed); the seed of the crash. */
  readonly crashSeed: number | undefined
  /** Seconds the clock moves on before the resume. */
  readonly pauseSeconds: number
}

interface Plan {
  /** Seconds the clock moves on after each commit of the state, in turn (cycled). */
  readonly steps: ReadonlyArray<number>
  readonly stops: ReadonlyArray<Stop>
  readonly threads: number
}

/** Steps long enough to expire events the point did not (the workload's `$maxAge`s are 1 to 600 s). */
const seconds = fc.constantFrom(0, 2, 31, 61, 601, 3_600, 86_400)
const planArb: fc.Arbitrary<Plan> = fc.record({
  steps: fc.array(seconds, { minLength: 1, maxLength: 8 }),
  stops: fc.array(
    fc.record({
      afterCommit: fc.integer({ min: 1, max: 24 }),
      crashSeed: fc.option(fc.nat(), { nil: undefined }),
      pauseSeconds: seconds
    }),
    { maxLength: 3 }
  ),
  threads: fc.constantFrom(1, 2)
})

/** Moves `clock` on after every commit the state makes, by the plan's steps in turn; notes each in `trace`. */
const movingClock =
  (clock: ManualClock, plan: Plan, taken: { steps: number }, trace: Array<string>): StateWrapper =>
  (state) => ({
    ...state,
    commit: (checkpoint) =>
      Effect.map(state.commit(checkpoint), () => {
        const step = plan.steps[taken.steps++ % plan.steps.length]!
        clock.unsafeAdvance(step)
        trace.push(`${checkpoint.stage}+${step}s`)
      })
  })

type Point = Extract<LogRecord, { kind: typeof RecordKind.ScavengePoint }>

const lastPoint = (records: ReadonlyArray<LogRecord>): Point => {
  const point = records.filter((r) => r.kind === RecordKind.ScavengePoint).at(-1)
  if (point === undefined || point.kind !== RecordKind.ScavengePoint) throw new Error("no scavenge point written")
  return point
}

/**
 * A record as two runs from one disk must both have left it. Each run's node opened with an epoch of its own
 * ids, wrote its own `$scavengeStarted` (named by a random id), and its point has its own id.
 */
const withoutRandomIds = (r: LogRecord): ReadonlyArray<unknown> => {
  switch (r.kind) {
    case RecordKind.Epoch:
      return [{ ...r, epochId: "", leaderInstanceId: "" }]
    case RecordKind.ScavengePoint:
      return [{ ...r, eventId: "" }]
    case RecordKind.Event:
      return isHistory(r.stream) ? [] : [r]
    default:
      return [r]
  }
}

/** What a finished run left: the log before its point, reads and `$all` at each of `times`, the index. */
const outcome = (node: Node, records: ReadonlyArray<LogRecord>, names: ReadonlyArray<string>, times: Array<number>) =>
  Effect.gen(function* () {
    const point = lastPoint(records)
    const before = (r: { readonly logPosition: number }) => r.logPosition < point.logPosition
    const views = []
    for (const millis of times) {
      const view = yield* Effect.withClock(observe(node, names), new ManualClock(millis))
      views.push({ millis, reads: view.reads, all: view.all.filter((p) => p < point.logPosition) })
    }
    const index = new Map<string, number | undefined>()
    for (const r of records.filter(isEvent).filter((r) => before(r) && !isHistory(r.stream))) {
      const found = yield* node.store.engine.readIndex.eventAt(r.stream, r.eventNumber)
      index.set(`${r.stream}@${r.eventNumber}`, found?.logPosition)
    }
    const log = (yield* logRecords(node.store)).filter(before).flatMap(withoutRandomIds)
    return { point: withoutRandomIds(point), log, views, index }
  })

/** The last scavenge from a copy of the disk, uninterrupted, the clock frozen at the point's time. */
const frozenRun = (step: ScavengeStep, mem: MemoryDisk, threads: number) =>
  Effect.withClock(
    Effect.gen(function* () {
      const node = yield* openNode(mem, step.config, step.nodeOptions)
      expect((yield* scavenge(node, { threshold: step.threshold, threads })).result).toBe("Success")
      const written = step.written.copy()
      yield* written.sync(node.store)
      yield* checkRun({ ...step, node, written: written.records })
      return { node, written }
    }),
    new ManualClock(step.clock.unsafeCurrentTimeMillis())
  )

/** The last scavenge on the workload's own disk, the clock moving on and the run stopped as `plan` says. */
const movingRun = (step: ScavengeStep, plan: Plan, clock: ManualClock, trace: Array<string>) =>
  Effect.withClock(
    Effect.gen(function* () {
      const { mem } = step.node
      const sessions: ReadonlyArray<Stop | undefined> = [...plan.stops, undefined]
      const taken = { steps: 0 }
      for (const [i, stop] of sessions.entries()) {
        const stopping = stopAfterCommit(stop?.afterCommit ?? 0, { commits: 0 })
        const node = yield* openNode(mem, step.config, {
          ...step.nodeOptions,
          wrap: (state) => stopping(movingClock(clock, plan, taken, trace)(state))
        })
        // The first run writes the point; the others resume it (a resume ignores the request's threshold).
        const request = i === 0 ? { threshold: step.threshold } : { syncOnly: true }
        const { result } = yield* scavenge(node, { ...request, threads: plan.threads })
        if (result === "Success") return node
        expect(result, `run ${i} (${trace.join(", ")})`).toBe("Stopped")
        trace.push(`stop${stop?.crashSeed === undefined ? "" : " + crash"} +${stop?.pauseSeconds}s`)
        if (stop?.crashSeed === undefined) yield* closeNode(node)
        else mem.crash(new Prng(stop.crashSeed), "random")
        clock.unsafeAdvance(stop?.pauseSeconds ?? 0)
      }
      return yield* Effect.dieMessage("the last run has no stop")
    }),
    clock
  )

/** Whether the model would remove other records if the point's EffectiveNow were `millis` (the clock's end). */
const clockWouldMatter = (step: ScavengeStep, records: ReadonlyArray<LogRecord>, point: Point, millis: number) => {
  const keptAt = (effectiveNowMicros: number) =>
    sorted(
      scavengeModel({
        records,
        chunkSize: step.config.chunkSize,
        scavengePoint: { position: point.logPosition, effectiveNowMicros, threshold: point.threshold },
        ...(step.prior === undefined ? {} : { prior: step.prior }),
        unsafeIgnoreHardDeletes: step.unsafeIgnoreHardDeletes
      }).keptInLog
    ).join()
  return keptAt(point.effectiveNowMicros) !== keptAt(millis * 1000)
}

/** How many cases the clock's moves could have changed the outcome of, had the run judged by the clock. */
interface Tally {
  sensitive: number
}

/** The last scavenge of a workload: frozen and moving runs, each checked, their stores compared. */
const compareRuns =
  (plan: Plan, tally: Tally): ScavengeAndCheck =>
  (step) =>
    Effect.gen(function* () {
      const pointMillis = step.clock.unsafeCurrentTimeMillis()
      yield* closeNode(step.node)
      const frozen = yield* frozenRun(step, yield* copyDisk(step.node.mem), plan.threads)
      const clock = new ManualClock(pointMillis)
      const trace: Array<string> = []
      const node = yield* movingRun(step, plan, clock, trace)
      const written = step.written.copy()
      yield* written.sync(node.store)
      const point = lastPoint(written.records)
      expect(point.effectiveNowMicros, "the point takes the time it was written at").toBe(pointMillis * 1000)
      // Against the model at the point's EffectiveNow, reads compared with those before the run at that time.
      const checked = yield* Effect.withClock(
        checkRun({ ...step, node, written: written.records }),
        new ManualClock(pointMillis)
      )
      const names = [...step.before.reads.keys()]
      const times = [pointMillis, clock.unsafeCurrentTimeMillis()]
      const moved = yield* outcome(node, written.records, names, times)
      const expected = yield* outcome(frozen.node, frozen.written.records, names, times)
      const run = `the moving-clock run (${trace.join(", ")})`
      expect(moved.point, `${run}: its point`).toEqual(expected.point)
      expect(moved.log, `${run}: the log before the point`).toEqual(expected.log)
      expect(moved.index, `${run}: the index`).toEqual(expected.index)
      expect(moved.views, `${run}: reads and $all at the point's time and at the end`).toEqual(expected.views)
      yield* closeNode(frozen.node)
      if (clockWouldMatter(step, written.records, point, clock.unsafeCurrentTimeMillis())) tally.sensitive++
      return { node, state: checked.state }
    })

/**
 * A workload that ends with young events under `$maxAge`: a stream gets a `$maxAge` of 30 s or more and
 * events written `gap` seconds apart just before the point, so none has expired at the point and every
 * one would have after a moment of the moving clock (the random part may still delete or change it).
 */
const youngTail = fc.record({
  s: fc.nat(STREAMS.length - 1),
  m: fc.constantFrom(...METADATA.flatMap((m, i) => (/^\{"\$maxAge":(30|60|600)\}$/.test(m.text) ? [i] : []))),
  n: fc.integer({ min: 1, max: 3 }),
  gap: fc.constantFrom(1, 5, 20)
})
const withYoungTail = (workload: fc.Arbitrary<Workload>) =>
  fc.tuple(workload, youngTail).map(([w, { s: pick, m, n, gap }]): Workload => {
    // A hard-deleted stream takes no more events: the tail goes to one that was not, where there is one.
    const alive = STREAMS.flatMap((_, s) => (w.ops.some((o) => o.k === "hard" && o.s === s) ? [] : [s]))
    const s = alive.length === 0 ? pick : alive[pick % alive.length]!
    const append = { k: "append", s, n, size: 50 } as const
    return { ...w, ops: [...w.ops, { k: "meta", s, m }, append, { k: "advance", seconds: gap }, append] }
  })

/** Every chunk executed and merged, or chunks chosen by weight without merging (collision-free hashes only). */
const caseArb = fc.oneof(
  fc.record({
    options: fc.constant<RunOptions>({ disableMerging: false, rerun: false }),
    workload: withYoungTail(workloadArb([-1], fc.boolean()))
  }),
  fc.record({
    options: fc.constant<RunOptions>({ disableMerging: true, rerun: false }),
    workload: withYoungTail(workloadArb([0, 1, 3], fc.constant(false)))
  })
)

describe("a scavenge judges $maxAge by its point's EffectiveNow while the clock moves on", () => {
  it(
    "moved on between the point and every phase, stopped, crashed and resumed: the same store as a frozen run",
    async () => {
      const tally: Tally = { sensitive: 0 }
      await fc.assert(
        fc.asyncProperty(caseArb, planArb, ({ options, workload }, plan) =>
          runQuietly(runWorkload(workload, options, compareRuns(plan, tally)))
        ),
        propertyParameters(5)
      )
      // Nearly every case has events that the moves would have expired (the young tail); none would be vacuous.
      expect(tally.sensitive, "cases whose outcome the clock's moves could have changed").toBeGreaterThan(0)
    },
    PROPERTY_TIMEOUT_MILLIS
  )
})
