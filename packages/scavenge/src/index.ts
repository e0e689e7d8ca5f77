// @vellum/scavenge: node scavenging — the service, its phases and rules, the persisted state and the history
// streams. The reference model its property tests compare against lives beside them, in test/model/.
export * from "./Scavenger.js"
export * from "./makeScavenger.js"
export { STATE_FOLDER, type ScavengerLayerSettings } from "./ScavengerLayer.js"
export * as ScavengerLayer from "./ScavengerLayer.js"
export { latestScavengePoint } from "./ScavengeRun.js"
export * from "./history/index.js"
export { NotResident, openScavengeState, openStateSession, StateCorrupt } from "./state/index.js"
export type {
  Checkpoint,
  OriginalStreamData,
  MetastreamData,
  ScavengePointInfo,
  ScavengeStateCounts,
  StateError
} from "./state/index.js"
