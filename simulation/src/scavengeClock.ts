/**
 * Coverage of "a scavenge judges `$maxAge` by its point's EffectiveNow, never the clock": it only means
 * something when the clock has moved past EffectiveNow by more than the longest `$maxAge` the clients write
 * while a run to that point is still in progress — across a stop, a crash, or a long run.
 */
import { Clock, Effect } from "effect"
import type { Auditor } from "./client.js"

/** The longest `$maxAge` the clients write, in seconds. */
export const LongestMaxAgeSeconds = 30

/** A run was seen in progress now: marks it when the newest learned point is older than any `$maxAge`. */
export const noteRunInProgress = (auditor: Auditor) =>
  Effect.gen(function* () {
    yield* auditor.learnPoints
    const newest = auditor.scavengePoints.points.at(-1)
    const nowMicros = (yield* Clock.currentTimeMillis) * 1000
    if (newest !== undefined && nowMicros - newest.effectiveNowMicros > LongestMaxAgeSeconds * 1_000_000)
      auditor.coverage.hit("clock.movedDuringScavenge")
  })
