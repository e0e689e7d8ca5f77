/**
 * The `/info/options` document: one entry per option, in table order, shaped like
 * the reference's OptionStructure — `{name, description, group, value, configurationSource,
 * deprecationMessage, schema}` — with sensitive values masked as `********` and the reference's source
 * names (`<DEFAULT>`, `Yaml`, `Environment Variables`, `Command Line`). The same rows print for `--what-if`.
 */
import type { Origin } from "./ConfigError.js"
import type { LoadedConfig } from "./LoadedConfig.js"
import { optionSpecs } from "./options.js"
import type { OptionJsonSchema } from "./valueTypes.js"

export interface InfoOption {
  readonly name: string
  readonly description: string
  /** The reference's option-section type name, e.g. `InterfaceOptions`. */
  readonly group: string
  /** The value as text (lists comma-separated); `********` for sensitive options. */
  readonly value: string
  readonly configurationSource: string
  /** `null`, not omitted, as the reference serializes nulls. */
  readonly deprecationMessage: string | null
  readonly schema: OptionJsonSchema
}

export const SENSITIVE_MASK = "********"

export const sourceDisplayName = (origin: Origin): string => {
  switch (origin._tag) {
    case "Default":
      return "<DEFAULT>"
    case "Yaml":
      return "Yaml"
    case "Env":
      return "Environment Variables"
    case "Cli":
      return "Command Line"
  }
}

export const infoOptions = (loaded: Pick<LoadedConfig, "config" | "sources">): ReadonlyArray<InfoOption> =>
  optionSpecs.map((spec) => ({
    name: spec.name,
    description: spec.description,
    group: `${spec.group}Options`,
    value: spec.sensitive ? SENSITIVE_MASK : spec.encode(loaded.config[spec.name]),
    configurationSource: sourceDisplayName(loaded.sources[spec.name]),
    deprecationMessage: spec.deprecation ?? null,
    schema: spec.jsonSchema
  }))

/** The `--what-if` text: options changed from their defaults first, each with its source. */
export const formatEffectiveConfig = (loaded: Pick<LoadedConfig, "config" | "sources">): string => {
  const rows = infoOptions(loaded)
  const width = Math.max(...rows.map((row) => row.name.length))
  const line = (row: InfoOption) => `    ${`${row.name}:`.padEnd(width + 1)} ${row.value} (${row.configurationSource})`
  const modified = rows.filter((row) => row.configurationSource !== "<DEFAULT>")
  const defaults = rows.filter((row) => row.configurationSource === "<DEFAULT>")
  return [
    "MODIFIED OPTIONS:",
    ...(modified.length === 0 ? ["    (none)"] : modified.map(line)),
    "",
    "DEFAULT OPTIONS:",
    ...defaults.map(line)
  ].join("\n")
}
