/**
 * A wake-up call for fibers that wait for "something changed" (new data written, an ack arrived, a
 * heartbeat is due): `wait` returns at the next `notify`. Nothing is remembered between calls: a waiter
 * checks the state it cares about after every wake-up. (A time limit per wait would cost a race of two
 * fibers each time; whoever needs waiters woken regularly runs one ticker that notifies.)
 */
import { Effect } from "effect"

export class Signal {
  private waiters = new Set<() => void>()

  notify(): void {
    const waiting = this.waiters
    this.waiters = new Set()
    for (const wake of waiting) wake()
  }

  readonly wait: Effect.Effect<void> = Effect.async<void>((resume) => {
    const wake = () => resume(Effect.void)
    this.waiters.add(wake)
    return Effect.sync(() => void this.waiters.delete(wake))
  })
}
