/**
 * Paces the operator by the clients' progress rather than by time: a seed with no think time and no disk
 * latency may never advance the simulated clock while its clients run, so "every few milliseconds" would
 * mean "once the clients are done". Waiting for N client operations interleaves the operator with them in
 * every seed, and costs no scheduler steps while it waits.
 */
import { Deferred, Effect, Exit, FiberId } from "effect"

export class OpsTicker {
  private count = 0
  private done = false
  private readonly waiters: Array<{ readonly at: number; readonly deferred: Deferred.Deferred<void> }> = []

  get finished(): boolean {
    return this.done
  }

  /** One client operation completed. */
  readonly tick: Effect.Effect<void> = Effect.sync(() => {
    this.count++
    this.release((at) => at <= this.count)
  })

  /** The clients are done: nobody waits any more. */
  readonly finish: Effect.Effect<void> = Effect.sync(() => {
    this.done = true
    this.release(() => true)
  })

  /** Completes after `ops` more client operations (at once when the clients are done). */
  wait(ops: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.done) return Effect.void
      const deferred = Deferred.unsafeMake<void>(FiberId.none)
      this.waiters.push({ at: this.count + ops, deferred })
      return Deferred.await(deferred)
    })
  }

  private release(due: (at: number) => boolean): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!
      if (!due(waiter.at)) continue
      this.waiters.splice(i, 1)
      Deferred.unsafeDone(waiter.deferred, Exit.void)
    }
  }
}
