/**
 * Whether a node runs auto-scavenge. It is on by default, with no licence to check (docs/decisions.md). It is
 * off when `AutoScavenge:Enabled` is false, and off with an in-memory database unless the option is set: a
 * node that keeps nothing on disk has nothing worth scavenging, and a scavenge point in memory would not
 * survive the cluster it coordinates. Set explicitly to true there, the node refuses to start instead of
 * silently ignoring what it was asked. (The reference treats its dev mode alike; Vellum has no dev mode.)
 */
import { type ConfigProblem, problem } from "./ConfigError.js"
import type { ConfigSources } from "./LoadedConfig.js"
import type { Config } from "./options.js"

export type AutoScavengeEnablement = { readonly enabled: true } | { readonly enabled: false; readonly reason: string }

const NOT_WITH_MEM_DB = "AutoScavenge is not compatible with mem-db"

/**
 * The decision for a configuration that loaded: an explicit true with MemDb never gets here (the load
 * refuses it, `autoScavengeConflict`), so MemDb alone turns it off.
 */
export const autoScavengeEnablement = (config: Config): AutoScavengeEnablement => {
  if (!config.AutoScavengeEnabled) {
    return { enabled: false, reason: "to enable it, leave AutoScavenge:Enabled unset or set it to true" }
  }
  if (config.MemDb) return { enabled: false, reason: NOT_WITH_MEM_DB }
  return { enabled: true }
}

/** The start-up log line. */
export const describeAutoScavengeEnablement = (enablement: AutoScavengeEnablement): string =>
  enablement.enabled ? "Auto-scavenge enabled" : `Auto-scavenge disabled: ${enablement.reason}`

/** The load-time refusal: auto-scavenge asked for explicitly on a node with an in-memory database. */
export const autoScavengeConflict = (config: Config, sources: ConfigSources): ReadonlyArray<ConfigProblem> =>
  config.AutoScavengeEnabled && config.MemDb && sources.AutoScavengeEnabled._tag !== "Default"
    ? [
        problem(
          "AutoScavengeEnabled",
          sources.AutoScavengeEnabled,
          `${NOT_WITH_MEM_DB}: leave AutoScavenge:Enabled unset (or false) with --mem-db, or run on disk without --mem-db`
        )
      ]
    : []
