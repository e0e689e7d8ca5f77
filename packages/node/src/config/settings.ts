/**
 * What one configuration source (command line, one environment prefix, the YAML file) said: raw text per
 * option, before precedence and decoding. The rules every source shares live here: an option may be
 * given once per source, some options are restricted to some sources, old names warn.
 */
import { type ConfigProblem, describeOrigin, type Origin, problem } from "./ConfigError.js"
import { type OptionSpec, type SourceKind } from "./options.js"

export type SettableSource = Exclude<SourceKind, "default">

export interface RawSetting {
  readonly spec: OptionSpec
  readonly raw: string
  readonly origin: Origin
}

export interface SourceReading {
  readonly settings: ReadonlyArray<RawSetting>
  readonly problems: ReadonlyArray<ConfigProblem>
  /** Names matching no option: errors, unless AllowUnknownOptions turns them into warnings. */
  readonly unknown: ReadonlyArray<Origin>
  readonly warnings: ReadonlyArray<string>
}

const sourceLabels: Readonly<Record<SettableSource, string>> = {
  cli: "on the command line",
  env: "in the environment",
  yaml: "in the config file"
}

/** Where an option can be set, for the message when it is set elsewhere. */
const allowedPlaces = (spec: OptionSpec, allowed: ReadonlyArray<SettableSource>): string =>
  allowed
    .map((source) =>
      source === "cli"
        ? `on the command line (${spec.cliFlag})`
        : source === "env"
          ? `with an environment variable (${spec.envName})`
          : `in the config file (${spec.yamlKey})`
    )
    .join(" or ")

/** Accumulates one source's reading, enforcing the shared rules. */
export class SourceCollector {
  private readonly settings: Array<RawSetting> = []
  private readonly problems: Array<ConfigProblem> = []
  private readonly unknown: Array<Origin> = []
  private readonly warnings: Array<string> = []
  private readonly seen = new Map<string, Origin>()

  constructor(private readonly source: SettableSource) {}

  add(found: { readonly spec: OptionSpec; readonly alias: string | undefined }, raw: string, origin: Origin): void {
    const { alias, spec } = found
    if (spec.onlyFrom !== undefined && !spec.onlyFrom.includes(this.source)) {
      this.problems.push(problem(spec.name, origin, `can only be set ${allowedPlaces(spec, spec.onlyFrom)}`))
      return
    }
    const earlier = this.seen.get(spec.name)
    if (earlier !== undefined) {
      this.problems.push(
        problem(
          spec.name,
          origin,
          `is given more than once ${sourceLabels[this.source]} (also as ${describeOrigin(earlier)})`
        )
      )
      return
    }
    this.seen.set(spec.name, origin)
    if (alias !== undefined) {
      this.warnings.push(
        `${alias} is the old name of ${spec.name}; prefer ${spec.cliFlag} / ${spec.envName} / ${spec.yamlKey}`
      )
    }
    this.settings.push({ spec, raw, origin })
  }

  addUnknown(origin: Origin): void {
    this.unknown.push(origin)
  }

  addProblem(p: ConfigProblem): void {
    this.problems.push(p)
  }

  addWarning(text: string): void {
    this.warnings.push(text)
  }

  result(): SourceReading {
    return { settings: this.settings, problems: this.problems, unknown: this.unknown, warnings: this.warnings }
  }
}
