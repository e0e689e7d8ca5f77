import { assert } from "@vellum/platform"
import { Effect, Either, Schema } from "effect"
import type { Sandbox } from "../runtime/sandbox.js"
import type { SandboxError } from "../runtime/sandboxErrors.js"
import { definitionPrelude } from "./definitionPrelude.js"
import { ProjectionCompileFault } from "./languageErrors.js"
import { SourceDefinition } from "./SourceDefinition.js"

// The definition phase: the definition functions are installed, the user's script runs once at top level under
// the compile budget, and its recorded definition is read back. The handlers stay inside the sandbox (see
// definitionPrelude) for the execution phase; the definition functions are gone when this returns.

const Outcome = Schema.Array(
  Schema.Union(Schema.Struct({ definition: SourceDefinition }), Schema.Struct({ fault: Schema.String }))
)
const decodeOutcome = Schema.decodeUnknownEither(Schema.parseJson(Outcome))

// Only a script error and a timeout carry the JavaScript stack (an error's own `stack` is the host's).
const compileFault = (error: SandboxError): ProjectionCompileFault =>
  new ProjectionCompileFault({
    message: error.message,
    stack: error._tag === "SandboxScriptError" || error._tag === "SandboxTimeout" ? error.stack : ""
  })

/** Runs `source` as a projection's definition in a fresh `sandbox`: its source definition, or why it faults. */
export const compileProjection = (
  sandbox: Sandbox,
  source: string
): Effect.Effect<SourceDefinition, ProjectionCompileFault> =>
  Effect.gen(function* () {
    // The prelude is ours: a failure there is a defect, not the projection's fault.
    yield* Effect.orDieWith(
      sandbox.compile(definitionPrelude),
      (error) => `the definition prelude failed: ${error.message}`
    )
    yield* Effect.mapError(sandbox.compile(source), compileFault)
    const json = yield* Effect.mapError(
      sandbox.runBatch("__projectionEndDefinition", { items: "[null]", now: [0], seed: [0] }),
      compileFault
    )
    const outcome = decodeOutcome(json)
    // Only a script that tampered with the built-ins the runner relies on can make the outcome unreadable.
    if (Either.isLeft(outcome))
      return yield* new ProjectionCompileFault({ message: "The projection's definition could not be read", stack: "" })
    const [only] = outcome.right
    assert(only !== undefined, "the end of a definition gives one outcome")
    if ("fault" in only) return yield* new ProjectionCompileFault({ message: only.fault, stack: "" })
    return only.definition
  })
