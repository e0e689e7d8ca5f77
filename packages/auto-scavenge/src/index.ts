// @vellum/auto-scavenge: the cluster scavenges itself on a CRON schedule, one node at a time, followers
// first and the leader last after it resigns. The state machine is pure (domain/); the driver runs it on
// the leader; the routes serve /auto-scavenge/*.
export * from "./AutoScavenge.js"
export * from "./domain/NodeId.js"
export * from "./domain/events.js"
export * from "./domain/State.js"
export * from "./domain/ClusterView.js"
export * from "./domain/Schedule.js"
export * from "./cron/Cron.js"
export * from "./domain/commands.js"
export * from "./domain/assess.js"
export * from "./domain/apply.js"
export * as AutoScavengeCodec from "./domain/codec.js"
export * as AutoScavengeLayer from "./AutoScavengeLayer.js"
export { autoScavengeRoutes } from "./http/routes.js"
