/**
 * The configuration a node starts with: the effective values, and where each came from. Its own module
 * because the checks that `load.ts` runs (consistency, refused settings, the effective-config listing)
 * take these types too, and `load.ts` imports those checks.
 */
import type { Origin } from "./ConfigError.js"
import type { Config, OptionName } from "./options.js"

/** Where each option's effective value came from. */
export type ConfigSources = { readonly [K in OptionName]: Origin }

export interface LoadedConfig {
  readonly config: Config
  readonly sources: ConfigSources
  /** Things worth logging at start-up that do not stop the node (old names, ignored variables, ...). */
  readonly warnings: ReadonlyArray<string>
  /** The YAML file that was read, as named (undefined when there was none). */
  readonly configFile?: string
}
