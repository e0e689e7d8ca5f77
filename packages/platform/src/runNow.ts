/**
 * Runs a generator written as for `Effect.gen` at once, in plain code, for as long as every Effect it yields is
 * already settled: an `Exit` (`Effect.succeed`, `Effect.fail`, `Effect.void`) is taken as its value, a service
 * Tag is looked up in the given services. The first Effect that must really run (a disk read, an Effect that
 * is not yet a value) hands the rest of the very same generator to an Effect, which resumes it where it
 * stopped: nothing runs twice, and there is one implementation for both ways.
 *
 * So a read whose facts are all in memory costs no fiber and no Effect step, and one that misses finishes as
 * an Effect. The result is an `Exit` when the generator finished now (see `Exit.isExit`), else an Effect.
 * A failure ends the generator as `Effect.gen` does (it is not thrown into it).
 */
import { Context, Effect, Either, Exit } from "effect"
import { yieldWrapGet, type YieldWrap } from "effect/Utils"

/** What a generator for `runNow` (and `Effect.gen`) yields: `yield*` on an Effect gives these. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Steps<A, E, R = never> = Generator<YieldWrap<Effect.Effect<any, E, R>>, A, any>

export const runNow = <A, E, R>(
  steps: Steps<A, E, R>,
  services: Context.Context<R> = Context.empty() as Context.Context<R>
): Effect.Effect<A, E, R> => resume(steps, undefined, services)

const resume = <A, E, R>(
  steps: Steps<A, E, R>,
  input: unknown,
  services: Context.Context<R>
): Effect.Effect<A, E, R> => {
  let value = input
  for (;;) {
    const step = steps.next(value)
    if (step.done === true) return Exit.succeed(step.value)
    const effect: Effect.Effect<unknown, E, R> = yieldWrapGet(step.value)
    if (Exit.isExit(effect)) {
      if (Exit.isFailure(effect)) return effect as Exit.Exit<never, E>
      value = effect.value
      continue
    }
    if (Context.isTag(effect)) {
      const service = Context.getOption(services, effect as Context.Tag<unknown, unknown>)
      if (service._tag === "Some") {
        value = service.value
        continue
      }
    }
    return Effect.flatMap(effect, (next) => resume(steps, next, services))
  }
}

/** `f` of an Effect's value: plain when it has settled (a success stays an `Exit`), else in an Effect. */
export const mapNow = <A, B, E, R>(effect: Effect.Effect<A, E, R>, f: (a: A) => B): Effect.Effect<B, E, R> =>
  Exit.isExit(effect)
    ? Exit.isSuccess(effect)
      ? Exit.succeed(f(effect.value as A))
      : (effect as Exit.Exit<never, E>)
    : Effect.map(effect, f)

/** `f` of an Effect's failure, kept settled when it is (an `Exit` stays one). */
export const mapErrorNow = <A, E, E2, R>(effect: Effect.Effect<A, E, R>, f: (e: E) => E2): Effect.Effect<A, E2, R> => {
  if (!Exit.isExit(effect)) return Effect.mapError(effect, f)
  const exit = effect as Exit.Exit<A, E>
  if (Exit.isSuccess(exit)) return Exit.succeed(exit.value)
  return exit.cause._tag === "Fail" ? Exit.fail(f(exit.cause.error)) : Effect.mapError(exit, f)
}

/** The Effect's outcome as an Either, kept settled when it is. */
export const eitherNow = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Either.Either<A, E>, never, R> => {
  if (!Exit.isExit(effect)) return Effect.either(effect)
  const exit = effect as Exit.Exit<A, E>
  if (Exit.isSuccess(exit)) return Exit.succeed(Either.right(exit.value))
  return exit.cause._tag === "Fail" ? Exit.succeed(Either.left(exit.cause.error)) : Effect.either(exit)
}
