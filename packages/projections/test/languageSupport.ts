import { Effect, Either } from "effect"
import { compileProjection } from "../src/language/compileProjection.js"
import type { ProjectionCompileFault } from "../src/language/languageErrors.js"
import { emptySourceDefinition, type SourceDefinition } from "../src/language/SourceDefinition.js"
import { Sandbox, type SandboxLimits } from "../src/runtime/sandbox.js"

/** Compiles `source` in a fresh sandbox: its definition, or its fault. */
export const compile = (
  source: string,
  limits: Partial<SandboxLimits> = {}
): Promise<Either.Either<SourceDefinition, ProjectionCompileFault>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(Sandbox.make("p", limits), (sandbox) => Effect.either(compileProjection(sandbox, source)))
    )
  )

export const definitionOf = async (source: string): Promise<SourceDefinition> => {
  const result = await compile(source)
  if (Either.isLeft(result)) throw new Error(`expected a definition, got the fault ${result.left.message}`)
  return result.right
}

export const faultOf = async (source: string, limits: Partial<SandboxLimits> = {}): Promise<ProjectionCompileFault> => {
  const result = await compile(source, limits)
  if (Either.isRight(result)) throw new Error(`expected a fault, got ${JSON.stringify(result.right)}`)
  return result.left
}

/** The definition of a script that declares nothing. */
export const emptyDefinition: SourceDefinition = emptySourceDefinition

/** The empty definition with `changes` (and `options` changes) applied. */
export const definitionWith = (
  changes: Partial<Omit<SourceDefinition, "options">>,
  options: Partial<SourceDefinition["options"]> = {}
): SourceDefinition => ({ ...emptyDefinition, ...changes, options: { ...emptyDefinition.options, ...options } })
