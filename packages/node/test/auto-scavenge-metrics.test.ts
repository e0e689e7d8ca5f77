// Auto-scavenge's figures in /metrics: registered over the AutoScavenge service, read at each scrape.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { NodeMetrics } from "@vellum/http"
import { AutoScavenge, noAutoScavengeFigures } from "@vellum/auto-scavenge"
import * as AutoScavengeMetrics from "../src/autoScavengeMetrics.js"
import { admin, text, withNode } from "./nodeAppSupport.js"

const idle = noAutoScavengeFigures

const scrape = Effect.flatMap(NodeMetrics, (metrics) => Effect.promise(() => metrics.registry.metrics()))

/** The node's registry with the auto-scavenge metrics over a service whose figures the test sets. */
const setup = Effect.gen(function* () {
  const figures = yield* Ref.make(idle)
  const service = Layer.succeed(AutoScavenge, {
    execute: () => Effect.die("not used by the metrics"),
    figures: Ref.get(figures)
  })
  const context = yield* Layer.build(
    Layer.provideMerge(AutoScavengeMetrics.layer, Layer.merge(NodeMetrics.layer, service))
  )
  return { figures, scrape: Effect.provide(scrape, context) }
})

const sample = (text: string, line: string) => expect(text.split("\n")).toContain(line)

describe("auto-scavenge metrics", () => {
  it.scoped("before the node hears of auto-scavenge: no state, nothing counted, no next cycle", () =>
    Effect.gen(function* () {
      const { scrape } = yield* setup
      const text = yield* scrape
      for (const state of ["NotConfigured", "Waiting", "InProgress", "Pausing", "Paused"]) {
        sample(text, `vellum_auto_scavenge_state{state="${state}"} 0`)
      }
      sample(text, "vellum_auto_scavenge_cycles_started_total 0")
      sample(text, 'vellum_auto_scavenge_node_scavenges_completed_total{result="Errored"} 0')
      // prom-client writes NaN as `Nan`, which Prometheus reads (its float parser ignores the case).
      sample(text, "vellum_auto_scavenge_seconds_until_next_cycle Nan")
    })
  )

  it.scoped("every figure, as it is at the scrape", () =>
    Effect.gen(function* () {
      const { figures, scrape } = yield* setup
      yield* Ref.set(figures, {
        state: "InProgress",
        cyclesStarted: 3,
        cyclesCompleted: 2,
        nodeScavengesStarted: 8,
        nodeScavengesCompleted: { Success: 5, Stopped: 1, Errored: 1 },
        cycleMembers: 3,
        cycleMembersDone: 1,
        timeUntilNextCycleMillis: 90_500
      })
      const text = yield* scrape
      sample(text, 'vellum_auto_scavenge_state{state="InProgress"} 1')
      sample(text, 'vellum_auto_scavenge_state{state="Waiting"} 0')
      sample(text, "vellum_auto_scavenge_cycles_started_total 3")
      sample(text, "vellum_auto_scavenge_cycles_completed_total 2")
      sample(text, "vellum_auto_scavenge_node_scavenges_started_total 8")
      sample(text, 'vellum_auto_scavenge_node_scavenges_completed_total{result="Success"} 5')
      sample(text, 'vellum_auto_scavenge_node_scavenges_completed_total{result="Stopped"} 1')
      sample(text, 'vellum_auto_scavenge_node_scavenges_completed_total{result="Errored"} 1')
      sample(text, "vellum_auto_scavenge_cycle_members 3")
      sample(text, "vellum_auto_scavenge_cycle_members_done 1")
      sample(text, "vellum_auto_scavenge_seconds_until_next_cycle 90.5")

      // The next scrape reads the figures again.
      yield* Ref.update(figures, (f) => ({ ...f, state: "Paused", cyclesStarted: 4 }))
      const later = yield* scrape
      sample(later, 'vellum_auto_scavenge_state{state="Paused"} 1')
      sample(later, 'vellum_auto_scavenge_state{state="InProgress"} 0')
      sample(later, "vellum_auto_scavenge_cycles_started_total 4")
    })
  )
})

describe("on a node", () => {
  const metricsOf = (argv: ReadonlyArray<string>) => {
    let body = ""
    return withNode(async (call) => {
      body = text(await call("GET", "/metrics", admin))
    }, argv).then(() => body)
  }

  it("are registered while auto-scavenge is enabled, and not otherwise", async () => {
    expect(await metricsOf(["--password-hash-cost", "4"])).toMatch(/^vellum_auto_scavenge_cycles_started_total 0$/m)
    expect(await metricsOf(["--mem-db", "--password-hash-cost", "4"])).not.toMatch(/vellum_auto_scavenge_/)
  })
})
