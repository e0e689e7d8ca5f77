// The multi-node simulator in CI: a bounded batch of seeds, each a cluster under crashes, pauses, partitions,
// isolation and resignations with the checkers running throughout, then a liveness phase that must converge;
// and the run-twice determinism check. Longer runs: `npm run sim:soak -- --nodes 3`.
import { describe, expect, it } from "vitest"
import { Coverage } from "../src/coverage.js"
import { runClusterSeed, type ClusterSeedResult } from "../src/cluster/runClusterSeed.js"
import type { VoterCount } from "../src/cluster/clusterOptions.js"

const SEEDS = 200
/** The voters per seed (undefined: the swarm's choice of 1, 3 or 5). */
const NODES: VoterCount | undefined = undefined

/** Between seeds the worker answers vitest's RPC (a long synchronous batch otherwise times it out). */
const betweenSeeds = () => new Promise<void>((resolve) => setImmediate(resolve))

const explain = (r: ClusterSeedResult) =>
  `seed ${r.seed} (${r.options.voters} voters${r.options.readOnlyReplica ? " + a read-only replica" : ""}): ${r.failure}\nlast trace lines:\n  ${r.lastTrace.join("\n  ")}\nreplay: npm run sim -- --seed ${r.seed} --nodes ${r.options.voters}`

// The auto-scavenge workload runs in its own batch (autoScavenge.test.ts): its seeds are longer.
const run = (seed: number) =>
  runClusterSeed(seed, { ...(NODES === undefined ? {} : { nodes: NODES }), autoScavenge: false })

describe("the multi-node simulator", () => {
  it(`seeds 1..${SEEDS}: nothing acknowledged lost, committed prefixes agree, and every seed converges`, async () => {
    const coverage = new Coverage()
    let acknowledged = 0
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = run(seed)
      if (!r.ok) expect.fail(explain(r))
      acknowledged += r.acknowledged
      coverage.add(r.coverage)
      await betweenSeeds()
    }
    // Every rule of the multi-node batch ran at least once (coverage.ts, family cluster.*).
    expect(coverage.missedByCi("cluster"), `coverage report:\n${coverage.report("cluster")}`).toEqual([])
    expect(acknowledged).toBeGreaterThan(SEEDS * 20)
    expect(coverage.count("cluster.livenessReached")).toBe(SEEDS)
    expect(coverage.count("cluster.leaderCrashed")).toBeGreaterThan(0)
  }, 600_000)

  it("the same seed gives the same trace hash; different seeds differ", () => {
    const hashes = new Set<string>()
    for (const seed of [3, 17]) {
      const a = run(seed)
      const b = run(seed)
      expect(a.traceHash).toBe(b.traceHash)
      hashes.add(a.traceHash)
    }
    expect(hashes.size).toBe(2)
  })
})
