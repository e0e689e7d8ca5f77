/**
 * The scavenge throttle: a run at `throttlePercent` p works p% of the time and rests
 * the rest, measured over the whole run so far. `rest` sleeps on Effect's Clock (so the simulator steps
 * it) and is interruptible, which is how a stop cuts a long rest short.
 */
import { Clock, Duration, Effect } from "effect"

/** Rests shorter than this are skipped (the reference's minimum), so short runs are not slowed by jitter. */
export const MIN_REST_MILLIS = 1000

/** How long to rest now: `(f·T − R) / (1 − f)` with f the resting fraction, T elapsed and R rested so far. */
export const restMillis = (percent: number, elapsedMillis: number, restedMillis: number): number => {
  if (percent >= 100) return 0
  const f = 1 - percent / 100
  return Math.max(0, (f * elapsedMillis - restedMillis) / (1 - f))
}

export interface Throttle {
  /** Sleeps if the run has worked more than its share; a no-op at 100%. */
  readonly rest: Effect.Effect<void>
  /** Total time rested, in ms (for logs). */
  readonly restedMillis: () => number
}

export const makeThrottle = (percent: number): Effect.Effect<Throttle> =>
  Effect.map(Clock.currentTimeMillis, (startedAt) => {
    let rested = 0
    const rest = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const wanted = restMillis(percent, now - startedAt, rested)
      if (wanted < MIN_REST_MILLIS) return Effect.void
      return Effect.zipRight(
        Effect.sleep(Duration.millis(wanted)),
        Effect.flatMap(Clock.currentTimeMillis, (after) =>
          Effect.sync(() => {
            rested += after - now
          })
        )
      )
    })
    return { rest: percent >= 100 ? Effect.void : rest, restedMillis: () => rested }
  })
