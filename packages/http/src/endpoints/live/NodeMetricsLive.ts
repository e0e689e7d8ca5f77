/**
 * The live node's metrics: everything of `NodeMetrics.layer` plus prom-client's default process metrics
 * (CPU, memory, heap spaces, GC, event-loop lag, handles), registered on the node's own registry. Those read
 * the real process and start perf_hooks observers, which is why they are only added here.
 */
import { Effect, Layer } from "effect"
import { collectDefaultMetrics } from "prom-client"
import { NodeMetrics, makeNodeMetrics } from "../NodeMetrics.js"

export const layer: Layer.Layer<NodeMetrics> = Layer.effect(
  NodeMetrics,
  Effect.sync(() => {
    const metrics = makeNodeMetrics()
    collectDefaultMetrics({ register: metrics.registry })
    return metrics
  })
)
