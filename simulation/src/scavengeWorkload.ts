/**
 * Writes during a scavenge. A run works on the streams that had events before its scavenge point; writes
 * to those streams after the point — appends, metadata that tightens or loosens `$maxCount`/`$tb`, soft and
 * hard deletes — must not change what the run removes, whether the run is in progress, stopped mid-way
 * (by the operator, an error or a crash) or resumed. Left to chance, scavenges on the simulator's small
 * logs finish between two operator actions, so such writes were rare. The focus makes them deliberate:
 *
 * - while a run is past its point (the state's checkpoint names a phase: the point is in the log before the
 *   first checkpoint), it steers about half of each client's operations to writes on those streams
 *   (`WriteFocus`, asked by every client before it picks its next operation);
 * - the operator's starts are sometimes throttled (a throttled run rests on the simulated clock while the
 *   clients work), and sometimes followed by an episode: wait for a chosen phase, stop the run there, let
 *   the clients write to its streams while it is stopped, then resume it — or leave it stopped for the
 *   next lifetime (so a crash comes between the stop and the resume);
 * - it names the phase every interrupted run was in (stopped by the operator, or cut by a crash) and
 *   counts the resumed runs that completed.
 *
 * What may vanish is judged by the checkers as for every other write (`StoreModel.isDiscardable`).
 * The phase and the run come from the node's Scavenger service (the checkpoint is not in the HTTP API),
 * as the checkers read the store directly; the operator still starts and stops runs over HTTP.
 */
import { Duration, Effect } from "effect"
import type { Prng } from "@vellum/platform"
import { RunPhases, type ScavengerService, type StartScavengeOptions } from "@vellum/scavenge"
import { indentedJson, type Auditor, type SteeredWrite, type WriteFocus } from "./client.js"
import type { CoverageMark } from "./coverage.js"
import { LongMax, metastreamOf, type StoreModel } from "./model.js"
import type { OpsTicker } from "./opsTicker.js"
import type { StartAnswer, StopAnswer } from "./scavengeControl.js"
import type { ObservedWrite, Unexpected } from "./simStore.js"

/** The phases a run goes through, in order (the checkpoint's stages, `Done` aside). */
const Phases = RunPhases
type Phase = (typeof Phases)[number]

const isPhase = (stage: string | undefined): stage is Phase => Phases.includes(stage as Phase)

/** No run past its point; a run in progress past its point; a run stopped mid-way (it resumes at the next start). */
type RunState = "idle" | "running" | "stopped"

/** What an episode needs from the operator: its own start and stop, so the model and the marks follow. */
export interface EpisodeOperator {
  readonly start: (options: StartScavengeOptions) => Effect.Effect<StartAnswer, Unexpected>
  readonly stop: Effect.Effect<StopAnswer, Unexpected>
}

export class ScavengeFocus implements WriteFocus {
  private scavenger: ScavengerService | undefined
  /** The client streams that had events when the run was started: the streams it works on. */
  private streamsBeforePoint: ReadonlySet<string> = new Set()
  /**
   * Streams whose `$maxCount` a steered write loosened before the run calculated, with the number of events
   * that may still be appended (3 per append) without hiding more than the point did.
   */
  private readonly loosenedRoom = new Map<string, number>()
  /** The steered writes of that pattern (loosen, then append), with the room a loosening gives. */
  private readonly loosenThenAppend = new WeakMap<SteeredWrite, number>()
  /** A start that resumes a stopped run: its id, to count it once it completes. */
  private resumedRun: { readonly id: string | undefined; readonly afterCrash: boolean } | undefined
  /** A crash came while a run was past its point: the run that resumes it resumes across a crash. */
  private crashedMidRun = false
  /** An episode wants the node to crash now, in the phase it waited for (the runner obliges). */
  crashWanted = false

  constructor(
    private readonly prng: Prng,
    private readonly auditor: Auditor,
    /** Every client's streams. */
    private readonly clientStreams: ReadonlyArray<string>
  ) {}

