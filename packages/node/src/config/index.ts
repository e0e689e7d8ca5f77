// The node's configuration: the option table, loading (CLI > env > YAML > defaults), help, /info/options.
export {
  type Config,
  defaultConfig,
  groupTitles,
  type OptionGroup,
  type OptionName,
  optionSpecs,
  type OptionSpec,
  optionTable
} from "./options.js"
export {
  ConfigError,
  ConfigFileUnreadable,
  type ConfigProblem,
  describeOrigin,
  formatConfigError,
  type Origin
} from "./ConfigError.js"
export { type ConfigOutcome, type LoadConfigInput, loadConfig, type ReadConfigFile } from "./load.js"
export type { ConfigSources, LoadedConfig } from "./LoadedConfig.js"
export { readConfigFileFromDisk } from "./configFile.js"
export { helpText, versionText } from "./help.js"
export {
  formatEffectiveConfig,
  infoOptions,
  type InfoOption,
  SENSITIVE_MASK,
  sourceDisplayName
} from "./infoOptions.js"
export {
  toAdvertiseAs,
  toClusterSettings,
  toLogLevel,
  toScavengerSettings,
  toSecurityConfig,
  toServeLimits,
  toStorageConfig
} from "./derive.js"
export { NodeConfig } from "./NodeConfig.js"
export { optionSupport, type OptionSupport, refusedSettings } from "./optionSupport.js"
export {
  type AutoScavengeEnablement,
  autoScavengeEnablement,
  describeAutoScavengeEnablement
} from "./autoScavengeEnablement.js"
