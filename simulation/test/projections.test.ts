// Projections in the simulator, in CI: a bounded batch of single-node seeds, each with the projections
// workload (`$by_category` and `$by_event_type` enabled, a counting and a linking user projection created,
// disabled and enabled, the subsystem restarted, the node crashing and restarting under the clients' writes),
// checked after the last lifetime against a scan of `$all`: `$ce-…`, `$et-…` and the linking projection's
// streams hold exactly one link per record, in `$all` order, and the counting projection's state is the
// log's count. Longer runs: `npm run sim:soak -- --projections`.
//
// The node runs its `Projections` service (`--run-projections All`, the default) in these seeds only; QuickJS's
// module is loaded before the seeds run, since the simulated world runs without the event loop.
import { beforeAll, describe, expect, it } from "vitest"
import { preloadSandbox } from "@vellum/projections"
import { Coverage } from "../src/coverage.js"
import { runSeed, type SeedResult } from "../src/runSeed.js"

const SEEDS = 8

const betweenSeeds = () => new Promise<void>((resolve) => setImmediate(resolve))

const explain = (r: SeedResult) =>
  `seed ${r.seed}: ${r.failure}\nlast trace lines:\n  ${r.lastTrace.join("\n  ")}\nreplay: npm run sim -- --seed ${r.seed} --projections`

beforeAll(() => preloadSandbox())

describe("projections in the simulator", () => {
  it(`seeds 1..${SEEDS}: one link per record in $ce- and $et-, in $all order, none twice; exact counts`, async () => {
    const coverage = new Coverage()
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = runSeed(seed, { overrides: { projections: true, subscriptions: false } })
      if (!r.ok) expect.fail(explain(r))
      expect(r.projectionLinks, `seed ${seed}: links checked`).toBeGreaterThan(0)
      coverage.add(r.coverage)
      await betweenSeeds()
    }
    expect(coverage.count("proj.caughtUp")).toBe(SEEDS)
    expect(coverage.missedByCi("projections"), `coverage report:\n${coverage.report("projections")}`).toEqual([])
  }, 600_000) // a hang guard, not a speed limit

  it("the same seed gives the same trace hash", () => {
    const a = runSeed(3, { overrides: { projections: true, subscriptions: false } })
    const b = runSeed(3, { overrides: { projections: true, subscriptions: false } })
    if (!a.ok) expect.fail(explain(a))
    expect(a.traceHash).toBe(b.traceHash)
    expect(a.projectionLinks).toBe(b.projectionLinks)
  })
})
