// Auto-scavenge in the multi-node simulator, in CI: a bounded batch of seeds, each a cluster (the swarm's
// voters, 3 or 5, sometimes a read-only replica) with a schedule of a minute or two, paused and resumed at
// random, under the cluster's faults plus a scavenging member crashed (restart), a member replaced at another
// endpoint (cancel), the leader crashed mid-cycle; the checkers throughout, then a cycle must complete after
// the faults. Longer runs: `npm run sim:soak -- --nodes 3 --auto-scavenge`.
import { describe, expect, it } from "vitest"
import { Coverage } from "../src/coverage.js"
import { runClusterSeed, type ClusterSeedResult } from "../src/cluster/runClusterSeed.js"

const SEEDS = 20
/**
 * Seeds past the batch that reach the rarest paths (a member designated again after a restart, a follower
 * crashed while its node scavenge runs: about one seed in forty). Which seeds do moves whenever the nodes'
 * scheduling changes; when the coverage check below fails for that reason alone, scan for seeds that reach
 * the missed marks (`npm run sim -- --seeds 60 --cluster --auto-scavenge` prints the coverage) and list them here.
 */
const COVERAGE_SEEDS = [40]

const betweenSeeds = () => new Promise<void>((resolve) => setImmediate(resolve))

const explain = (r: ClusterSeedResult) =>
  `seed ${r.seed} (${r.options.voters} voters${r.options.readOnlyReplica ? " + a read-only replica" : ""}): ${r.failure}\nlast trace lines:\n  ${r.lastTrace.join("\n  ")}\nreplay: npm run sim -- --seed ${r.seed} --cluster --auto-scavenge`

describe("auto-scavenge in the multi-node simulator", () => {
  it(`seeds 1..${SEEDS} and ${COVERAGE_SEEDS.join(", ")}: one node scavenge at a time, the leader last, nothing while paused, a cycle after the faults`, async () => {
    const coverage = new Coverage()
    for (const seed of [...Array.from({ length: SEEDS }, (_, i) => i + 1), ...COVERAGE_SEEDS]) {
      const r = runClusterSeed(seed, { autoScavenge: true })
      if (!r.ok) expect.fail(explain(r))
      coverage.add(r.coverage)
      await betweenSeeds()
    }
    expect(coverage.missedByCi("autoScavenge"), `coverage report:\n${coverage.report("autoScavenge")}`).toEqual([])
  }, 900_000)

  it("the same seed gives the same trace hash", () => {
    const a = runClusterSeed(2, { autoScavenge: true })
    const b = runClusterSeed(2, { autoScavenge: true })
    expect(a.traceHash).toBe(b.traceHash)
  })
})