  /** Each lifetime's node: its Scavenger service. */
  attach(scavenger: ScavengerService): void {
    this.scavenger = scavenger
  }

  /** Where runs stand now, and the phase (counts a resumed run that has completed since the last look). */
  private readonly look: Effect.Effect<{ readonly run: RunState; readonly phase: Phase | undefined }> = Effect.suspend(
    () => {
      const scavenger = this.scavenger
      if (scavenger === undefined) return Effect.succeed({ run: "idle" as const, phase: undefined })
      return Effect.gen(this, function* () {
        const current = yield* scavenger.current
        const stage = yield* scavenger.checkpointStage
        yield* this.noteCompletion(current?.scavengeId)
        if (!isPhase(stage)) return { run: "idle" as const, phase: undefined }
        return { run: current === undefined ? ("stopped" as const) : ("running" as const), phase: stage }
      })
    }
  )

  /** A resumed run that is no longer the current one: did it complete? */
  private noteCompletion(currentId: string | undefined) {
    return Effect.gen(this, function* () {
      const resumed = this.resumedRun
      if (resumed === undefined || this.scavenger === undefined) return
      if (currentId !== undefined && currentId === resumed.id) return
      this.resumedRun = undefined
      const last = yield* this.scavenger.last
      if (last.result !== "Success" || (resumed.id !== undefined && last.scavengeId !== resumed.id)) return
      this.hit("scavenge.resumed.completed")
      if (resumed.afterCrash) this.hit("scavenge.resumed.afterCrash.completed")
    })
  }

  /** Looks at the runs now (a resumed run that completed since is counted). */
  readonly observe: Effect.Effect<void> = Effect.suspend(() => Effect.asVoid(this.look))

  private hit(mark: CoverageMark): void {
    this.auditor.coverage.hit(mark)
    this.auditor.trace(`focus ${mark}`)
  }

  // ---- the clients' side ----

  steer(streams: ReadonlyArray<string>, model: StoreModel): Effect.Effect<SteeredWrite | undefined> {
    return Effect.gen(this, function* () {
      const { run, phase } = yield* this.look
      if (run === "idle") return undefined
      const candidates = streams.filter((s) => this.streamsBeforePoint.has(s) && !model.isHardDeleted(s))
      if (candidates.length === 0) return undefined
      const patterned = this.loosenThenAppendOn(candidates, phase, model, run)
      if (patterned !== undefined || !this.prng.chance(0.5)) return patterned
      const stream = this.prng.pick(candidates)
      const r = this.prng.next()
      if (r < 0.55) return { stream, kind: "append", during: run }
      if (r < 0.85) {
        const key = this.prng.pick(["$maxCount", "$tb"] as const)
        const change = this.metadataChange(stream, model, this.prng.int(1, 4), key, this.prng.chance(0.5))
        return { stream, kind: "metadata", during: run, ...change }
      }
      return { stream, kind: r < 0.97 ? "softDelete" : "hardDelete", during: run }
    })
  }

  /**
   * Before the run calculated, a stream with `$maxCount` gets it loosened by k, then appends of up to k
   * events: every state since hides no more than the point did, while the stream's last event now is past
   * its last event at the point — a run that counted `$maxCount` from the former would remove events no
   * state hid. Such a stream gets every steered write until its room is used up.
   */
  private loosenThenAppendOn(
    candidates: ReadonlyArray<string>,
    phase: Phase | undefined,
    model: StoreModel,
    run: "running" | "stopped"
  ): SteeredWrite | undefined {
    if (phase !== "Accumulating" && phase !== "Calculating") return undefined
    const room = (s: string) => this.loosenedRoom.get(s) ?? (model.metadataOf(s).maxCount === undefined ? 0 : -1)
    const eligible = candidates.filter((s) => room(s) === -1 || room(s) >= 3)
    if (eligible.length === 0) return undefined
    const stream = this.prng.pick(eligible)
    if (room(stream) >= 3) {
      const write: SteeredWrite = { stream, kind: "append", during: run }
      this.loosenThenAppend.set(write, 0)
      return write
    }
    const k = this.prng.int(4, 9)
    const write: SteeredWrite = { stream, kind: "metadata", during: run, ...this.metadataChange(stream, model, k) }
    this.loosenThenAppend.set(write, k)
    return write
  }

