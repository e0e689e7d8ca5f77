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
  /** Which CI batch must reach it: the single-node one (runSeed) or the multi-node one (cluster/). */
  readonly batch: Batch
}

export type Batch = "single" | "cluster" | "autoScavenge" | "subscriptions" | "projections"

const mark = (what: string, reachedByCi = true): MarkInfo => ({ what, reachedByCi, batch: "single" })
const clusterMark = (what: string, reachedByCi = true): MarkInfo => ({ what, reachedByCi, batch: "cluster" })
const autoScavengeMark = (what: string, reachedByCi = true): MarkInfo => ({
  what,
  reachedByCi,
  batch: "autoScavenge"
})

const subsMark = (what: string, reachedByCi = true): MarkInfo => ({ what, reachedByCi, batch: "subscriptions" })
const projMark = (what: string, reachedByCi = true): MarkInfo => ({ what, reachedByCi, batch: "projections" })

/** Every mark, by family. Add a mark here, then `coverage.hit("...")` where the rule runs. */
export const CoverageMarks = {
  // ---- appends: every expected-version kind against every outcome ----
  "append.any.ok": mark("an append with ExpectedAny written"),
  "append.any.idempotent": mark("an append with ExpectedAny answered idempotently"),
  "append.any.wrongExpectedVersion": mark("an append with ExpectedAny refused (corrupted idempotency)"),
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
  "recovery.pastCheckpoint.kept": mark("an open kept acknowledged records past a stale writer checkpoint"),
  "recovery.tornTail.truncated": mark("an open cut a torn tail (bytes past the last whole write unit)"),
  "recovery.damage.refused": mark("an open refused damage to acknowledged data, naming chunk and position"),
  "disk.full.healed": mark("a full disk freed and writes taken again without a restart"),
  "indeterminate.settledInRun": mark("an indeterminate write settled during the run"),
  // ---- scavenges ----
  "scavenge.start": mark("a scavenge started by the operator"),
  "scavenge.start.alreadyRunning": mark("a scavenge start refused while one runs"),
  "scavenge.stop": mark("a running scavenge stopped by the operator"),
  "scavenge.stop.notRunning": mark("a stop with no scavenge running"),
  "scavenge.final.success": mark("a final scavenge that ran to its end"),
  // ---- retries (retries.ts): an earlier append sent again, wholly or in part ----
  "retry.same": mark("a retry resending exactly an earlier append"),
  "retry.prefix": mark("a retry of a prefix of an earlier append's events"),
  "retry.suffix": mark("a retry of a suffix of an earlier append's events"),
  "retry.middle": mark("a retry of a middle slice of an earlier append's events"),
  "retry.oldThenNew": mark("a retry of an earlier append's events followed by new ones"),
  "retry.newThenOld": mark("a retry of new events followed by an earlier append's"),
  "retry.reordered": mark("a retry of an earlier append's events in another order"),
  "retry.oneOldAmongNew": mark("a retry of one earlier id among new events"),
  "retry.newInside": mark("a retry of an earlier append's events with new ones between them"),
  "retry.foreignId": mark("a retry of an earlier append's events with an id sent to another stream"),
  "retry.older": mark("a retry of an append older than the stream's last one"),
  "retry.expected.any": mark("a retry under ExpectedAny"),
  "retry.expected.noStream": mark("a retry under ExpectedNoStream"),
  "retry.expected.streamExists": mark("a retry under ExpectedStreamExists"),
  "retry.expected.original": mark("a retry under the original append's expected version"),
  "retry.expected.current": mark("a retry under the stream's current version"),
  "retry.expected.aligned": mark("a retry under the version just before its first id's stored event"),
  "retry.expected.other": mark("a retry under another explicit version"),
  "retry.partial.idempotent": mark("a partly overlapping retry answered as the original"),
  "retry.duplicated": mark("a retry written again though some of its ids are stored in the stream"),
  "retry.corrupted.any": mark("an ExpectedAny retry refused: its first id cached, a later one not"),
  "retry.corrupted.streamExists": mark("an ExpectedStreamExists retry refused: its first id cached, a later one not"),
  "retry.corrupted.explicit": mark("an explicit-version retry refused: its first id stored next, a later one not"),
  // ---- $maxAge and the moving clock ----
  "metadata.$maxAge": mark("metadata with $maxAge written (1..30 s, sometimes with $maxCount or $tb)"),
  "read.expiredByMaxAge": mark("a read of a stream whose first events had certainly expired by $maxAge"),
  "read.maxAgeBoundaryUncertain": mark("a read whose time left an event's expiry open (several answers allowed)"),
  "scavenge.pointLearned": mark("a scavenge point the node wrote, learned from $scavengePoints"),
  "scavenge.expiredRemoved": mark("an event only $maxAge at a point's EffectiveNow let go, found gone"),
  "clock.advancedAcrossCrash": mark("the clock moved on while the crashed node was down"),
  "clock.movedDuringScavenge": mark("a run in progress seen more than 30 s after its point's EffectiveNow"),
  // ---- users and stream ACLs (acl/): the ACL actor, over HTTP ----
  "acl.read.allow": mark("a read (stream, event, $all, another stream) allowed and checked"),
  "acl.read.deny": mark("a read refused with the right 401"),
  "acl.write.allow": mark("an append allowed and checked against the model"),
  "acl.write.deny": mark("an append refused with the right 401"),
  "acl.delete.allow": mark("a delete allowed and checked"),
  "acl.delete.deny": mark("a delete refused with the right 401"),
  "acl.metaRead.allow": mark("a metadata read allowed"),
  "acl.metaRead.deny": mark("a metadata read refused"),
  "acl.metaWrite.allow": mark("a metadata write allowed and checked"),
  "acl.metaWrite.deny": mark("a metadata write refused"),
  "acl.source.streamAcl": mark("a decision made by the stream's own $acl"),
  "acl.source.userDefault": mark("a decision made by $settings' $userStreamAcl"),
  "acl.source.systemDefault": mark("a decision made by $settings' $systemStreamAcl"),
  "acl.source.builtIn": mark("a decision made by the built-in defaults"),
  "acl.source.admins": mark("a request allowed because the caller is an admin"),
  "acl.deniedToAll": mark("an operation refused to everyone (deleting a metastream)"),
  "acl.anonymous.allowed": mark("an anonymous request allowed (anonymous stream access on, role $all)"),
  "acl.anonymous.refused": mark("an anonymous request refused"),
  "acl.disabledUser.refused": mark("a disabled user's credentials refused"),
  "acl.deletedUser.refused": mark("a deleted user's credentials refused"),
  "acl.wrongPassword.refused": mark("a wrong password refused"),
  "acl.unknownUser.refused": mark("an unknown login refused"),
  "acl.all.allowed": mark("a read of $all over HTTP allowed"),
  "acl.all.denied": mark("a read of $all over HTTP refused"),
  "acl.link.resolved": mark("a link resolved to its target for a reader allowed to read it"),
  "acl.link.unreadable": mark("a link to a stream the reader may not read shown alone"),
  "acl.user.created": mark("a user created through the users API"),
  "acl.user.disabled": mark("a user disabled"),
  "acl.user.enabled": mark("a user enabled again"),
  "acl.user.deleted": mark("a user deleted"),
  "acl.user.uncertain": mark("a users API command left without an answer", false),
  "acl.settings.written": mark("$settings defaults written"),
  "acl.all.linkResolved": mark("a link of the actor's streams shown resolved in $all, checked against the model"),
  "acl.metadata.malformedAcl": mark("metadata with a malformed $acl written (the whole metadata reads empty)"),
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
  "fault.diskFull": mark("a write refused for a full disk"),
  // ---- the multi-node simulator (cluster/): its CI batch is simulation/test/cluster.test.ts ----
  "cluster.electionWon": clusterMark("a member seen leading with a quorum, after another or none"),
  "cluster.failover": clusterMark("the leader changed from one member to another"),
  "cluster.redirectFollowed": clusterMark("a 307 to the leader followed by a client"),
  "cluster.unavailable503": clusterMark("a 503 (no leader known) answered and retried"),
  "cluster.truncation": clusterMark("a member's uncommitted tail cut to follow a new leader"),
  "cluster.commitTimeout": clusterMark("a write answered CommitTimeout: not on a quorum in time"),
  "cluster.partition.twoWay": clusterMark("a link cut both ways"),
  "cluster.partition.oneWay": clusterMark("a link cut one way"),
  "cluster.isolated": clusterMark("a member cut off from every other"),
  "cluster.paused": clusterMark("a member paused, then resumed"),
  "cluster.leaderCrashed": clusterMark("the leader crashed"),
  "cluster.resigned": clusterMark("the leader resigned on the admin's request"),
  "cluster.readOnlyReplicaCaughtUp": clusterMark("a read-only replica caught up with the leader"),
  "cluster.livenessReached": clusterMark("faults stopped, one leader elected, every member caught up, a write taken"),
  // ---- auto-scavenge seeds (cluster/ with the auto-scavenge workload): simulation/test/autoScavenge.test.ts ----
  "autoScavenge.replaced": autoScavengeMark("a member replaced by an empty node at another HTTP endpoint"),
  "autoScavenge.replacementCaughtUp": autoScavengeMark("a replacement node caught up from an empty disk"),
  "autoScavenge.nodeScavengeRan": autoScavengeMark("a node scavenge ran on a member (seen by its scavenger)"),
  "autoScavenge.chunksCompared": autoScavengeMark(
    "every member scavenged to one point: completed chunks below it compared"
  ),
  "autoScavenge.paused": autoScavengeMark("a pause answered 200 by the leader"),
  "autoScavenge.pauseAccepted": autoScavengeMark("a pause answered 202 (stopping a node scavenge, or passed on)"),
  "autoScavenge.resumeWhilePausing": autoScavengeMark("a resume refused while pausing", false),
  "autoScavenge.cycleCompleted": autoScavengeMark("a cluster scavenge cycle completed"),
  "autoScavenge.leaderDesignatedItself": autoScavengeMark("the leader designated itself, last in its cycle"),
  "autoScavenge.redesignated": autoScavengeMark("a node designated again in one cycle (the restart path)"),
  "autoScavenge.memberRemoved": autoScavengeMark("a cycle's member removed by a membership change (the cancel path)"),
  "autoScavenge.cycleAcrossLeaders": autoScavengeMark("one cycle recorded by more than one leader"),
  "autoScavenge.leaderStateMatchesRecord": autoScavengeMark("the leader's status compared with its record"),
  "autoScavenge.livenessCycle": autoScavengeMark("after the faults, a cycle completed within the bound"),
  "autoScavenge.followerCrashedMidScavenge": autoScavengeMark("a member crashed while its node scavenge ran"),
  "autoScavenge.leaderCrashedMidCycle": autoScavengeMark("the leader crashed while a cycle was under way"),
  "autoScavenge.designatedReplaced": autoScavengeMark("a member replaced while its node scavenge ran", false),
  // ---- persistent subscriptions (subscriptions/): simulation/test/subscriptions.test.ts ----
  "subs.group.created": subsMark("a group created by the workload"),
  "subs.delivered": subsMark("a message of a group on a stream handed out and checked"),
  "subs.deliveredFromAll": subsMark("a message of the filtered $all group handed out and checked"),
  "subs.retried": subsMark("a message handed out again with its retry count raised"),
  "subs.longPollAnswered": subsMark("a long-poll pull answered with messages"),
  "subs.answer.ack": subsMark("messages acked"),
  "subs.answer.skip": subsMark("messages nacked with Skip"),
  "subs.answer.park": subsMark("messages nacked with Park"),
  "subs.answer.retry": subsMark("messages nacked with Retry"),
  "subs.answer.stop": subsMark("messages nacked with Stop (left in flight)"),
  "subs.answer.abandon": subsMark("messages left to time out"),
  "subs.replayParked": subsMark("a replay of parked messages started"),
  "subs.replayDelivered": subsMark("a replayed parked message handed out (an old position, allowed)"),
  "subs.updated": subsMark("a group updated with new settings while consumers run"),
  "subs.restarted": subsMark("the service restarted every group"),
  "subs.resumedFromCheckpoint": subsMark("a group resumed after a crash from a durable checkpoint"),
  "subs.redeliveredAfterCrash": subsMark("an acked event handed out again in a later lifetime (past the checkpoint)"),
  "subs.parkedByRetries": subsMark("an event parked by running out of retries, found in the parked stream"),
  "subs.parkedTwice": subsMark("a parked stream linking to one event twice (an allowed duplicate)", false),
  "subs.drained": subsMark("every group finished its whole source after the faults, and the end rules ran"),
  // ---- projections (projections/): the system projections and two user projections through crashes ----
  "proj.systemEnabled": projMark("$by_category or $by_event_type enabled by the workload"),
  "proj.countingCreated": projMark("the counting user projection (emit off) created"),
  "proj.emittingCreated": projMark("the linking user projection (emit on) created"),
  "proj.resumedFromCheckpoint": projMark("a lifetime began with a projection's checkpoint written before the crash"),
  "proj.disabledAndEnabled": projMark("a projection disabled and enabled again while it ran"),
  "proj.subsystemRestarted": projMark("the projections subsystem restarted while projections ran"),
  "proj.caughtUp": projMark("every projection processed the whole log after the faults, and the end checks ran"),
  "proj.categoryLinks": projMark("a $ce- link checked against the record it stands for"),
  "proj.eventTypeLinks": projMark("a $et- link checked against the record it stands for"),
  "proj.emittedLinks": projMark("a link the emitting user projection wrote checked against its record"),
  "proj.recategorisedLink": projMark("a link event's link in $ce- checked (recategorised to its target)"),
  "proj.deletionCategorised": projMark("a stream deletion's $ce- link checked ($deleted)"),
  "proj.deletionTyped": projMark("a stream deletion's $et-$deleted link checked"),
  "proj.linkToScavenged": projMark("a link whose record a scavenge removed afterwards (allowed)", false),
  "proj.countsExact": projMark("the counting projection's state equal to the log's count (no scavenge point)"),
  "proj.countsAtLeast": projMark("the counting projection's state at least the log's count (after a scavenge)")
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

  /** The marks the batch's CI run must reach that never ran. */
  missedByCi(batch: Batch = "single"): Array<CoverageMark> {
    return markNames().filter(
      (m) => CoverageMarks[m].reachedByCi && CoverageMarks[m].batch === batch && this.count(m) === 0
    )
  }

  /** One line per mark of the batch, by family: count, name, what it is; a mark that never ran says so. */
  report(batch: Batch = "single"): string {
    const names = markNames().filter((m) => CoverageMarks[m].batch === batch)
    const width = Math.max(...names.map((m) => m.length))
    return names
      .map((m) => {
        const n = this.count(m)
        const flag = n > 0 ? "" : CoverageMarks[m].reachedByCi ? "  <- NEVER RAN" : "  (long runs only)"
        return `${String(n).padStart(8)}  ${m.padEnd(width)}  ${CoverageMarks[m].what}${flag}`
      })
      .join("\n")
  }
}

export const markNames = (): Array<CoverageMark> => Object.keys(CoverageMarks) as Array<CoverageMark>
