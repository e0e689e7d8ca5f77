/**
 * Scavenge progress in `/metrics`: gauges on the node's registry that read the scavenger when scraped, so
 * a dashboard sees which phase a run is in and how far it has got (GET /admin/scavenge/current shows the
 * same).
 */
import { Effect, Layer } from "effect"
import { Gauge } from "prom-client"
import { NodeMetrics } from "@vellum/http"
import { Scavenger } from "@vellum/scavenge"

const PHASES = [
  "Beginning",
  "Accumulating",
  "Calculating",
  "ExecutingChunks",
  "MergingChunks",
  "ExecutingIndex",
  "Cleaning",
  "Done"
] as const

/** KurrentDB's names of the scavenge statuses (`kurrentdb_statuses{name="Scavenge"}`); no run is `Idle`. */
const KurrentStatus: Record<(typeof PHASES)[number], string> = {
  Beginning: "Accumulation",
  Accumulating: "Accumulation",
  Calculating: "Calculation",
  ExecutingChunks: "Chunk Execution",
  MergingChunks: "Chunk Merging",
  ExecutingIndex: "Index Execution",
  Cleaning: "Cleaning",
  Done: "Idle"
}

export const layer = Layer.effectDiscard(
  Effect.gen(function* () {
    const metrics = yield* NodeMetrics
    const scavenger = yield* Scavenger
    // `current` is a plain read of the service's state (Effect.sync): safe to run inside a scrape.
    const current = () => Effect.runSync(scavenger.current)
    const registers = [metrics.registry]
    metrics.addStatus({
      name: "Scavenge",
      current: () => {
        const phase = current()?.progress.phase
        return phase === undefined ? "Idle" : KurrentStatus[phase]
      }
    })
    new Gauge({
      name: "vellum_scavenge_running",
      help: "1 while a node scavenge runs",
      registers,
      collect() {
        this.set(current() === undefined ? 0 : 1)
      }
    })
    new Gauge({
      name: "vellum_scavenge_phase",
      help: "1 for the phase the running scavenge is in",
      labelNames: ["phase"],
      registers,
      collect() {
        const phase = current()?.progress.phase
        for (const p of PHASES) this.set({ phase: p }, p === phase ? 1 : 0)
      }
    })
    new Gauge({
      name: "vellum_scavenge_progress_done",
      help: "Units (chunks or streams) of the current phase done",
      registers,
      collect() {
        this.set(current()?.progress.done ?? 0)
      }
    })
    new Gauge({
      name: "vellum_scavenge_progress_total",
      help: "Units (chunks or streams) of the current phase in all",
      registers,
      collect() {
        this.set(current()?.progress.total ?? 0)
      }
    })
  })
)
