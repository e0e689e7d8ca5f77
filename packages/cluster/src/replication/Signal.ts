/**
 * A wake-up call for fibers that wait for "something changed" (new data written, an ack arrived): `wait`
 * returns at the next `notify` or after `millis`, whichever comes first. Nothing is remembered between
 * calls: a waiter checks the state it cares about after every wake-up.
 */
import { Effect } from "effect"

export class Signal {
  private waiters = new Set<() => void>()

  notify(): void {
    const waiting = this.waiters
    this.waiters = new Set()
    for (const wake of waiting) wake()
  }

  wait(millis: number): Effect.Effect<void> {
    const woken = Effect.async<void>((resume) => {
      const wake = () => resume(Effect.void)
      this.waiters.add(wake)
      return Effect.sync(() => void this.waiters.delete(wake))
    })
    return Effect.race(woken, Effect.sleep(millis))
  }
}
