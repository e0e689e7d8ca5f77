/**
 * The node's current flat stats, memoized for one second as the reference does, so a
 * dashboard polling `/stats` and its sub-paths costs one snapshot per second. Each fresh computation keeps
 * its cumulative figures as the baseline of the next one's rates.
 */
import { Clock, Context, Effect, Layer, Ref, type Scope } from "effect"
import { EventStore } from "@vellum/storage"
import { ClusterStatus } from "@vellum/cluster"
import { NodeInfo, nodeRoleOf } from "../NodeInfo.js"
import { NodeMetrics } from "../NodeMetrics.js"
import { ProcessStats } from "./ProcessStats.js"
import { buildStats, type StatsSample } from "./statsDocument.js"
import type { FlatStats } from "./StatsTree.js"

export const STATS_MEMOIZE_MILLIS = 1000

export interface NodeStatsService {
  readonly current: Effect.Effect<FlatStats>
  /**
   * Adds a subsystem's figures (flat `es-…` keys, unique) after the node's own in every snapshot, for the
   * scope's lifetime: services built above the node's (projections) contribute without the node knowing them.
   */
  readonly contribute: (stats: () => FlatStats) => Effect.Effect<void, never, Scope.Scope>
}

interface Memo {
  readonly atMillis: number
  readonly stats: FlatStats
  readonly sample: StatsSample
}

export class NodeStats extends Context.Tag("@vellum/http/NodeStats")<NodeStats, NodeStatsService>() {
  static readonly layer: Layer.Layer<
    NodeStats,
    never,
    ProcessStats | EventStore | NodeMetrics | NodeInfo | ClusterStatus
  > = Layer.effect(
    NodeStats,
    Effect.gen(function* () {
      const processStats = yield* ProcessStats
      const store = yield* EventStore
      const metrics = yield* NodeMetrics
      const role = nodeRoleOf(yield* NodeInfo, yield* ClusterStatus)
      const memo = yield* Ref.make<Memo | undefined>(undefined)
      const contributions = new Set<() => FlatStats>()
      const contribute = (stats: () => FlatStats) =>
        Effect.acquireRelease(
          Effect.sync(() => contributions.add(stats)),
          () => Effect.sync(() => contributions.delete(stats))
        )
      const current = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const last = yield* Ref.get(memo)
        if (last !== undefined && now >= last.atMillis && now - last.atMillis < STATS_MEMOIZE_MILLIS) return last.stats
        const built = buildStats({
          nowMillis: now,
          process: yield* processStats.snapshot,
          storage: store.stats(),
          traffic: metrics.traffic(),
          previous: last?.sample,
          cluster: yield* role
        })
        const stats = [...built.stats]
        for (const contribution of contributions) stats.push(...contribution())
        yield* Ref.set(memo, { atMillis: now, stats, sample: built.sample })
        return stats
      })
      return { current, contribute: (stats: () => FlatStats) => Effect.asVoid(contribute(stats)) }
    })
  )
}
