/**
 * The simulated operator: while the clients append, delete, change metadata and read, it now and then
 * starts a scavenge (random threshold −1/0/positive, 1–4 threads, a throttle, sometimes syncOnly), stops the
 * running one, asks whether one runs, or scans `$all` page by page while scavenges rewrite and merge chunks
 * under it. Crashes and disk faults hit it like everything else; the next lifetime's first start resumes a
 * stopped or cut-short run from its checkpoint.
 *
 * Every start first tells the model that a scavenge may run (`beginScavenging`: `$all` passes are then
 * relaxed); the checkers allow an event to vanish only if a scavenge point the node wrote let it go
 * (`isDiscardable`, scavengePoints.ts). The operator often waits seconds before acting (pacing.ts), so runs
 * stop and resume with the clock well past their point's EffectiveNow.
 * The final lifetime runs one scavenge to its end with faults paused (`finalScavenge`), then the restart
 * checkers verify everything again.
 */
import { Effect } from "effect"
import type { Prng } from "@vellum/platform"
import type { EventStoreService } from "@vellum/storage"
import type { StartScavengeOptions } from "@vellum/scavenge"
import { AllScan } from "./allChecks.js"
import { scanAll } from "./checkers.js"
import type { Auditor } from "./client.js"
import type { OpsTicker } from "./opsTicker.js"
import { operatorPause } from "./pacing.js"
import { noteRunInProgress } from "./scavengeClock.js"
import type { ScavengeOperatorOptions } from "./options.js"
import type { ScavengeControl } from "./scavengeControl.js"
import type { ScavengeFocus } from "./scavengeWorkload.js"
import type { Unexpected } from "./simStore.js"

export interface OperatorContext {
  readonly control: ScavengeControl
  readonly store: EventStoreService
  readonly auditor: Auditor
  readonly prng: Prng
  /** When it waits before acting (pacing.ts). */
  readonly pausePrng: Prng
  readonly options: ScavengeOperatorOptions
  /** No read fault is configured: a failed `$all` read is a bug, not the disk. */
  readonly readsReliable: boolean
  /** Steers writes to the streams a scavenge works on, and stops and resumes runs mid-way (scavengeWorkload.ts). */
  readonly focus: ScavengeFocus
}

export const randomStart = (prng: Prng): StartScavengeOptions => {
  const threads = prng.int(1, 4)
  return {
    threads,
    threshold: prng.pick([-1, 0, 0, 1, 3, 50]),
    // The API refuses a throttle below 100 with several threads.
    throttlePercent: threads > 1 ? 100 : prng.pick([100, 100, 50, 5]),
    syncOnly: prng.chance(0.15),
    startFromChunk: 0
  }
}

const describe = (o: StartScavengeOptions) =>
  `threads=${o.threads} threshold=${o.threshold} throttle=${o.throttlePercent} syncOnly=${o.syncOnly}`

/** One start, traced; the model first learns that a scavenge may run. */
const start = (ctx: OperatorContext, options: StartScavengeOptions) =>
  Effect.gen(function* () {
    ctx.auditor.model.beginScavenging()
    ctx.auditor.scavenges++
    const started = yield* ctx.focus.beforeStart(ctx.auditor.model)
    const answer = yield* ctx.control.start(options)
    ctx.auditor.trace(`operator scavenge start ${describe(options)} -> ${answer}`)
    ctx.auditor.coverage.hit(answer === "Started" ? "scavenge.start" : "scavenge.start.alreadyRunning")
    if (answer === "AlreadyRunning") yield* noteRunInProgress(ctx.auditor)
    yield* started(answer)
    return answer
  })

const stop = (ctx: OperatorContext) =>
  Effect.gen(function* () {
    const answer = yield* ctx.control.stop
    if (answer === "Stopped") yield* noteRunInProgress(ctx.auditor)
    ctx.auditor.coverage.hit(answer === "Stopped" ? "scavenge.stop" : "scavenge.stop.notRunning")
    ctx.auditor.trace(`operator scavenge stop -> ${answer}`)
    if (answer === "Stopped") yield* ctx.focus.stopped
    return answer
  })

