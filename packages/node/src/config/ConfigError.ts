/**
 * Why the node refuses to start: every configuration problem found, each naming the option, where the
 * value came from and what is wrong, so one run shows everything to fix.
 */
import { Data } from "effect"

/** Where a value was read from, precisely enough to find it again. */
export type Origin =
  | { readonly _tag: "Default" }
  | { readonly _tag: "Yaml"; readonly file: string; readonly key: string; readonly line: number | undefined }
  | { readonly _tag: "Env"; readonly variable: string }
  | { readonly _tag: "Cli"; readonly flag: string }

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

export interface ConfigProblem {
  /** The option concerned, when the problem is about one (not for unknown names or unparsable files). */
  readonly option: string | undefined
  readonly origin: Origin | undefined
  readonly reason: string
  /** A suggestion, e.g. the option an unknown name probably meant. */
  readonly hint?: string
}

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

export class ConfigError extends Data.TaggedError("ConfigError")<{ readonly problems: ReadonlyArray<ConfigProblem> }> {
  override get message(): string {
    return this.problems.map(describeProblem).join("; ")
  }
}

/** A config file exists but cannot be read (not "missing", which the loader decides about). */
export class ConfigFileUnreadable extends Data.TaggedError("ConfigFileUnreadable")<{
  readonly path: string
  readonly reason: string
}> {
  override get message(): string {
    return `cannot read ${this.path}: ${this.reason}`
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
