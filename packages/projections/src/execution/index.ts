export * from "./loadScriptProjection.js"
export { budgetForMillis, timeSpanText, timeoutMessage } from "./timeouts.js"
export { MAX_EVENT_NESTING } from "./itemCodec.js"