/** A pass over `$all` while the clients and scavenges run; checks what it saw. */
const scan = (ctx: OperatorContext, ticker: OpsTicker) =>
  Effect.gen(function* () {
    const { auditor } = ctx
    const model = auditor.model
    // Events acknowledged before the pass began are durable and below the end the pass reads to.
    const before = model.log.length
    const pass = new AllScan(!model.mayHaveScavenged)
    const pageSize = ctx.prng.pick([32, 128, 512])
    const outcome = yield* Effect.either(scanAll(ctx.store, pass, pageSize, ticker.wait(1)))
    if (outcome._tag === "Left") {
      const why = `${outcome.left._tag}: ${outcome.left.message}`
      if (ctx.readsReliable)
        return auditor.fail(`$all scan during the run: a read failed with no read faults configured: ${why}`)
      return auditor.trace(`operator $all scan failed: ${why}`)
    }
    // A pass cut short by the end of the clients' work saw only part of the log; one whose scavenge points
    // did not read cannot tell what may be missing.
    const learned = yield* auditor.learnPoints
    const problem =
      outcome.right ?? (ticker.finished || !learned ? undefined : pass.missingFrom(model, model.log.slice(0, before)))
    auditor.trace(`operator $all scan page=${pageSize} -> ${problem === undefined ? "ok" : "FAILED"}`)
    auditor.coverage.hit("read.all.scan")
    if (problem !== undefined) auditor.fail(`$all scan during the run: ${problem}`)
  })

const act = (ctx: OperatorContext, ticker: OpsTicker): Effect.Effect<void, Unexpected> =>
  Effect.gen(function* () {
    const r = ctx.prng.next()
    if (r < 0.35) {
      const answer = yield* start(ctx, ctx.focus.adjustStart(randomStart(ctx.prng)))
      if (answer === "Started") yield* ctx.focus.episode({ start: (o) => start(ctx, o), stop: stop(ctx) }, ticker)
      return
    }
    if (r < 0.6) return yield* Effect.asVoid(stop(ctx))
    if (r < 0.7) {
      const running = yield* ctx.control.running
      return ctx.auditor.trace(`operator scavenge running=${running}`)
    }
    yield* scan(ctx, ticker)
  })

/** The operator of one lifetime: acts every few client operations until the clients are done. */
export const runOperator = (ctx: OperatorContext, ticker: OpsTicker): Effect.Effect<void> =>
  Effect.gen(function* () {
    const [low, high] = ctx.options.opsBetween
    const { auditor } = ctx
    while (!ticker.finished && auditor.failure === undefined) {
      yield* ticker.wait(ctx.prng.int(low, high))
      yield* operatorPause(ctx.pausePrng)
      if (ticker.finished || auditor.failure !== undefined) return
      const done = yield* Effect.either(act(ctx, ticker))
      if (done._tag === "Left") return auditor.fail(`operator: ${done.left.description}`)
    }
  })

/**
 * The last lifetime, faults paused: one scavenge (resuming any stopped run) runs to its end, and must end
 * well unless the disk is still full.
 */
export const finalScavenge = (ctx: OperatorContext, diskFull: boolean) =>
  Effect.gen(function* () {
    const { auditor, control } = ctx
    yield* start(ctx, { ...randomStart(ctx.prng), syncOnly: false })
    while (yield* control.running) yield* Effect.sleep(1)
    yield* ctx.focus.observe
    const result = yield* control.lastResult
    auditor.trace(`final scavenge -> ${result}`)
    if (result === "Success") auditor.coverage.hit("scavenge.final.success")
    if (result !== "Success" && !(result === "Errored" && diskFull))
      auditor.fail(`the final scavenge, faults paused, ended ${result}`)
  }).pipe(Effect.catchAll((e) => Effect.sync(() => ctx.auditor.fail(`final scavenge: ${e.description}`))))
