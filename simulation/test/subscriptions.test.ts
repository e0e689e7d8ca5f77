// Persistent subscriptions in the simulator, in CI: a bounded batch of single-node seeds, each with the
// subscriptions workload (consumers of several groups pulling, acking, nacking and timing out while the node
// crashes and restarts, groups updated and parked messages replayed), checked as copies arrive and, after a
// drain, against the store's sources and parked streams. Longer runs: `npm run sim:soak -- --subscriptions`.
import { describe, expect, it } from "vitest"
import { Coverage } from "../src/coverage.js"
import { runSeed, type SeedResult } from "../src/runSeed.js"

const SEEDS = 14

const betweenSeeds = () => new Promise<void>((resolve) => setImmediate(resolve))

const explain = (r: SeedResult) =>
  `seed ${r.seed}: ${r.failure}\nlast trace lines:\n  ${r.lastTrace.join("\n  ")}\nreplay: npm run sim -- --seed ${r.seed} --subscriptions`

describe("persistent subscriptions in the simulator", () => {
  it(`seeds 1..${SEEDS}: nothing lost, nothing durable handed out again, parked streams as the consumers left them`, async () => {
    const coverage = new Coverage()
    let copies = 0
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = runSeed(seed, { overrides: { subscriptions: true, projections: false } })
      if (!r.ok) expect.fail(explain(r))
      copies += r.subscriptionCopies
      coverage.add(r.coverage)
      await betweenSeeds()
    }
    expect(copies).toBeGreaterThan(SEEDS * 50)
    expect(coverage.missedByCi("subscriptions"), `coverage report:\n${coverage.report("subscriptions")}`).toEqual([])
  }, 600_000) // a hang guard, not a speed limit

  it("the same seed gives the same trace hash", () => {
    const a = runSeed(4, { overrides: { subscriptions: true, projections: false } })
    const b = runSeed(4, { overrides: { subscriptions: true, projections: false } })
    expect(a.traceHash).toBe(b.traceHash)
    expect(a.subscriptionCopies).toBeGreaterThan(0)
  })
})
