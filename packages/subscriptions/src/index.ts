// @vellum/subscriptions: persistent subscriptions (competing consumers). Built so far: the group settings
// and their parsing, the persisted formats, and one group's delivery as a pure state machine. Not wired
// into the node yet: the HTTP API answers 501 for /subscriptions (docs/architecture.md).
export * from "./config/GroupSettings.js"
export * from "./group/index.js"
