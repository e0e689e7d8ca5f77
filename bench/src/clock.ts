/**
 * Simulated-clock throughput: timer wake-ups per wall-clock second.
 *
 * Case "effect": a SimWorld with 3 nodes, each running F fibers that loop
 * `Random.nextIntBetween(10, 13)` + `Effect.sleep(ms)` for H simulated hours (first measured at about
 * 200k wake-ups/s, about 720x real time, for F = 1).
 * Case "bare-heap": the same timer pattern as plain callbacks on the same SimClock heap, no Effect:
 * the ceiling, measured in the same run, so the Effect figure can be read as a ratio.
 *
 * Each case runs --reps times (alternating, so both see the same machine load); the summary takes the
 * best rep of each, which is the usual way to read a benchmark on a shared, noisy machine.
 *
 * Usage: npm run bench:clock -- [--fibers F] [--hours H] [--seed S] [--reps R]   (defaults: 1, 1, 1, 3)
 * Prints one JSON object per line. Allocation-heavy (Effect's fiber runtime): a larger young
 * generation helps a lot, e.g. `node --max-semi-space-size=64 --import tsx bench/src/clock.ts`.
 */
import { Effect, Random } from "effect"
import { Prng, SimClock, SimWorld } from "@vellum/platform"

const TARGET_WAKEUPS_PER_S = 100_000
const NODES = 3
const HOUR_MS = 3_600_000

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < process.argv.length ? Number(process.argv[i + 1]) : dflt
}

const fibers = arg("fibers", 1)
const hours = arg("hours", 1)
const seed = arg("seed", 1)
const reps = Math.max(1, arg("reps", 3))
const simMs = hours * HOUR_MS

interface Result {
  readonly wakeups: number
  readonly wallS: number
}

const report = (name: string, rep: number, r: Result, extra: Record<string, unknown> = {}) => {
  const line = {
    bench: "clock",
    case: name,
    rep,
    nodes: NODES,
    fibersPerNode: fibers,
    simHours: hours,
    wakeups: r.wakeups,
    wallS: Number(r.wallS.toFixed(3)),
    wakeupsPerS: Math.round(r.wakeups / r.wallS),
    simToReal: Math.round(simMs / 1000 / r.wallS),
    ...extra
  }
  console.log(JSON.stringify(line))
  return line
}

const runEffect = (): Result & { steps: number; traceHash: string } => {
  const world = new SimWorld({ seed })
  const loop = Effect.forever(Effect.flatMap(Random.nextIntBetween(10, 13), (ms) => Effect.sleep(ms)))
  for (let n = 0; n < NODES; n++) for (let f = 0; f < fibers; f++) world.fork(`n${n}`, loop)
  const t0 = performance.now()
  const result = world.run({ maxSimMs: simMs })
  const wallS = (performance.now() - t0) / 1000
  if (result.reason !== "time-limit") throw new Error(`bench: unexpected stop ${result.reason}`)
  world.trace(`fired ${world.clock.firedCount} steps ${result.steps}`)
  return { wakeups: world.clock.firedCount, wallS, steps: result.steps, traceHash: world.traceHash }
}

const runBare = (): Result => {
  const clock = new SimClock()
  const prng = new Prng(seed)
  const end = clock.currentMillis + simMs
  let wakeups = 0
  // One self-rescheduling callback per "fiber"; allocated once, so the loop measures the heap.
  for (let i = 0; i < NODES * fibers; i++) {
    const tick = (): void => {
      wakeups++
      clock.schedule(prng.int(10, 12), tick)
    }
    clock.schedule(prng.int(10, 12), tick)
  }
  const t0 = performance.now()
  while (true) {
    const due = clock.nextDue()
    if (due === undefined || due > end) break
    clock.advanceToNext()
  }
  return { wakeups, wallS: (performance.now() - t0) / 1000 }
}

// Warm up the JIT on a short run of each before measuring.
{
  const w = new SimWorld({ seed: seed + 1 })
  w.fork("w", Effect.forever(Effect.sleep(10)))
  w.run({ maxSimMs: 60_000 })
}

const effects: Array<ReturnType<typeof report>> = []
const bares: Array<ReturnType<typeof report>> = []
const hashes = new Set<string>()
for (let rep = 1; rep <= reps; rep++) {
  const effect = runEffect()
  hashes.add(effect.traceHash)
  effects.push(report("effect", rep, effect, { steps: effect.steps, traceHash: effect.traceHash }))
  bares.push(report("bare-heap", rep, runBare()))
}
const best = (lines: ReadonlyArray<{ wakeupsPerS: number }>) => Math.max(...lines.map((l) => l.wakeupsPerS))
const median = (lines: ReadonlyArray<{ wakeupsPerS: number }>) => {
  const xs = lines.map((l) => l.wakeupsPerS).sort((a, b) => a - b)
  return xs[xs.length >> 1]
}
const bestEffect = best(effects)
console.log(
  JSON.stringify({
    bench: "clock",
    case: "summary",
    reps,
    effectWakeupsPerSBest: bestEffect,
    effectWakeupsPerSMedian: median(effects),
    bareHeapWakeupsPerSBest: best(bares),
    effectOverBare: Number((bestEffect / best(bares)).toFixed(4)),
    simToRealBest: Math.max(...effects.map((l) => l.simToReal)),
    sameTraceHashEveryRep: hashes.size === 1,
    target: TARGET_WAKEUPS_PER_S,
    meetsTarget: bestEffect >= TARGET_WAKEUPS_PER_S
  })
)
