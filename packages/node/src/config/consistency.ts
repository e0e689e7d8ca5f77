/**
 * Rules between options, checked once every value is valid on its own. A rule that would make the
 * node misbehave is a problem (the node does not start); one that is merely surprising is a warning.
 */
import { type ConfigProblem, problem } from "./ConfigError.js"
import { autoScavengeConflict } from "./autoScavengeEnablement.js"
import { checkClusterConsistency } from "./clusterConsistency.js"
import type { ConfigSources } from "./LoadedConfig.js"
import type { Config } from "./options.js"

/**
 * Room a record needs besides the event's data and metadata (framing, stream name, event type, ids), so
 * that the largest allowed event still fits in one chunk. Generous on purpose: names are short in practice.
 */
export const RECORD_ALLOWANCE = 64 * 1024

export const checkConsistency = (
  config: Config,
  sources: ConfigSources
): { readonly problems: ReadonlyArray<ConfigProblem>; readonly warnings: ReadonlyArray<string> } => {
  const problems: Array<ConfigProblem> = []
  const warnings: Array<string> = []

  if (config.MaxAppendEventSize + RECORD_ALLOWANCE > config.ChunkSize) {
    const blamed = sources.ChunkSize._tag === "Default" ? "MaxAppendEventSize" : "ChunkSize"
    problems.push(
      problem(
        blamed,
        sources[blamed],
        `an event of MaxAppendEventSize (${config.MaxAppendEventSize} bytes) plus ${RECORD_ALLOWANCE} bytes of record ` +
          `overhead must fit in one chunk of ChunkSize (${config.ChunkSize} bytes); lower MaxAppendEventSize or raise ChunkSize`
      )
    )
  }
  if (!config.WriteStatsToDb && sources.StatsPeriodSec._tag !== "Default") {
    warnings.push(
      "StatsPeriodSec only sets how often stats are written with WriteStatsToDb, which is off: it has no effect"
    )
  }
  problems.push(...autoScavengeConflict(config, sources))
  const cluster = checkClusterConsistency(config, sources)
  return { problems: [...problems, ...cluster.problems], warnings: [...warnings, ...cluster.warnings] }
}
