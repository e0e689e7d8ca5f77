/**
 * Auto-scavenge in `/metrics`: its state and how its cycles go, read from `AutoScavenge.figures` when the
 * registry is scraped. Only a node running auto-scavenge registers them. The figures are this node's view:
 * a follower reports what it last heard from the leader.
 */
import { Effect, Layer, Runtime } from "effect"
import { Counter, Gauge } from "prom-client"
import { NodeMetrics } from "@vellum/http"
import { AutoScavenge, type AutoScavengeFigures, type PublicState } from "@vellum/auto-scavenge"

const STATES: ReadonlyArray<PublicState> = ["NotConfigured", "Waiting", "InProgress", "Pausing", "Paused"]
const RESULTS = ["Success", "Stopped", "Errored"] as const

export const layer = Layer.effectDiscard(
  Effect.gen(function* () {
    const metrics = yield* NodeMetrics
    const service = yield* AutoScavenge
    // Run with the node's own services (its Clock among them), not the default ones.
    const runtime = yield* Effect.runtime<never>()
    const figures = (): Promise<AutoScavengeFigures> => Runtime.runPromise(runtime)(service.figures)
    const registers = [metrics.registry]

    new Gauge({
      name: "vellum_auto_scavenge_state",
      help: "1 for auto-scavenge's state (all 0 on a node that has not heard it from the leader)",
      labelNames: ["state"],
      registers,
      async collect() {
        const { state } = await figures()
        for (const s of STATES) this.set({ state: s }, s === state ? 1 : 0)
      }
    })
    /** A counter whose value is a figure: prom-client counters only go up, so it is reset and raised to it. */
    const counter = (name: string, help: string, value: (f: AutoScavengeFigures) => number) =>
      new Counter({
        name,
        help,
        registers,
        async collect() {
          const f = await figures()
          this.reset()
          this.inc(value(f))
        }
      })
    counter("vellum_auto_scavenge_cycles_started_total", "Cluster scavenges started", (f) => f.cyclesStarted)
    counter("vellum_auto_scavenge_cycles_completed_total", "Cluster scavenges completed", (f) => f.cyclesCompleted)
    counter(
      "vellum_auto_scavenge_node_scavenges_started_total",
      "Node scavenges auto-scavenge started",
      (f) => f.nodeScavengesStarted
    )
    new Counter({
      name: "vellum_auto_scavenge_node_scavenges_completed_total",
      help: "Node scavenges auto-scavenge saw complete, by result",
      labelNames: ["result"],
      registers,
      async collect() {
        const f = await figures()
        this.reset()
        for (const result of RESULTS) this.inc({ result }, f.nodeScavengesCompleted[result])
      }
    })
    const gauge = (name: string, help: string, value: (f: AutoScavengeFigures) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          this.set(value(await figures()))
        }
      })
    gauge(
      "vellum_auto_scavenge_cycle_members",
      "Members of the cluster scavenge under way (0 with none)",
      (f) => f.cycleMembers
    )
    gauge(
      "vellum_auto_scavenge_cycle_members_done",
      "Members of the cluster scavenge under way already scavenged",
      (f) => f.cycleMembersDone
    )
    gauge(
      "vellum_auto_scavenge_seconds_until_next_cycle",
      "Seconds until the next cluster scavenge is due (NaN when none is scheduled)",
      (f) => (f.timeUntilNextCycleMillis === undefined ? Number.NaN : f.timeUntilNextCycleMillis / 1000)
    )
  })
)
