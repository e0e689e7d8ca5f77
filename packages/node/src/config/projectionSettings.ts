/**
 * The projections subsystem's settings from the node's options: which projections run, whether the system
 * projections start, the script limits, and how long an unused transient query lives.
 */
import { defaultProjectionsSettings, type ProjectionsSettings } from "@vellum/projections"
import type { Config } from "./options.js"

export const toProjectionsSettings = (config: Config): ProjectionsSettings => ({
  ...defaultProjectionsSettings,
  runProjections: config.RunProjections,
  startStandardProjections: config.StartStandardProjections,
  compilationTimeoutMillis: config.ProjectionCompilationTimeout,
  executionTimeoutMillis: config.ProjectionExecutionTimeout,
  maxStateSizeBytes: config.MaxProjectionStateSize,
  queryExpiryMillis: config.ProjectionsQueryExpiry * 60_000
})
