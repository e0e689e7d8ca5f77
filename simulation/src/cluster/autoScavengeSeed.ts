/**
 * What an auto-scavenge seed adds to a multi-node seed (`runClusterSeed` calls it):
 *
 * - the operator's workload (autoScavengeOperator.ts) beside the clients during the safety phase;
 * - after the faults and the cluster's own liveness phase: the operator resumes for good, and a cluster
 *   scavenge cycle must complete within a bound (the next due time plus a minute) — liveness;
 * - at the end, the rules over the record both streams hold (autoScavengeHistory.ts), read from the
 *   leader's store, and the rule that no node scavenge started while the operator had auto-scavenge paused.
 *
 * The rules checked as the world runs live elsewhere: one node scavenge at a time and the leader not
 * leading when its own starts (clusterWorld.ts), identical chunks once every member scavenged to one point
 * (clusterObserver.ts).
 */
import { Duration, Effect, Exit } from "effect"
import { nodeKey, type NodeId } from "@vellum/auto-scavenge"
import type { Prng } from "@vellum/platform"
import type { Auditor } from "../client.js"
import {
  holdsRecord,
  checkLeaderLast,
  checkNothingWhilePaused,
  checkOneEach,
  checkRehydration,
  checkStartsSeen,
  readRecord,
  type RecordedEvent
} from "./autoScavengeHistory.js"
import { AutoScavengeOperator } from "./autoScavengeOperator.js"
import { ClientsNode, ObserverNode, type ClusterWorld } from "./clusterWorld.js"
import { scanCommitted } from "./clusterObserver.js"

export class AutoScavengeSeed {
  readonly operator: AutoScavengeOperator | undefined

  constructor(
    prng: Prng,
    private readonly cluster: ClusterWorld,
    private readonly auditor: Auditor
  ) {
    const schedule = cluster.options.autoScavenge?.schedule
    this.operator =
      schedule === undefined ? undefined : new AutoScavengeOperator(prng, cluster, auditor.coverage, schedule)
  }

  /** The operator's workload, while `running` holds. */
  start(running: () => boolean): void {
    if (this.operator !== undefined) this.cluster.world.fork(ClientsNode, this.operator.run(running))
  }

  private labelOf = (node: NodeId): string => this.cluster.labelAt(nodeKey(node))

  /** The leader that wrote each position: the leader of the newest epoch at or below it, in `leader`'s log. */
  private writers(leader: string) {
    const open = this.cluster.open(leader)!
    return Effect.map(scanCommitted(open.store, open.committed()), (records) => {
      const epochs = records
        .flatMap((r) => (r.epoch === undefined ? [] : [r.epoch]))
        .map((e) => ({ position: e.position, leader: this.cluster.labelOfInstance(e.leaderInstanceId ?? "") }))
        .reverse()
      return (position: number) => epochs.find((e) => e.position <= position)?.leader
    })
  }

  /** Runs `effect` on the observer's node until it ends (or `maxSimMs` passes); its value, or undefined. */
  private observe<A>(effect: Effect.Effect<A, unknown>, maxSimMs: number): A | undefined {
    const fiber = this.cluster.world.fork(ObserverNode, effect)
    this.cluster.run({
      until: () => fiber.unsafePoll() !== null || this.auditor.failure !== undefined,
      maxSimMs
    })
    const exit = fiber.unsafePoll()
    return exit !== null && Exit.isSuccess(exit) ? exit.value : undefined
  }

  private recordOn(leader: string): Effect.Effect<ReadonlyArray<RecordedEvent>, unknown> {
    const open = this.cluster.open(leader)!
    return Effect.flatMap(this.writers(leader), (writerAt) => readRecord(open.store, writerAt))
  }

