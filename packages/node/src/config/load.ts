/**
 * Builds the node's configuration from its sources, with the reference's precedence (KurrentDB's
 * KurrentConfiguration.Build): defaults < YAML file < environment (EVENTSTORE_ < KURRENTDB_ < VELLUM_) <
 * command line. Pure: argv, environment and file reading are parameters, so tests and the simulator
 * drive it without a process.
 *
 * The node refuses to start on any problem (a bad value, an unknown name, an unreadable file); all
 * problems are collected into one ConfigError so a single run shows everything to fix.
 */
import { Effect, Either, Option } from "effect"
import {
  type ConfigFileUnreadable,
  ConfigError,
  type ConfigProblem,
  describeProblem,
  type Origin,
  problem
} from "./ConfigError.js"
import { readCommandLine } from "./cliArgs.js"
import { checkConsistency } from "./consistency.js"
import { type Environment, readEnvironment } from "./environment.js"
import { helpText, versionText } from "./help.js"
import { formatEffectiveConfig } from "./infoOptions.js"
import type { ConfigSources, LoadedConfig } from "./LoadedConfig.js"
import { refusedSettings } from "./optionSupport.js"
import { type Config, type OptionName, optionSpecs, type OptionSpec } from "./options.js"
import { type RawSetting, type SourceReading } from "./settings.js"
import { suggestFor } from "./suggest.js"
import { readYamlConfig } from "./yamlFile.js"

/** Reads a config file: `None` when it does not exist. */
export type ReadConfigFile<R> = (path: string) => Effect.Effect<Option.Option<string>, ConfigFileUnreadable, R>

export interface LoadConfigInput<R> {
  readonly argv: ReadonlyArray<string>
  readonly env: Environment
  readonly readFile: ReadConfigFile<R>
  /** The node's version, for `--version` and `--help`. */
  readonly version: string
}

export type ConfigOutcome =
  | { readonly _tag: "Start"; readonly loaded: LoadedConfig }
  | { readonly _tag: "Help"; readonly text: string }
  | { readonly _tag: "Version"; readonly text: string }
  /** `--what-if`: the effective configuration, printed instead of starting (nothing is opened or bound). */
  | { readonly _tag: "WhatIf"; readonly text: string }

const DEFAULT_ORIGIN: Origin = { _tag: "Default" }

/** The highest-precedence setting of an option among readings ordered lowest first. */
const effectiveSetting = (name: OptionName, readings: ReadonlyArray<SourceReading>): RawSetting | undefined => {
  for (let i = readings.length - 1; i >= 0; i--) {
    const setting = readings[i]!.settings.find((s) => s.spec.name === name)
    if (setting !== undefined) return setting
  }
  return undefined
}

const asksFor = (cli: SourceReading, name: "Help" | "Version"): boolean => {
  const setting = effectiveSetting(name, [cli])
  return setting !== undefined && Either.getOrElse(setting.spec.decode(setting.raw), () => false) === true
}

/** Reads the YAML file the command line or environment names (or the optional default one). */
const readConfigFile = <R>(
  readFile: ReadConfigFile<R>,
  spec: OptionSpec,
  located: RawSetting | undefined
): Effect.Effect<
  {
    readonly reading: SourceReading | undefined
    readonly problems: ReadonlyArray<ConfigProblem>
    readonly path?: string
  },
  never,
  R
> => {
  const origin = located?.origin ?? DEFAULT_ORIGIN
  const decoded = located === undefined ? Either.right(spec.defaultValue) : spec.decode(located.raw)
  if (Either.isLeft(decoded) || typeof decoded.right !== "string") {
    return Effect.succeed({ reading: undefined, problems: [] }) // reported with the other values
  }
  const path = decoded.right
  return readFile(path).pipe(
    Effect.map(
      Option.match({
        // The default file is optional; a file the user named must exist.
        onNone: () => ({
          reading: undefined,
          problems: located === undefined ? [] : [problem(spec.name, origin, `config file ${path} does not exist`)]
        }),
        onSome: (content) => ({ reading: readYamlConfig(content, path), problems: [], path })
      })
    ),
    Effect.catchAll((error) =>
      Effect.succeed({ reading: undefined, problems: [problem(spec.name, origin, error.message)] })
    )
  )
}

const unknownProblems = (readings: ReadonlyArray<SourceReading>, allowUnknown: boolean) => {
  const problems: Array<ConfigProblem> = []
  const warnings: Array<string> = []
  for (const origin of readings.flatMap((reading) => reading.unknown)) {
    const suggestion = suggestFor(origin)
    const hint = suggestion === undefined ? undefined : `did you mean ${suggestion}?`
    const unknown = problem(undefined, origin, "unknown option", hint)
    if (allowUnknown) warnings.push(`${describeProblem(unknown)}; ignored (AllowUnknownOptions)`)
    else problems.push(unknown)
  }
  return { problems, warnings }
}

export const loadConfig = <R>(input: LoadConfigInput<R>): Effect.Effect<ConfigOutcome, ConfigError, R> =>
  Effect.gen(function* () {
    const cli = readCommandLine(input.argv)
    if (asksFor(cli, "Help")) return { _tag: "Help", text: helpText(input.version) } as const
    if (asksFor(cli, "Version")) return { _tag: "Version", text: versionText(input.version) } as const

    const environment = readEnvironment(input.env)
    const configSpec = optionSpecs.find((spec) => spec.name === "Config")!
    const file = yield* readConfigFile(input.readFile, configSpec, effectiveSetting("Config", [...environment, cli]))
    const readings = [...(file.reading === undefined ? [] : [file.reading]), ...environment, cli]

    const problems: Array<ConfigProblem> = [...file.problems, ...readings.flatMap((reading) => reading.problems)]
    const warnings: Array<string> = readings.flatMap((reading) => reading.warnings)
    const values: Record<string, unknown> = {}
    const sources: Record<string, Origin> = {}
    for (const spec of optionSpecs) {
      const setting = effectiveSetting(spec.name, readings)
      if (setting === undefined) {
        values[spec.name] = spec.defaultValue
        sources[spec.name] = DEFAULT_ORIGIN
        continue
      }
      const decoded = spec.decode(setting.raw)
      if (Either.isLeft(decoded)) problems.push(problem(spec.name, setting.origin, decoded.left))
      else values[spec.name] = decoded.right
      sources[spec.name] = setting.origin
      if (spec.deprecation !== undefined) warnings.push(`${spec.name} is deprecated: ${spec.deprecation}`)
    }
    // Every option got a value above (its default or a decoded one of its own type), or a problem was
    // recorded and this object is never returned.
    const config = values as Config
    const unknown = unknownProblems(readings, config.AllowUnknownOptions === true)
    problems.push(...unknown.problems)
    warnings.push(...unknown.warnings)
    if (problems.length === 0) {
      const consistency = checkConsistency(config, sources as ConfigSources)
      problems.push(...consistency.problems, ...refusedSettings(config, sources as ConfigSources))
      warnings.push(...consistency.warnings)
    }
    if (problems.length > 0) return yield* Effect.fail(new ConfigError({ problems }))
    const loaded: LoadedConfig = {
      config,
      sources: sources as ConfigSources,
      warnings,
      ...(file.path === undefined ? {} : { configFile: file.path })
    }
    if (config.WhatIf) return { _tag: "WhatIf", text: formatEffectiveConfig(loaded) } as const
    return { _tag: "Start", loaded } as const
  })
