/**
 * One scavenge run from its beginning to `Done`: choose the scavenge point —
 * the one a stopped run was working to, else a newer point some node wrote, else a new one (none with
 * `syncOnly`) — then run the phases from wherever the state's checkpoint says, committing a checkpoint as
 * each phase starts and as it progresses. A stop is an interruption: the uncommitted changes are dropped
 * and the next run resumes from the last checkpoint.
 */
import { Clock, Effect } from "effect"
import { assert, unreachable } from "@vellum/platform"
import { RecordKind, ScavengePointsStream, type EventStoreService } from "@vellum/storage"
import { accumulate } from "./phases/accumulate.js"
import { calculate } from "./phases/calculate.js"
import { clean } from "./phases/clean.js"
import { executeChunks } from "./phases/executeChunks.js"
import { executeIndex } from "./phases/executeIndex.js"
import { mergeChunks } from "./phases/mergeChunks.js"
import type { RunContext } from "./phases/RunContext.js"
import type { Checkpoint, ScavengePointInfo, StateAccess } from "./phases/StateAccess.js"
import { RunPhases } from "./Scavenger.js"

export interface BeginRequest {
  readonly syncOnly: boolean
  /** For a new scavenge point only. */
  readonly threshold: number
}

/** The stages of a run, in the order they run. */
const StageOrder: ReadonlyArray<Checkpoint["stage"]> = [...RunPhases, "Done"]

/** The newest scavenge point in the log, if any. */
export const latestScavengePoint = (store: EventStoreService) =>
  Effect.gen(function* () {
    const { readIndex, log } = store.engine
    const entries = yield* readIndex.liveEntries(ScavengePointsStream)
    const last = entries[entries.length - 1]
    if (last === undefined) return undefined
    const record = yield* log.readRecord(last.position, readIndex.committed())
    if (record === undefined || record.kind !== RecordKind.ScavengePoint) return undefined
    const info: ScavengePointInfo = {
      position: record.logPosition,
      number: record.number,
      effectiveNowMicros: record.effectiveNowMicros,
      threshold: record.threshold
    }
    return info
  })

/** Writes a new scavenge point now (it completes the active chunk) and returns it. */
const writeScavengePoint = (store: EventStoreService, threshold: number) =>
  Effect.gen(function* () {
    const nowMicros = (yield* Clock.currentTimeMillis) * 1000
    const written = yield* store.writeScavengePoint(nowMicros, threshold)
    const info: ScavengePointInfo = {
      position: written.position,
      number: written.number,
      effectiveNowMicros: nowMicros,
      threshold
    }
    return info
  })

/**
 * Runs every phase still to do for the state's checkpoint, or begins a new run. Answers false when there
 * was nothing to do (`syncOnly` with no newer point), true once the run reached `Done`.
 */
export const runScavenge = <E>(
  store: EventStoreService,
  state: StateAccess<E>,
  makeContext: (sp: ScavengePointInfo) => RunContext<E>,
  request: BeginRequest
) =>
  Effect.gen(function* () {
    const checkpoint = state.checkpoint()
    let resume: Checkpoint
    const resumed = checkpoint !== undefined && checkpoint.stage !== "Done"
    if (resumed) {
      // A stopped run continues to its point, whatever this request says.
      resume = checkpoint
    } else {
      const previous = checkpoint?.sp
      const latest = yield* latestScavengePoint(store)
      let sp: ScavengePointInfo
      if (latest !== undefined && (previous === undefined || previous.number < latest.number)) sp = latest
      else if (request.syncOnly) return false
      else sp = yield* writeScavengePoint(store, request.threshold)
      const chunkSize = store.engine.log.config.chunkSize
      // Chunks up to the previous point's were accumulated by earlier runs (a point ends its chunk).
      const doneLogicalChunk = previous === undefined ? undefined : Math.floor(previous.position / chunkSize)
      resume = { stage: "Accumulating", sp, doneLogicalChunk }
      yield* state.commit(resume)
    }
    const ctx = makeContext(resume.sp)
    // A resumed run cannot know whether the stopped one moved a discard point (even in accumulation, whose
    // committed chunks are not read again): it does the index work.
    if (resumed) ctx.totals.indexWork = true
    if (ctx.options.unsafeIgnoreHardDeletes) ctx.totals.indexWork = true
    yield* Effect.logInfo(
      `Scavenging to SP-${resume.sp.number}. Position: ${resume.sp.position}, EffectiveNow: ${resume.sp.effectiveNowMicros}, Threshold: ${resume.sp.threshold}; resuming at ${resume.stage}`
    )
    const sp = resume.sp
    const stages = RunPhases
    // A phase that ran out of order, or for another point, would work from a state it did not build.
    let at: Checkpoint["stage"] = resume.stage
    const enter = (next: Checkpoint) => {
      assert(StageOrder.indexOf(next.stage) >= StageOrder.indexOf(at), "Scavenger: phases run in order")
      assert(next.sp === sp, "Scavenger: one run works to one scavenge point")
      at = next.stage
      return state.commit(next)
    }
    for (const stage of stages.slice(stages.indexOf(resume.stage as (typeof stages)[number]))) {
      const resuming = stage === resume.stage
      yield* Effect.logInfo(`SP-${sp.number}: ${stage}${resuming && stage !== "Accumulating" ? " (resumed)" : ""}`)
      switch (stage) {
        case "Accumulating": {
          const done = resuming && resume.stage === "Accumulating" ? resume.doneLogicalChunk : undefined
          yield* accumulate(ctx, done === undefined ? 0 : done + 1)
          yield* enter({ stage: "Calculating", sp, doneStream: undefined })
          break
        }
        case "Calculating":
          yield* calculate(ctx, resuming && resume.stage === "Calculating" ? resume.doneStream : undefined)
          yield* enter({ stage: "ExecutingChunks", sp, doneLogicalChunk: undefined })
          break
        case "ExecutingChunks":
          yield* executeChunks(
            ctx,
            resuming && resume.stage === "ExecutingChunks" ? resume.doneLogicalChunk : undefined
          )
          yield* enter({ stage: ctx.options.disableMerging ? "ExecutingIndex" : "MergingChunks", sp })
          break
        case "MergingChunks":
          if (!ctx.options.disableMerging) yield* mergeChunks(ctx)
          yield* enter({ stage: "ExecutingIndex", sp })
          break
        case "ExecutingIndex":
          yield* executeIndex(ctx)
          yield* enter({ stage: "Cleaning", sp })
          break
        case "Cleaning":
          yield* clean(ctx)
          yield* enter({ stage: "Done", sp })
          break
        default:
          unreachable(stage)
      }
    }
    yield* Effect.logInfo(`SP-${sp.number}: Done`)
    return true
  })
