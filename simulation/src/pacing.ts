/**
 * How simulated time passes between operations: `$maxAge` (1..30 s) needs runs that last minutes, while a
 * node under a busy workload moves the clock only by milliseconds. Clients sometimes pause for seconds,
 * the operator sometimes waits before acting, and a crashed node stays down a while before it restarts.
 * Sleeping costs nothing in a simulation (the world jumps to the next timer), so this keeps a batch fast.
 * Each draw comes from its own Prng, forked for pacing alone, so the other choices of a seed stay put.
 */
import { Clock, Duration, Effect } from "effect"
import type { Prng } from "@vellum/platform"
import { expiredPrefix, type EventTimes } from "./expiry.js"
import type { StoreModel } from "./model.js"

/** Before a client operation: now and then a pause of 1–12 s (the operation count stays the same). */
export const clientPause = (prng: Prng): Effect.Effect<void> =>
  prng.chance(0.05) ? Effect.sleep(Duration.millis(prng.int(1_000, 12_000))) : Effect.void

/** Before an operator action: now and then a wait of up to 5 s (scavenges run on meanwhile). */
export const operatorPause = (prng: Prng): Effect.Effect<void> =>
  prng.chance(0.2) ? Effect.sleep(Duration.millis(prng.int(100, 5_000))) : Effect.void

/** How long a crashed node stays down before it restarts, in ms (1–45 s). */
export const crashDowntimeMs = (prng: Prng): number => prng.int(1_000, 45_000)

/**
 * Now and then a client waits until the exact moment an event of one of its `$maxAge` streams reaches its
 * age limit (judged from the write's acknowledgement, or its send), so the next operation — often a read
 * of that stream — meets the expiry boundary: exactly at it (the limit is strict), or, when the write took
 * time, with the event's expiry open (the model then allows both answers).
 */
export const expiryWait = (
  prng: Prng,
  model: StoreModel,
  times: EventTimes,
  streams: ReadonlyArray<string>
): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    if (!prng.chance(0.08)) return Effect.void
    const stream = prng.pick(streams)
    const maxAge = model.metadataOf(stream).maxAge
    if (maxAge === undefined) return Effect.void
    const [, possible] = expiredPrefix(model, times, stream, now, now)
    const next = model.eventsOf(stream)[possible]
    if (next === undefined) return Effect.void
    const timing = times.timing(next)
    const at = (prng.chance(0.5) ? timing.ackMs : timing.sentMs) + maxAge * 1000
    return at > now && at - now <= 30_000 ? Effect.sleep(Duration.millis(at - now)) : Effect.void
  })
