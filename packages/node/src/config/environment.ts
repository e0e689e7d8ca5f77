/**
 * Environment variables: `VELLUM_` + the option's name in upper snake case, `__` for nested keys
 * (`VELLUM_NODE_PORT`, `VELLUM_AUTO_SCAVENGE__ENABLED`). The reference's own prefixes are read too, so
 * compose files written for KurrentDB/EventStoreDB work unchanged: `EVENTSTORE_` (lowest), then
 * `KURRENTDB_`, then `VELLUM_` (highest), each its own layer.
 *
 * An unknown `VELLUM_` name is an error (our namespace, so it is a typo). Unknown `KURRENTDB_`/`EVENTSTORE_`
 * names only warn: the same environment often carries client settings (`KURRENTDB_CONNECTION_STRING`)
 * and reference options Vellum does not have (certificates, telemetry).
 */
import { envKeyToPath } from "./naming.js"
import { ENV_PREFIXES, type EnvPrefix, findOption, PRIMARY_ENV_PREFIX } from "./options.js"
import { SourceCollector, type SourceReading } from "./settings.js"

export type Environment = Readonly<Record<string, string | undefined>>

const readPrefix = (env: Environment, prefix: EnvPrefix): SourceReading => {
  const collector = new SourceCollector("env")
  const names = Object.keys(env)
    .filter((name) => name.length > prefix.length && name.toUpperCase().startsWith(prefix))
    .sort()
  for (const variable of names) {
    const raw = env[variable]
    if (raw === undefined) continue
    const found = findOption(envKeyToPath(variable.slice(prefix.length)))
    if (found !== undefined) collector.add(found, raw, { _tag: "Env", variable })
    else if (prefix === PRIMARY_ENV_PREFIX) collector.addUnknown({ _tag: "Env", variable })
    else collector.addWarning(`environment variable ${variable} is not a Vellum option; ignored`)
  }
  return collector.result()
}

/** One reading per prefix, lowest precedence first. */
export const readEnvironment = (env: Environment): ReadonlyArray<SourceReading> =>
  ENV_PREFIXES.map((prefix) => readPrefix(env, prefix))
