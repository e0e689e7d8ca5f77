// The projections workload and its end checks, end to end in the simulator, on a stand-in for the node's
// projections service (projectionsStandIn.ts: the real system handlers over `$all`, checkpointed, writes
// de-duplicated by causing position) — so the workload is proven before the real service is wired: a seed
// passes on the stand-in, and fails when the stand-in writes again after a restart what it had written.
import { describe, expect, it } from "vitest"
import { runSeed, type SeedResult } from "../src/runSeed.js"
import { projectionsStandIn } from "./projectionsStandIn.js"

const explain = (r: SeedResult) => `seed ${r.seed}: ${r.failure}\nlast trace lines:\n  ${r.lastTrace.join("\n  ")}`

const overrides = { projections: true, subscriptions: false } as const

describe("the projections workload on a stand-in service", () => {
  it("a seed whose projections process records again after restarts but write each link once passes", () => {
    const r = runSeed(2, { overrides, projectionsService: projectionsStandIn({ dedupe: true, replayLast: true }) })
    if (!r.ok) expect.fail(explain(r))
    expect(r.crashes).toBeGreaterThan(0)
    expect(r.projectionLinks).toBeGreaterThan(0)
    expect(r.coverage.count("proj.caughtUp")).toBe(1)
    expect(r.coverage.count("proj.categoryLinks")).toBeGreaterThan(0)
    expect(r.coverage.count("proj.eventTypeLinks")).toBeGreaterThan(0)
    expect(r.coverage.count("proj.emittedLinks")).toBeGreaterThan(0)
    expect(r.coverage.count("proj.resumedFromCheckpoint")).toBeGreaterThan(0)
  })

  it("a stand-in that writes again after a restart what it had written fails the seed with a duplicate", () => {
    const r = runSeed(2, { overrides, projectionsService: projectionsStandIn({ dedupe: false, replayLast: true }) })
    expect(r.ok).toBe(false)
    expect(r.failure).toMatch(/projections: .*a duplicate/)
  })
  it("a stand-in that counts again an event it processes again after a restart fails the seed on the count", () => {
    const standIn = projectionsStandIn({ dedupe: true, replayLast: true, countTwice: true })
    // Seed 10 runs no scavenge, so the count must be exact (a scavenge leaves only a lower bound), and one of
    // its restarts resumes from a checkpoint after a counted event.
    const r = runSeed(10, { overrides, projectionsService: standIn })
    expect(r.ok).toBe(false)
    expect(r.failure).toMatch(/projections: sim-counts counts \d+ events, the log holds \d+/)
  })

  it("the same seed on the stand-in gives the same trace hash", () => {
    const a = runSeed(4, { overrides, projectionsService: projectionsStandIn({ dedupe: true, replayLast: false }) })
    const b = runSeed(4, { overrides, projectionsService: projectionsStandIn({ dedupe: true, replayLast: false }) })
    if (!a.ok) expect.fail(explain(a))
    expect(a.traceHash).toBe(b.traceHash)
    expect(a.projectionLinks).toBe(b.projectionLinks)
  })
})
