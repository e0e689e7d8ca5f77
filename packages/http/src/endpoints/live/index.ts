// Live layers of the node endpoints: the real process behind /stats and prom-client's default metrics.
export type { ProcessStatsLiveOptions } from "./ProcessStatsLive.js"
export * as ProcessStatsLive from "./ProcessStatsLive.js"
export * as NodeMetricsLive from "./NodeMetricsLive.js"
