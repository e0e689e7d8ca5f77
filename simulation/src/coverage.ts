/**
 * Coverage marks, as TigerBeetle's simulator keeps them: every rule the simulator can exercise has a named
 * mark, and the code that exercises it counts a hit. A run's `Coverage` says how often each rule ran; a
 * batch adds its seeds' coverages up and reports them (`npm run sim -- --seeds N`), and the CI batch fails
 * when a mark it must reach (`reachedByCi`) never ran — a rule that never runs is a rule whose bugs only a
 * hand-written unit test can catch.
 *
 * The marks live in one table (`CoverageMarks`), by family, so a newcomer sees everything the simulator
 * claims to exercise in one place. A mark not in the table is a compile error.
 */

export interface MarkInfo {
  /** What ran, in a few words. */
  readonly what: string
  /** The CI batch (seeds 1..60 over HTTP) must reach it; false for marks only long runs are expected to hit. */
  readonly reachedByCi: boolean
}

const mark = (what: string, reachedByCi = true): MarkInfo => ({ what, reachedByCi })

/** Every mark, by family. Add a mark here, then `coverage.hit("...")` where the rule runs. */
export const CoverageMarks = {
  // ---- appends: every expected-version kind against every outcome ----
  "append.any.ok": mark("an append with ExpectedAny written"),
  "append.any.idempotent": mark("an append with ExpectedAny answered idempotently"),
  "append.any.wrongExpectedVersion": mark("an append with ExpectedAny refused (corrupted idempotency)", false),
  "append.any.streamDeleted": mark("an append with ExpectedAny to a deleted stream"),
  "append.noStream.ok": mark("an append with ExpectedNoStream written"),
  "append.noStream.idempotent": mark("an append with ExpectedNoStream answered idempotently"),
  "append.noStream.wrongExpectedVersion": mark("an append with ExpectedNoStream refused"),
  "append.noStream.streamDeleted": mark("an append with ExpectedNoStream to a deleted stream"),
  "append.streamExists.ok": mark("an append with ExpectedStreamExists written"),
  "append.streamExists.idempotent": mark("an append with ExpectedStreamExists answered idempotently"),
  "append.streamExists.wrongExpectedVersion": mark("an append with ExpectedStreamExists refused"),
  "append.streamExists.streamDeleted": mark("an append with ExpectedStreamExists to a deleted stream"),
  "append.exact.ok": mark("an append with an exact expected version written"),
  "append.exact.idempotent": mark("an append with an exact expected version answered idempotently"),
  "append.exact.wrongExpectedVersion": mark("an append with an exact expected version refused"),
  "append.exact.streamDeleted": mark("an append with an exact expected version to a deleted stream"),
  "append.recreatesSoftDeleted": mark("an append that recreated a soft-deleted stream"),
  "append.retry.same": mark("a retry resending exactly the previous append"),
  "append.indeterminate": mark("a write left indeterminate (error, refusal or crash)"),
  // ---- metadata ----
  "metadata.$maxCount": mark("metadata with $maxCount written"),
  "metadata.$tb": mark("metadata with $tb written"),
  "metadata.custom": mark("metadata with only custom keys written"),
  "metadata.invalidJson": mark("metadata that is not valid JSON written"),
  "metadata.notJson": mark("metadata flagged as not JSON written"),
  // ---- deletes ----
  "delete.soft.ok": mark("a soft delete written"),
  "delete.soft.refused": mark("a soft delete refused"),
  "delete.hard.ok": mark("a hard delete written"),
  "delete.hard.refused": mark("a hard delete refused"),
  // ---- reads ----
  "read.forward": mark("a forward stream read checked"),
  "read.backward": mark("a backward stream read checked"),
  "read.event": mark("a single-event read checked"),
  "read.noStream": mark("a read answered NoStream / 404"),
  "read.streamDeleted": mark("a read answered StreamDeleted / 410"),
  "read.truncatedByMaxCount": mark("a read that $maxCount hid events from"),
  "read.truncatedByTb": mark("a read that $tb hid events from"),
  "read.all.scan": mark("a $all scan checked while clients and scavenges run"),
  // ---- faults and restarts ----
  "crash.random": mark("a crash that kept a random subset of unsynced writes"),
  "crash.strict": mark("a crash that kept only synced writes"),
  "crash.tornWrite": mark("a crash that tore a write"),
  "restart.verified": mark("a restart whose recovered store the checkers verified"),
  "disk.full.healed": mark("a full disk freed and writes taken again without a restart"),
  "indeterminate.settledInRun": mark("an indeterminate write settled during the run"),
  // ---- scavenges ----
  "scavenge.start": mark("a scavenge started by the operator"),
  "scavenge.start.alreadyRunning": mark("a scavenge start refused while one runs"),
  "scavenge.stop": mark("a running scavenge stopped by the operator"),
  "scavenge.stop.notRunning": mark("a stop with no scavenge running"),
  "scavenge.final.success": mark("a final scavenge that ran to its end"),
  // ---- writes during a scavenge, interrupted and resumed runs (scavengeWorkload.ts) ----
  // "Past the point": to a stream with events before the run's scavenge point, after the point was written;
  // "running"/"stopped": a run was in progress / stopped mid-way for the whole write.
  "scavenge.pastPoint.append.running": mark("an append past the point while the run was in progress"),
  "scavenge.pastPoint.appendAfterLoosening": mark(
    "an append past the point after $maxCount was loosened past it, both before the run calculated"
  ),
  "scavenge.pastPoint.metadata.tighten.running": mark(
    "metadata tightening $maxCount or $tb past the point, run in progress"
  ),
  "scavenge.pastPoint.metadata.loosen.running": mark(
    "metadata loosening $maxCount or $tb past the point, run in progress"
  ),
  "scavenge.pastPoint.delete.soft.running": mark("a soft delete past the point while the run was in progress"),
  "scavenge.pastPoint.delete.hard.running": mark("a hard delete past the point while the run was in progress"),
  "scavenge.pastPoint.append.stopped": mark("an append past the point while the run was stopped mid-way"),
  "scavenge.pastPoint.metadata.stopped": mark("a metadata change past the point while the run was stopped mid-way"),
  "scavenge.pastPoint.delete.stopped": mark("a delete past the point while the run was stopped mid-way"),
  "scavenge.interrupted.stop.Accumulating": mark("a run stopped by the operator while accumulating"),
  "scavenge.interrupted.stop.Calculating": mark("a run stopped by the operator while calculating"),
  "scavenge.interrupted.stop.ExecutingChunks": mark("a run stopped by the operator while executing chunks"),
  "scavenge.interrupted.stop.MergingChunks": mark("a run stopped by the operator while merging chunks"),
  "scavenge.interrupted.stop.ExecutingIndex": mark("a run stopped by the operator while executing the index"),
  // Cleaning has no work of its own but two small state commits: its checkpoint shows only while those
  // wait on injected disk latency, a window stops and crashes rarely meet (seeds 1000..1199: 3 times; the
  // resume test in packages/scavenge stops a run at that checkpoint).
  "scavenge.interrupted.stop.Cleaning": mark("a run stopped by the operator while cleaning", false),
  "scavenge.interrupted.crash.Accumulating": mark("a run cut by a crash while accumulating"),
  "scavenge.interrupted.crash.Calculating": mark("a run cut by a crash while calculating"),
  "scavenge.interrupted.crash.ExecutingChunks": mark("a run cut by a crash while executing chunks"),
  "scavenge.interrupted.crash.MergingChunks": mark("a run cut by a crash while merging chunks"),
  "scavenge.interrupted.crash.ExecutingIndex": mark("a run cut by a crash while executing the index"),
  "scavenge.interrupted.crash.Cleaning": mark("a run cut by a crash while cleaning", false),
  "scavenge.resumed.completed": mark("a stopped or cut-short run resumed and completed"),
  "scavenge.resumed.afterCrash.completed": mark(
    "a run stopped or cut short before a crash, resumed after it, completed"
  ),
  // ---- disk faults that fired (faultMarks.ts) ----
  "fault.readError": mark("an injected read error"),
  "fault.writeError": mark("an injected write error"),
  "fault.syncError": mark("an injected sync error"),
  "fault.bitFlipOnRead": mark("a bit flipped in a read"),
  "fault.latency": mark("an injected disk latency"),
  "fault.diskFull": mark("a write refused for a full disk")
} as const satisfies Record<string, MarkInfo>

