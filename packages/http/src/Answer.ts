/**
 * What the pipeline and a plain handler answer with: a Reply now, a Reply that comes later (a callback, as
 * an append waiting for its batch to be durable), or an Effect that must run to give one.
 *
 * The common requests (appends, cached reads) are answered by plain code from the socket to the writer and
 * back: a fiber per request, and the Effect steps it runs, were a fifth of a single-event append's CPU. The
 * Effect form (`toEffect`) is how the simulator, the tests and the logging wrappers drive the very same
 * functions; `serveHttp` takes the plain form and forks a fiber only for an Effect.
 */
import { Effect, Exit, type Clock, type Context } from "effect"
import { runNow, type Steps } from "@vellum/platform"
import type { Reply } from "./Reply.js"

/** What a later reply delivers: the Reply, or (rarely: a failure that logs) an Effect giving it. */
export type Delivered<R> = Reply | Effect.Effect<Reply, never, R>

/** A reply that comes later: `onReply` registers the one callback that receives it. */
export class LaterReply<R> {
  constructor(readonly onReply: (deliver: (reply: Delivered<R>) => void) => void) {}
}

export type Answer<R> = Reply | LaterReply<R> | Effect.Effect<Reply, never, R>

/** What plain code needs of the fiber it does without: the services and the clock. */
export interface Surroundings<R> {
  readonly context: Context.Context<R>
  readonly clock: Clock.Clock
}

/**
 * An Effect that is already a value (`Effect.succeed`, `Effect.fail`: an Exit) gives it without running;
 * undefined for any other. Lets plain code use an Effect service whose common answer is immediate (a cached
 * credential check) without a fiber.
 */
export const settled = <A, E, R>(effect: Effect.Effect<A, E, R>): Exit.Exit<A, E> | undefined =>
  Exit.isExit(effect) ? (effect as Exit.Exit<A, E>) : undefined

/** The value of an Effect that has already succeeded; undefined for any other. */
export const settledValue = <A, E, R>(effect: Effect.Effect<A, E, R>): A | undefined => {
  const exit = settled(effect)
  return exit !== undefined && Exit.isSuccess(exit) ? exit.value : undefined
}

/** The answer as an Effect (for the simulator, tests and wrappers that need one). */
export const toEffect = <R>(answer: Answer<R>): Effect.Effect<Reply, never, R> => {
  if (answer instanceof LaterReply) {
    return Effect.async<Reply, never, R>((resume) => answer.onReply((reply) => resume(delivered(reply))))
  }
  return Effect.isEffect(answer) ? answer : Effect.succeed(answer)
}

const delivered = <R>(reply: Delivered<R>): Effect.Effect<Reply, never, R> =>
  Effect.isEffect(reply) ? reply : Effect.succeed(reply)

/**
 * `f` applied to the reply, however it comes. A defect thrown by `f` on a later reply becomes `onDefect`'s
 * reply, so nothing throws into whoever delivers it (the writer); on a reply now it throws to the caller, and
 * in an Effect it is the Effect's defect.
 */
export const mapAnswer = <R>(
  answer: Answer<R>,
  f: (reply: Reply) => Reply,
  onDefect: (defect: unknown) => Delivered<R>
): Answer<R> => {
  if (answer instanceof LaterReply) {
    return new LaterReply<R>((deliver) =>
      answer.onReply((reply) => {
        if (Effect.isEffect(reply))
          return deliver(Effect.catchAllDefect(Effect.map(reply, f), (defect) => delivered(onDefect(defect))))
        let mapped: Delivered<R>
        try {
          mapped = f(reply)
        } catch (defect) {
          mapped = onDefect(defect)
        }
        deliver(mapped)
      })
    )
  }
  return Effect.isEffect(answer) ? Effect.map(answer, f) : f(answer)
}

/** A route's `handle` from its plain `answer`: the same function, its services taken from the fiber. */
export const handlerOf =
  <I, R>(answer: (input: I, services: Context.Context<R>, clock: Clock.Clock) => Answer<R>) =>
  (input: I): Effect.Effect<Reply, never, R> =>
    Effect.flatMap(Effect.context<R>(), (services) =>
      Effect.clockWith((clock) => toEffect(answer(input, services, clock)))
    )

/** Runs `f` on the value of an Effect that is already settled, else after running it. */
export const andThen = <A, E, R, R2>(
  effect: Effect.Effect<A, E, R>,
  onValue: (exit: Exit.Exit<A, E>) => Answer<R2>
): Answer<R | R2> => {
  const now = settled(effect)
  if (now !== undefined) return onValue(now)
  return Effect.flatMap(Effect.exit(effect), (exit) => toEffect(onValue(exit)))
}

/**
 * A handler written as steps (`function*` over Effects, as for `Effect.gen`): run at once with the services
 * (platform runNow.ts), its reply now when every step was settled, else an Effect that goes on from the first
 * step that must run.
 */
export const answerSteps = <R>(steps: Steps<Reply, never, R>, services: Context.Context<R>): Answer<R> => {
  const run = runNow(steps, services)
  return Exit.isExit(run) && Exit.isSuccess(run) ? (run.value as Reply) : run
}
