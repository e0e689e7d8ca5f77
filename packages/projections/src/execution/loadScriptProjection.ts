// A user projection ready to run: its sandbox (freed with the scope), its checked source definition and its handler.
import { Effect, type Scope } from "effect"
import { compileProjection } from "../language/compileProjection.js"
import { ProjectionCompileFault, type SourceDefinitionInvalid } from "../language/languageErrors.js"
import type { SourceDefinition } from "../language/SourceDefinition.js"
import { validateSourceDefinition } from "../language/validateSourceDefinition.js"
import type { ProjectionHandler } from "../engine/ProjectionHandler.js"
import { Sandbox } from "../runtime/sandbox.js"
import { executionPrelude } from "./executionPrelude.js"
import { makeScriptHandler } from "./scriptHandler.js"
import { budgetForMillis, timeoutMessage } from "./timeouts.js"

export interface ScriptProjectionOptions {
  /** The reference's `ProjectionCompilationTimeout` (ms, 500 by default): the script's top level. */
  readonly compilationTimeoutMillis: number
  /** The reference's `ProjectionExecutionTimeout` (ms, 250 by default): each entry into a handler. */
  readonly executionTimeoutMillis: number
  /** What the projection's interpreter may allocate (the sandbox's default when absent). */
  readonly memoryBytes?: number
}

export interface ScriptProjection {
  readonly definition: SourceDefinition
  readonly handler: ProjectionHandler
}

// The sandbox words its own budget stop; the projection's status shows the reference's words instead.
const SANDBOX_COMPILE_STOP = "Projection script took too long to compile (budget of "

/** Compiles, checks and prepares the projection `name`'s `query` in a sandbox of its own. */
export const loadScriptProjection = (
  name: string,
  query: string,
  options: ScriptProjectionOptions
): Effect.Effect<ScriptProjection, ProjectionCompileFault | SourceDefinitionInvalid, Scope.Scope> =>
  Effect.gen(function* () {
    const sandbox = yield* Sandbox.make(name, {
      compileBudget: budgetForMillis(options.compilationTimeoutMillis),
      executionBudget: budgetForMillis(options.executionTimeoutMillis),
      ...(options.memoryBytes === undefined ? {} : { memoryBytes: options.memoryBytes })
    })
    // Before the user's script, so that the runtime keeps the real built-ins whatever the script replaces.
    yield* Effect.orDieWith(
      sandbox.compile(executionPrelude),
      (error) => `the execution prelude failed: ${error.message}`
    )
    const definition = yield* Effect.mapError(compileProjection(sandbox, query), (fault) =>
      fault.message.startsWith(SANDBOX_COMPILE_STOP)
        ? new ProjectionCompileFault({
            message: timeoutMessage("compile", options.compilationTimeoutMillis),
            stack: fault.stack
          })
        : fault
    )
    yield* validateSourceDefinition(definition)
    const config = JSON.stringify([
      { biState: definition.options.isBiState, definesStateTransform: definition.options.definesStateTransform }
    ])
    // Only a script that broke the sandbox's batch runner (replacing `globalThis`, say) can make this fail.
    yield* Effect.mapError(
      sandbox.runBatch("__projectionStartExecution", { items: config, now: [0], seed: [0] }),
      (error) => new ProjectionCompileFault({ message: error.message, stack: "" })
    )
    return { definition, handler: makeScriptHandler(sandbox, definition, options) }
  })
