/**
 * Projections in `/metrics` and `/stats`: per projection whether it runs or is faulted, the events it processed
 * since it (re)started, how far it lags the log (events and seconds) and the size of its state. So a faulted
 * or stalled projection shows on a dashboard, not only on its own statistics page. Read from
 * `Projections.snapshot()` at each scrape or stats snapshot: projections run on the leader, so elsewhere there
 * are no series and no keys.
 *
 * Stats keys are `es-projection-{name}-{figure}`; `/stats` groups keys by splitting on `-`, so a `-` in a
 * projection's name is written `_` there.
 */
import { Effect, Layer } from "effect"
import { Gauge } from "prom-client"
import { NodeMetrics, NodeStats } from "@vellum/http"
import { Projections, type ProjectionStatistics } from "@vellum/projections"

interface Figure {
  readonly key: string
  readonly metric: string
  readonly help: string
  readonly value: (p: ProjectionStatistics) => number
}

const running = (p: ProjectionStatistics): number => (p.status === "Running" ? 1 : 0)
const faulted = (p: ProjectionStatistics): number => (p.status.startsWith("Faulted") ? 1 : 0)

const figures: ReadonlyArray<Figure> = [
  { key: "running", metric: "vellum_projection_running", help: "1 while a projection runs", value: running },
  {
    key: "faulted",
    metric: "vellum_projection_faulted",
    help: "1 while a projection is faulted (its statistics give the reason)",
    value: faulted
  },
  {
    key: "eventsProcessedAfterRestart",
    metric: "vellum_projection_events_processed",
    help: "Events a projection processed since it last started",
    value: (p) => p.runner.eventsProcessedAfterRestart
  },
  {
    key: "lagEvents",
    metric: "vellum_projection_lag_events",
    help: "Committed events after a projection's position (counted up to a bound)",
    value: (p) => p.runner.lagEvents
  },
  {
    key: "lagSeconds",
    metric: "vellum_projection_lag_seconds",
    help: "Age of the oldest committed event a projection has not processed (0 when caught up)",
    value: (p) => p.runner.lagMilliseconds / 1000
  },
  {
    key: "stateBytes",
    metric: "vellum_projection_state_bytes",
    help: "Length of a projection's root state text",
    value: (p) => p.runner.stateBytes
  }
]

const statsName = (name: string): string => name.replaceAll("-", "_")

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const metrics = yield* NodeMetrics
    const stats = yield* NodeStats
    const service = yield* Projections
    for (const figure of figures)
      new Gauge({
        name: figure.metric,
        help: figure.help,
        labelNames: ["projection"],
        registers: [metrics.registry],
        collect() {
          // A deleted projection (and every projection on a node that stopped leading) leaves no stale series.
          this.reset()
          for (const p of service.snapshot()) this.set({ projection: p.name }, figure.value(p))
        }
      })
    yield* stats.contribute(() =>
      service
        .snapshot()
        .flatMap((p) => [
          [`es-projection-${statsName(p.name)}-status`, p.status] as const,
          ...figures.map((f) => [`es-projection-${statsName(p.name)}-${f.key}`, f.value(p)] as const)
        ])
    )
  })
)
