/**
 * The node's stop signal. `/admin/shutdown` (and anything else that wants the node to stop) requests it;
 * the node's main waits on `requested` and then closes its scope, which stops the server and the store in
 * order. A Deferred, so a request made before main starts waiting is not lost.
 */
import { Context, Deferred, Effect, Layer } from "effect"

export interface ShutdownService {
  /** Asks the node to stop; the first reason wins, later requests change nothing. */
  readonly request: (reason: string) => Effect.Effect<void>
  /** Completes with the reason once a stop was requested. */
  readonly requested: Effect.Effect<string>
  readonly isRequested: Effect.Effect<boolean>
}

export class Shutdown extends Context.Tag("@vellum/http/Shutdown")<Shutdown, ShutdownService>() {
  static readonly layer: Layer.Layer<Shutdown> = Layer.effect(
    Shutdown,
    Effect.map(Deferred.make<string>(), (signal) => ({
      request: (reason) => Effect.asVoid(Deferred.succeed(signal, reason)),
      requested: Deferred.await(signal),
      isRequested: Deferred.isDone(signal)
    }))
  )
}
