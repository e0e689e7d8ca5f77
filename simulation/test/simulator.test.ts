// The simulator in CI: a fixed batch of seeds with crashes, disk faults and scavenges (bounded in time), the
// clients driving the whole node through its HTTP app; the run-twice determinism check; a few seeds over the
// direct transport; and every scenario in scenarios/. Longer runs: `npm run sim:soak`.
import { beforeAll, describe, expect, it } from "vitest"
import { preloadSandbox } from "@vellum/projections"
import { Coverage } from "../src/coverage.js"
import { runSeed } from "../src/runSeed.js"

const SEEDS = 60

/**
 * A seed runs synchronously; between seeds the worker answers vitest's RPC (a long synchronous batch on a
 * busy machine otherwise times it out: "Timeout calling onTaskUpdate").
 */
const betweenSeeds = () => new Promise<void>((resolve) => setImmediate(resolve))

const explain = (r: ReturnType<typeof runSeed>) =>
  `seed ${r.seed}: ${r.failure}\nlast trace lines:\n  ${r.lastTrace.join("\n  ")}\nreplay: npm run sim -- --seed ${r.seed}`

// Some swarm seeds run the projections workload, whose user projections need QuickJS loaded before the world runs.
beforeAll(() => preloadSandbox())

describe("simulator", () => {
  it(`seeds 1..${SEEDS} lose no acknowledged write through crashes, disk faults and scavenges`, async () => {
    let crashes = 0
    let acknowledged = 0
    let scavenges = 0
    let healed = 0
    let settledInRun = 0
    const coverage = new Coverage()
    for (let seed = 1; seed <= SEEDS; seed++) {
      const r = runSeed(seed)
      if (!r.ok) expect.fail(explain(r))
      crashes += r.crashes
      acknowledged += r.acknowledged
      scavenges += r.scavenges
      healed += r.healed
      settledInRun += r.settledInRun
      coverage.add(r.coverage)
      await betweenSeeds()
    }
    // Every rule the CI batch is meant to reach ran at least once (coverage.ts; `npm run sim -- --seeds 60`).
    expect(coverage.missedByCi(), `coverage report:\n${coverage.report()}`).toEqual([])
    expect(crashes).toBeGreaterThan(SEEDS)
    expect(acknowledged).toBeGreaterThan(SEEDS * 20)
    // The operator scavenges alongside the clients in most seeds (and in the last lifetime of each).
    expect(scavenges).toBeGreaterThan(SEEDS)
    // Full disks were freed and writes taken again without a restart; failed writes were settled mid-run.
    expect(healed).toBeGreaterThan(0)
    expect(settledInRun).toBeGreaterThan(0)
  }, 600_000) // a hang guard, not a speed limit: on a busy machine the batch takes minutes

  it("a disk that fills up and is freed: writes are taken again without a restart, over HTTP and direct", () => {
    for (const transport of ["http", "direct"] as const) {
      // A seed whose clients fill a 30 KB disk over both transports (seed 2 stopped doing so over direct
      // when the workload's timing changed: clients pause for seconds, crashed nodes stay down).
      const r = runSeed(7, { transport, overrides: { capacityBytes: 30_000 } })
      if (!r.ok) expect.fail(explain(r))
      expect(r.healed, `${transport}: disk-full periods healed`).toBeGreaterThan(0)
    }
  })

  it("the same seed gives the same trace hash; different seeds differ", () => {
    const hashes = new Set<string>()
    for (const seed of [3, 17, 42]) {
      const a = runSeed(seed)
      const b = runSeed(seed)
      expect(a.traceHash).toBe(b.traceHash)
      hashes.add(a.traceHash)
    }
    expect(hashes.size).toBe(3)
  })

  it("the direct transport (clients call the EventStore service) still passes seeds 1..10", () => {
    let acknowledged = 0
    for (let seed = 1; seed <= 10; seed++) {
      const r = runSeed(seed, { transport: "direct" })
      if (!r.ok) expect.fail(explain(r))
      acknowledged += r.acknowledged
    }
    expect(acknowledged).toBeGreaterThan(10 * 20)
  })
})
