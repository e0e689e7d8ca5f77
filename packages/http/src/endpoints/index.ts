// The node endpoints (/ping, /info, /gossip, /stats, /metrics, /admin/shutdown, /admin/node/…, /health/live) and the
// services behind them. Live layers (real process figures, default prom-client metrics) are in ./live.
export {
  allNodeRoutes,
  nodeRoutes,
  selectNodeRoutes,
  type NodeRouteServices,
  type NodeRouteSwitches
} from "./routes.js"
export {
  NodeInfo,
  isLive,
  livenessOf,
  makeInstanceId,
  nodeIsLive,
  nodeRoleOf,
  nodeRoleNowOf,
  peekRef,
  nodeState,
  shownState,
  singleNodeIdentity,
  type NodeIdentity,
  type NodeInfoService
} from "./NodeInfo.js"
export {
  HEALTH_LIVE_PATH,
  HEALTH_READY_PATH,
  handleHealthLive,
  healthLive,
  healthReady,
  nodeHealth,
  type NodeHealth
} from "./health.js"
export { InfoCodecs, PING_TEXT, pingReply, pingRoute, textMessageBody } from "./ping.js"
export { infoDocument, infoReply, infoRoute, type InfoDocument } from "./info.js"
export {
  GossipCodecs,
  clusterInfo,
  currentEpoch,
  gossipBody,
  gossipInputNow,
  gossipPostRoute,
  gossipReply,
  gossipRoute,
  selfMember,
  type GossipInput
} from "./gossip.js"
export { parseGossipBody } from "./gossipBody.js"
export { NODE_PRIORITY_NOT_INTEGER, clusterAdminRoutes, priorityRoute, resignRoute } from "./clusterAdmin.js"
export {
  NodeMetrics,
  makeNodeMetrics,
  routeFamily,
  type HttpTraffic,
  type NodeMetricsService,
  type RequestSample
} from "./NodeMetrics.js"
export { metricsRoute } from "./metricsRoute.js"
export { Shutdown, type ShutdownService } from "./Shutdown.js"
export { AdminCodecs, SHUTDOWN_REASON, shutdownRoute } from "./admin.js"
export { ProcessStats, idleSnapshot, type ProcessSnapshot, type ProcessStatsService } from "./stats/ProcessStats.js"
export { NodeStats, STATS_MEMOIZE_MILLIS, type NodeStatsService } from "./stats/NodeStats.js"
export { WRITER_QUEUE, buildStats, type StatsInput, type StatsSample } from "./stats/statsDocument.js"
export {
  flatGroup,
  groupStats,
  selectGroup,
  statMeta,
  statsJson,
  statsXml,
  type FlatStats,
  type StatLeaf,
  type StatMetadata,
  type StatValue,
  type StatsGroup
} from "./stats/StatsTree.js"
export { GROUPING_REQUIRED, StatsCodecs, statsReply, statsRoutes } from "./stats/statsRoutes.js"
export * as NodeServices from "./NodeServices.js"
// Live layers (they read the real process; importing them starts nothing until a layer is built).
export { NodeMetricsLive, ProcessStatsLive, type ProcessStatsLiveOptions } from "./live/index.js"
export {
  STATS_EVENT_TYPE,
  STATS_STREAM_MAX_AGE_SECONDS,
  statsEventData,
  statsStreamOf,
  writeStatsForever,
  type StatsStreamSettings
} from "./stats/StatsStream.js"
export * as StatsStream from "./stats/StatsStream.js"