  /**
   * New `$maxCount` or `$tb`, tighter or looser by `step` than what the stream has now (other keys dropped);
   * a step alone loosens `$maxCount`.
   */
  private metadataChange(
    stream: string,
    model: StoreModel,
    step: number,
    key: "$maxCount" | "$tb" = "$maxCount",
    tighten = false
  ) {
    const current = model.metadataOf(stream)
    const last = Math.max(0, model.lastEventNumber(stream))
    const change = tighten ? ("tighten" as const) : ("loosen" as const)
    if (key === "$maxCount") {
      const maxCount = Math.min(current.maxCount ?? last + 1, last + 1)
      const next = tighten ? Math.max(1, maxCount - step) : maxCount + step
      return {
        metadata: { data: Buffer.from(indentedJson({ $maxCount: next })), mark: "metadata.$maxCount" },
        change
      } as const
    }
    const tb = current.truncateBefore === undefined || current.truncateBefore === LongMax ? 0 : current.truncateBefore
    const next = tighten ? Math.min(tb + step, last + 1) : Math.max(0, tb - step)
    return { metadata: { data: Buffer.from(indentedJson({ $tb: next })), mark: "metadata.$tb" }, change } as const
  }

  acknowledged(write: SteeredWrite, outcome: ObservedWrite): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      // Counted when the run was in the same state from the write's start to its answer.
      const now = yield* this.look
      if (outcome._tag !== "Appended" || outcome.idempotent === true) return
      const room = this.loosenThenAppend.get(write)
      if (room !== undefined)
        this.loosenedRoom.set(
          write.stream,
          write.kind === "append" ? (this.loosenedRoom.get(write.stream) ?? 0) - 3 : room
        )
      if (now.run !== write.during) return
      const during = write.during
      switch (write.kind) {
        case "append":
          this.hit(`scavenge.pastPoint.append.${during}`)
          if (this.loosenThenAppend.has(write)) this.hit("scavenge.pastPoint.appendAfterLoosening")
          return
        case "metadata":
          return this.hit(
            during === "running"
              ? `scavenge.pastPoint.metadata.${write.change ?? "loosen"}.running`
              : "scavenge.pastPoint.metadata.stopped"
          )
        case "softDelete":
        case "hardDelete":
          return this.hit(
            during === "running"
              ? `scavenge.pastPoint.delete.${write.kind === "hardDelete" ? "hard" : "soft"}.running`
              : "scavenge.pastPoint.delete.stopped"
          )
      }
    })
  }

  // ---- the operator's side ----

  /** Sometimes a throttled run (one thread: the API refuses a throttle with several), so it lasts. */
  adjustStart(options: StartScavengeOptions): StartScavengeOptions {
    if (!this.prng.chance(0.3)) return options
    return { ...options, threads: 1, throttlePercent: this.prng.pick([5, 20, 50]) }
  }

  /**
   * Before a start: a start with no run stopped mid-way writes a new point after every write acknowledged
   * so far, so the streams with events now are the ones its run works on. Returns how to finish the start.
   */
  beforeStart(model: StoreModel): Effect.Effect<(answer: StartAnswer) => Effect.Effect<void>> {
    return Effect.gen(this, function* () {
      const stage = this.scavenger === undefined ? undefined : yield* this.scavenger.checkpointStage
      const resuming = isPhase(stage)
      const streams = new Set(
        this.clientStreams.filter((s) => model.lastEventNumber(s) >= 0 || model.lastEventNumber(metastreamOf(s)) >= 0)
      )
      return (answer: StartAnswer) =>
        Effect.gen(this, function* () {
          if (answer !== "Started" || this.scavenger === undefined) return
          if (!resuming) {
            this.streamsBeforePoint = streams
            this.loosenedRoom.clear()
            this.crashedMidRun = false
            return
          }
          const current = yield* this.scavenger.current
          this.resumedRun = { id: current?.scavengeId, afterCrash: this.crashedMidRun }
          this.crashedMidRun = false
          this.auditor.trace(`focus resuming the run stopped in ${stage}`)
          // A run that completed at once is counted now.
          if (current === undefined) yield* this.noteCompletion(undefined)
        })
    })
  }

  /** After the operator's stop was answered: the phase the run stopped in. */
  readonly stopped: Effect.Effect<void> = Effect.suspend(() => {
    const scavenger = this.scavenger
    if (scavenger === undefined) return Effect.void
    return Effect.map(scavenger.checkpointStage, (stage) => {
      if (isPhase(stage)) this.hit(`scavenge.interrupted.stop.${stage}`)
    })
  })

  /**
   * The node just crashed (its fibers will never run again): the phase of a run it cut short. Reads the dead
   * node's scavenger in memory — nothing of it runs any more, so this is a post-mortem, not a step.
   */
  crashed(): void {
    const scavenger = this.scavenger
    this.scavenger = undefined
    this.crashWanted = false
    if (scavenger === undefined) return
    const current = Effect.runSync(scavenger.current)
    const stage = Effect.runSync(scavenger.checkpointStage)
    if (!isPhase(stage)) return
    this.crashedMidRun = true
    this.resumedRun = undefined
    if (current !== undefined) this.hit(`scavenge.interrupted.crash.${stage}`)
  }

  /**
   * After a start the operator made: sometimes an episode — wait until the run reaches a chosen phase,
   * stop it there, let the clients write to its streams while it is stopped, then resume it (or leave it
   * stopped, for a later start or the next lifetime); or cut it there with a crash.
   */
  episode(operator: EpisodeOperator, ticker: OpsTicker): Effect.Effect<void, Unexpected> {
    return Effect.gen(this, function* () {
      const scavenger = this.scavenger
      if (scavenger === undefined || !this.prng.chance(0.6)) return
      const target = Phases.indexOf(this.prng.pick(EpisodeTargets))
      // Looks after every scheduler step at first (a phase with no I/O passes within a few), then every
      // simulated millisecond (a run resting or waiting on disk latency needs the clock, which a fiber
      // that only yields would hold still).
      for (let polls = 0; ; polls++) {
        if (ticker.finished || polls >= 4_000 || (yield* scavenger.current) === undefined) return
        const stage = yield* scavenger.checkpointStage
        if (isPhase(stage) && Phases.indexOf(stage) >= target) break
        yield* polls < 2_000 ? Effect.yieldNow() : Effect.sleep(Duration.millis(1))
      }
      if (this.prng.chance(0.35)) {
        this.crashWanted = true
        this.auditor.trace("focus crash wanted")
        return yield* Effect.never
      }
      const answer = yield* operator.stop
      if (answer !== "Stopped") return
      yield* ticker.wait(this.prng.int(2, 15))
      if (ticker.finished || this.prng.chance(0.25)) return
      yield* operator.start({ ...this.adjustStart(randomThreads(this.prng)), syncOnly: false })
    })
  }
}

/** The phase an episode waits for: the short ones (calculation, merging) twice as often. */
const EpisodeTargets: ReadonlyArray<Phase> = [...Phases, "Calculating", "MergingChunks"]

const randomThreads = (prng: Prng): StartScavengeOptions => ({
  threads: prng.int(1, 4),
  threshold: 0,
  throttlePercent: 100,
  syncOnly: false,
  startFromChunk: 0
})
