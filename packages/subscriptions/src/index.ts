// @vellum/subscriptions: persistent subscriptions (competing consumers). Built so far: the group settings
// and their parsing, the persisted formats, and one group's delivery as a pure state machine. Not wired
// into the node yet: the HTTP API answers 501 for /subscriptions (docs/architecture.md).
export * from "./config/GroupSettings.js"
export * from "./config/BodyTree.js"
export * from "./config/parseGroupSettings.js"
export * from "./config/renderGroupSettings.js"
export * from "./persisted/checkpoint.js"
export * from "./persisted/groupDefinitions.js"
export * from "./persisted/parkedMessages.js"
export type * from "./persisted/PersistedEvent.js"
export * from "./persisted/streamNames.js"
export * from "./group/index.js"
export * from "./service/Subscriptions.js"
export { subscriptionRoutes, type SubscriptionRouteRequirements } from "./http/routes.js"
