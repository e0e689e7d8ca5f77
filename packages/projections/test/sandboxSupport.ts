import { Effect, Either } from "effect"
import { Sandbox, type SandboxLimits } from "../src/runtime/sandbox.js"
import type { SandboxError } from "../src/runtime/sandboxErrors.js"

/** Runs `body` with a fresh sandbox that is freed afterwards. */
export const withSandbox = <A>(
  name: string,
  body: (sandbox: Sandbox) => Effect.Effect<A, SandboxError>,
  limits: Partial<SandboxLimits> = {}
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.flatMap(Sandbox.make(name, limits), body)))

/** A batch of the given inputs, each at clock `now` (default 0) with seed `seed` (default 0). */
export const batchOf = (inputs: ReadonlyArray<unknown>, now = 0, seed = 0) => ({
  items: JSON.stringify(inputs),
  now: inputs.map(() => now),
  seed: inputs.map(() => seed)
})

/** Compiles `source` then calls the global `probe` once with no input, giving its result. */
export const probe = (sandbox: Sandbox, source: string): Effect.Effect<unknown, SandboxError> =>
  Effect.gen(function* () {
    yield* sandbox.compile(source)
    const json = yield* sandbox.runBatch("probe", batchOf([null]))
    return (JSON.parse(json) as Array<unknown>)[0]
  })

export const failureOf = <A>(effect: Effect.Effect<A, SandboxError>): Effect.Effect<SandboxError, string> =>
  Effect.flatMap(Effect.either(effect), (result) =>
    Either.isLeft(result) ? Effect.succeed(result.left) : Effect.fail(`expected a failure, got ${String(result.right)}`)
  )
