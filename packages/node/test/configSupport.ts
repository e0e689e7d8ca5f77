// Shared helpers for the configuration tests: run loadConfig synchronously over in-memory inputs.
import { Effect, Either, Option } from "effect"
import {
  type ConfigError,
  type ConfigOutcome,
  type LoadedConfig,
  loadConfig,
  type ReadConfigFile
} from "../src/config/index.js"
import { ConfigFileUnreadable } from "../src/config/ConfigError.js"

export interface Inputs {
  readonly argv?: ReadonlyArray<string>
  readonly env?: Record<string, string>
  /** Files by path; a path mapped to an Error is unreadable. */
  readonly files?: Record<string, string | Error>
}

export const filesReader =
  (files: Record<string, string | Error>): ReadConfigFile<never> =>
  (path) => {
    const content = files[path]
    if (content === undefined) return Effect.succeed(Option.none())
    if (content instanceof Error) return Effect.fail(new ConfigFileUnreadable({ path, detail: content.message }))
    return Effect.succeed(Option.some(content))
  }

export const outcome = (inputs: Inputs): Either.Either<ConfigOutcome, ConfigError> =>
  Effect.runSync(
    Effect.either(
      loadConfig({
        argv: inputs.argv ?? [],
        env: inputs.env ?? {},
        readFile: filesReader(inputs.files ?? {}),
        version: "1.2.3"
      })
    )
  )

/** Loads and expects the node to start. */
export const load = (inputs: Inputs): LoadedConfig => {
  const result = outcome(inputs)
  if (Either.isLeft(result)) throw new Error(`expected a configuration, got: ${result.left.message}`)
  if (result.right._tag !== "Start") throw new Error(`expected a configuration, got ${result.right._tag}`)
  return result.right.loaded
}

/** Loads and expects a ConfigError; returns it. */
export const fail = (inputs: Inputs): ConfigError => {
  const result = outcome(inputs)
  if (Either.isRight(result)) throw new Error(`expected a ConfigError, got ${result.right._tag}`)
  return result.left
}
