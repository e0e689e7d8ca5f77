// The scavenge history streams: payloads, TimeSpan text, and the Effects that write and repair them.
export * from "./timeSpan.js"
export * from "./payloads.js"
export { HistoryIndexScan, RecentRunsToRefresh, addToTotals, type RunTotals } from "./scan.js"
export * from "./ScavengeHistory.js"
