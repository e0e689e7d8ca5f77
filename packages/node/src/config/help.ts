/**
 * `--help` and `--version` texts, generated from the option table so they cannot drift from it.
 */
import { kebabCase } from "./naming.js"
import { groupTitles, type OptionGroup, optionSpecs, type OptionSpec } from "./options.js"

export const versionText = (version: string): string => `Vellum ${version}`

const usage = (flag: string, spec: OptionSpec): string =>
  spec.kind === "boolean" ? flag : `${flag}=${spec.placeholder}`

const explanation = (spec: OptionSpec): string => {
  const notes = [
    spec.defaultText === "" ? undefined : `default: ${spec.defaultText}`,
    spec.aliases.length === 0
      ? undefined
      : `old name: ${spec.aliases.map((alias) => `--${kebabCase(alias)}`).join(", ")}`,
    spec.alsoNamed.length === 0 ? undefined : `also ${spec.alsoNamed.map((name) => `--${kebabCase(name)}`).join(", ")}`
  ].filter((note) => note !== undefined)
  return notes.length === 0 ? spec.description : `${spec.description} (${notes.join("; ")})`
}

const table = (rows: ReadonlyArray<readonly [string, string]>, width: number): Array<string> =>
  rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`)

export const helpText = (version: string): string => {
  const settable = optionSpecs.filter((spec) => spec.onlyFrom === undefined || spec.onlyFrom.includes("cli"))
  const envOnly = optionSpecs.filter((spec) => spec.onlyFrom !== undefined && !spec.onlyFrom.includes("cli"))
  const left = (spec: OptionSpec) => (settable.includes(spec) ? usage(spec.cliFlag, spec) : spec.envName)
  const width = Math.max(...optionSpecs.map((spec) => left(spec).length))

  const lines = [
    `${versionText(version)}: an event database that speaks the EventStoreDB/KurrentDB HTTP (AtomPub) interface.`,
    "",
    "Usage: vellum [--option[=value] ...]",
    "",
    "Every option can be given on the command line (--kebab-case), in the environment (VELLUM_UPPER_SNAKE_CASE;",
    "KURRENTDB_ and EVENTSTORE_ names are read too) or in the YAML config file (PascalCase keys). The command line",
    "wins over the environment, which wins over the config file, which wins over the defaults. Booleans may be",
    "given as --mem-db, --mem-db=true or --mem-db false. Unknown options stop the node (see --allow-unknown-options)."
  ]
  const groups = Object.keys(groupTitles) as Array<OptionGroup>
  for (const group of groups) {
    const specs = settable.filter((spec) => spec.group === group)
    if (specs.length === 0) continue
    lines.push(
      "",
      groupTitles[group],
      ...table(
        specs.map((spec) => [left(spec), explanation(spec)] as const),
        width
      )
    )
  }
  if (envOnly.length > 0) {
    lines.push(
      "",
      "Environment-only Options (never on the command line or in files, where other users could read them)",
      ...table(
        envOnly.map((spec) => [left(spec), explanation(spec)] as const),
        width
      )
    )
  }
  return lines.join("\n")
}