export type CoverageMark = keyof typeof CoverageMarks

export class Coverage {
  private readonly counts = new Map<CoverageMark, number>()

  hit(mark: CoverageMark, times = 1): void {
    this.counts.set(mark, (this.counts.get(mark) ?? 0) + times)
  }

  count(mark: CoverageMark): number {
    return this.counts.get(mark) ?? 0
  }

  /** Adds another run's counts to these. */
  add(other: Coverage): void {
    for (const [mark, n] of other.counts) this.hit(mark, n)
  }

  /** The marks the CI batch must reach that never ran. */
  missedByCi(): Array<CoverageMark> {
    return markNames().filter((m) => CoverageMarks[m].reachedByCi && this.count(m) === 0)
  }

  /** One line per mark, by family: count, name, what it is; a mark that never ran says so. */
  report(): string {
    const width = Math.max(...markNames().map((m) => m.length))
    return markNames()
      .map((m) => {
        const n = this.count(m)
        const flag = n > 0 ? "" : CoverageMarks[m].reachedByCi ? "  <- NEVER RAN" : "  (long runs only)"
        return `${String(n).padStart(8)}  ${m.padEnd(width)}  ${CoverageMarks[m].what}${flag}`
      })
      .join("\n")
  }
}

export const markNames = (): Array<CoverageMark> => Object.keys(CoverageMarks) as Array<CoverageMark>