  /**
   * Liveness: with the faults over and the cluster converged, the operator resumes for good, and a cycle
   * must complete (a ClusterScavengeCompleted recorded after now) within the seed's liveness bound.
   */
  liveness(): void {
    const operator = this.operator
    if (operator === undefined || !operator.configured) return
    const cluster = this.cluster
    const leader = () => cluster.leaders()[0]
    const completions = (record: ReadonlyArray<RecordedEvent>) =>
      record.filter((r) => r.event._tag === "ClusterScavengeCompleted").length
    const began = cluster.world.now
    const bound = cluster.options.livenessMs
    const done = this.observe(
      Effect.gen(this, function* () {
        yield* operator.resumeForGood(leader)
        let before: number | undefined
        for (;;) {
          const at = leader()
          if (at !== undefined && cluster.open(at) !== undefined) {
            const record = yield* Effect.either(this.recordOn(at))
            if (record._tag === "Right") {
              const n = completions(record.right)
              if (before === undefined) before = n
              else if (n > before) return true
            }
          }
          yield* Effect.sleep(Duration.millis(1_000))
        }
      }),
      bound
    )
    if (this.auditor.failure !== undefined) return
    if (done !== true) {
      this.auditor.fail(
        `auto-scavenge liveness: no cycle completed within ${bound} simulated ms after the faults (since ${began} ms)`
      )
      return
    }
    this.auditor.coverage.hit("autoScavenge.livenessCycle")
    cluster.world.trace(`auto-scavenge: a cycle completed ${cluster.world.now - began} ms after the faults`)
  }

  /** The rules over the record (read from the leader) and over the operator's paused windows. */
  finalChecks(): void {
    const cluster = this.cluster
    const leader = cluster.leaders()[0]
    if (this.operator === undefined || leader === undefined) return
    // The observer's next sample gives the leader's log (its epochs: who wrote what).
    const record = this.observe(this.recordOn(leader), 10_000)
    if (record === undefined) return this.auditor.fail("auto-scavenge: its record could not be read from the leader")
    const runs = cluster.scavenges.runs
    const problem =
      checkLeaderLast(record, this.labelOf) ??
      checkOneEach(record) ??
      checkNothingWhilePaused(record) ??
      checkStartsSeen(record, runs, this.labelOf) ??
      checkRehydration(record, cluster.world.now) ??
      this.checkPausedWindows()
    if (problem !== undefined) return this.auditor.fail(`auto-scavenge: ${problem}`)
    this.markCoverage(record)
    this.checkLeaderHolds(leader)
  }

  /**
   * The leader's own state (its status document) is the record's: the state every recorded event applied in
   * order gives — read before and after asking, so that nothing was recorded in between.
   */
  private checkLeaderHolds(leader: string): void {
    const operator = this.operator!
    const compared = this.observe(
      Effect.gen(this, function* () {
        const before = yield* this.recordOn(leader)
        const reply = yield* operator.send(leader, { _tag: "GetStatus" })
        const after = yield* this.recordOn(leader)
        if (reply?._tag !== "Status" || before.length !== after.length) return undefined
        return holdsRecord(reply.body, before)
      }),
      10_000
    )
    if (compared === undefined) return
    if (compared !== "same") return this.auditor.fail(`auto-scavenge: the leader ${leader} ${compared}`)
    this.auditor.coverage.hit("autoScavenge.leaderStateMatchesRecord")
  }

  private checkPausedWindows(): string | undefined {
    for (const window of this.operator!.pausedWindows) {
      const run = this.cluster.scavenges.runs.find(
        (r) => r.startedAt > window.from && (window.to === undefined || r.startedAt < window.to)
      )
      if (run !== undefined) {
        return `${run.node}'s node scavenge started at ${run.startedAt} ms while paused (a pause answered 200 at ${window.from} ms, the next resume sent at ${window.to ?? "never"})`
      }
    }
    return undefined
  }

  private markCoverage(record: ReadonlyArray<RecordedEvent>): void {
    const coverage = this.auditor.coverage
    const designated = new Map<string, number>()
    let cycleWriters = new Set<string>()
    for (const r of record) {
      const e = r.event
      if (e._tag === "ClusterScavengeStarted") {
        designated.clear()
        cycleWriters = new Set()
      }
      if (r.writer !== undefined) cycleWriters.add(r.writer)
      if (e._tag === "ClusterScavengeCompleted") {
        coverage.hit("autoScavenge.cycleCompleted")
        if (cycleWriters.size > 1) coverage.hit("autoScavenge.cycleAcrossLeaders")
      }
      if (e._tag === "NodeDesignated") {
        const key = nodeKey(e.nodeId)
        designated.set(key, (designated.get(key) ?? 0) + 1)
        if (designated.get(key) === 2) coverage.hit("autoScavenge.redesignated")
        if (r.writer !== undefined && this.labelOf(e.nodeId) === r.writer)
          coverage.hit("autoScavenge.leaderDesignatedItself")
      }
      if (e._tag === "ClusterMembersChanged" && e.removed.length > 0) coverage.hit("autoScavenge.memberRemoved")
    }
  }
}
