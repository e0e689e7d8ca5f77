/**
 * Why the node refuses to start: every configuration problem found, each naming the option, where the
 * value came from and what is wrong, so one run shows everything to fix.
 */
import { Schema } from "effect"

/** Where a value was read from, precisely enough to find it again. */
export const Origin = Schema.Union(
  Schema.TaggedStruct("Default", {}),
  Schema.TaggedStruct("Yaml", { file: Schema.String, key: Schema.String, line: Schema.UndefinedOr(Schema.Number) }),
  Schema.TaggedStruct("Env", { variable: Schema.String }),
  Schema.TaggedStruct("Cli", { flag: Schema.String })
)
export type Origin = typeof Origin.Type

export const describeOrigin = (origin: Origin): string => {
  switch (origin._tag) {
    case "Default":
      return "the default"
    case "Yaml":
      return `config file ${origin.file} (${origin.line === undefined ? "" : `line ${origin.line}, `}key ${origin.key})`
    case "Env":
      return `environment variable ${origin.variable}`
    case "Cli":
      return `command line ${origin.flag}`
  }
}

export const ConfigProblem = Schema.Struct({
  /** The option concerned, when the problem is about one (not for unknown names or unparsable files). */
  option: Schema.UndefinedOr(Schema.String),
  origin: Schema.UndefinedOr(Origin),
  reason: Schema.String,
  /** A suggestion, e.g. the option an unknown name probably meant. */
  hint: Schema.optionalWith(Schema.String, { exact: true })
})
export type ConfigProblem = typeof ConfigProblem.Type

export const problem = (
  option: string | undefined,
  origin: Origin | undefined,
  reason: string,
  hint?: string
): ConfigProblem => ({ option, origin, reason, ...(hint === undefined ? {} : { hint }) })

/** `NodePort from command line --node-port: expected an integer, got "x"`; `unknown option: … (did you mean …?)`. */
export const describeProblem = (p: ConfigProblem): string => {
  const hint = p.hint === undefined ? "" : ` (${p.hint})`
  if (p.option !== undefined) {
    return `${p.option}${p.origin === undefined ? "" : ` from ${describeOrigin(p.origin)}`}: ${p.reason}${hint}`
  }
  return `${p.reason}${p.origin === undefined ? "" : `: ${describeOrigin(p.origin)}`}${hint}`
}

export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  problems: Schema.Array(ConfigProblem)
}) {
  override get message(): string {
    return this.problems.map(describeProblem).join("; ")
  }
}

/** A config file exists but cannot be read (not "missing", which the loader decides about). */
export class ConfigFileUnreadable extends Schema.TaggedError<ConfigFileUnreadable>()("ConfigFileUnreadable", {
  path: Schema.String,
  /** Why, for people (the disk's error, or the file is too large). */
  detail: Schema.String,
  /** The disk's error, when there is one. */
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `cannot read ${this.path}: ${this.detail}`
  }
}

/** The text for stderr when the node refuses to start (main exits with code 1 after printing it). */
export const formatConfigError = (error: ConfigError): string => {
  const count = error.problems.length
  return [
    `Vellum cannot start: ${count === 1 ? "a configuration problem" : `${count} configuration problems`}:`,
    ...error.problems.map((p) => `  - ${describeProblem(p)}`),
    "Run with --help to list the options."
  ].join("\n")
}
