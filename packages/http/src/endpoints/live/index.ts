// Live layers of the node endpoints: the real process behind /stats and prom-client's default metrics.
export { processStatsLive, type ProcessStatsLiveOptions } from "./ProcessStatsLive.js"
export { nodeMetricsLive } from "./NodeMetricsLive.js"
