// Replays every seed in scenarios/ — each once made the simulator fail.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { preloadSandbox } from "@vellum/projections"
import { runSeed } from "../src/runSeed.js"
import type { SimOptions } from "../src/options.js"
import { runClusterSeed } from "../src/cluster/runClusterSeed.js"
import type { VoterCount } from "../src/cluster/clusterOptions.js"

interface Scenario {
  readonly seed: number
  readonly what: string
  readonly overrides?: Partial<SimOptions>
  /** How the clients reach the node (default: over HTTP). */
  readonly transport?: "http" | "direct"
  /**
   * A seed of the multi-node simulator: `nodes` pins the voters (else the swarm's choice, as it failed);
   * `autoScavenge` pins the auto-scavenge workload on or off (else the swarm's choice).
   */
  readonly cluster?: { readonly nodes?: VoterCount; readonly autoScavenge?: boolean }
}

const dir = join(__dirname, "..", "..", "scenarios")
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort()

// Projections scenarios run user projections, whose sandboxes need QuickJS loaded before the world runs.
beforeAll(() => preloadSandbox())

describe("scenarios", () => {
  it("there is at least one scenario", () => expect(files.length).toBeGreaterThan(0))
  for (const file of files) {
    const scenario = JSON.parse(readFileSync(join(dir, file), "utf8")) as Scenario
    it(`${file} (seed ${scenario.seed})`, () => {
      if (scenario.cluster !== undefined) {
        const { nodes, autoScavenge } = scenario.cluster
        const c = runClusterSeed(scenario.seed, {
          ...(nodes === undefined ? {} : { nodes }),
          ...(autoScavenge === undefined ? {} : { autoScavenge })
        })
        if (!c.ok) expect.fail(`${scenario.what}\nseed ${c.seed}: ${c.failure}\n  ${c.lastTrace.join("\n  ")}`)
        return
      }
      // Seeds found before the subscriptions and projections workloads existed replay without them, as they failed.
      const overrides = { subscriptions: false, projections: false, ...scenario.overrides }
      const r = runSeed(scenario.seed, { overrides, transport: scenario.transport ?? "http" })
      if (!r.ok) expect.fail(`${scenario.what}\nseed ${r.seed}: ${r.failure}\n  ${r.lastTrace.join("\n  ")}`)
    })
  }
})
