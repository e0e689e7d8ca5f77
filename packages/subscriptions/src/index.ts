// @vellum/subscriptions: persistent subscriptions (competing consumers): the group settings and their
// parsing, the persisted formats, one group's delivery as a pure state machine, and the service that runs
// every group on the leader (`Subscriptions`, built by `SubscriptionsLayer.layer`), and its HTTP routes
// (`subscriptionRoutes`).
export * from "./config/GroupSettings.js"
export * from "./config/parseGroupSettings.js"
export * from "./config/renderGroupSettings.js"
export * from "./persisted/checkpoint.js"
export * from "./persisted/groupDefinitions.js"
export * from "./persisted/parkedMessages.js"
export type * from "./persisted/PersistedEvent.js"
export * from "./persisted/streamNames.js"
export * from "./group/index.js"
export * from "./service/Subscriptions.js"
export * as SubscriptionsLayer from "./SubscriptionsLayer.js"
export { defaultSubscriptionsSettings, type SubscriptionsSettings } from "./service/makeSubscriptions.js"
export { subscriptionRoutes, type SubscriptionRouteRequirements } from "./http/routes.js"
