/**
 * Random workloads for the scavenger's property tests: the operations (appends, metadata of every kind,
 * deletes, links, time moving on, scavenges), their generators, the clock the workload moves, and how
 * one operation is applied to a store.
 */
import fc from "fast-check"
import { Clock, Effect, Logger, LogLevel } from "effect"
import { ExpectedVersion, type HashFn, type ProposedEvent } from "@vellum/storage"
import { uuid, type Node } from "./scavenger-support.js"

export const STREAMS = ["s0", "s1", "s2", "s3"] as const
export const LINKS = "links"
/** Every stream has the same 64-bit hash (as packages/storage/test/streams-harness.ts `collide`). */
export const collide: HashFn = () => ({ hi: 0, lo: 1 })

/** Metadata a workload writes: limits, clearing, and data the scavenger must read as "no limits". */
export const METADATA: ReadonlyArray<{ readonly text: string; readonly isJson: boolean }> = [
  ...[1, 2, 3].map((n) => ({ text: `{"$maxCount":${n}}`, isJson: true })),
  ...[1, 10, 30, 60, 600].map((s) => ({ text: `{"$maxAge":${s}}`, isJson: true })),
  ...[0, 2, 5, 9].map((n) => ({ text: `{"$tb":${n}}`, isJson: true })),
  { text: `{"$maxCount":2,"$maxAge":30}`, isJson: true },
  { text: `{"$maxAge":600,"$tb":3}`, isJson: true },
  { text: `{}`, isJson: true },
  { text: `{"$maxCount":"2"}`, isJson: true },
  { text: `{"$maxAge":0,"x":[1,2]}`, isJson: true },
  { text: `not json at all`, isJson: false }
]

export type Op =
  | { readonly k: "append"; readonly s: number; readonly n: number; readonly size: number }
  | { readonly k: "meta"; readonly s: number; readonly m: number }
  | { readonly k: "metaOfMeta"; readonly s: number; readonly m: number }
  | { readonly k: "soft"; readonly s: number }
  | { readonly k: "hard"; readonly s: number }
  | { readonly k: "link"; readonly s: number; readonly n: number }
  | { readonly k: "advance"; readonly seconds: number }
  | { readonly k: "scavenge"; readonly threshold: number }

const stream = fc.nat(STREAMS.length - 1)
const opArb = (thresholds: ReadonlyArray<number>): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        k: fc.constant("append" as const),
        s: stream,
        n: fc.integer({ min: 1, max: 4 }),
        size: fc.integer({ min: 0, max: 200 })
      })
    },
    { weight: 4, arbitrary: fc.record({ k: fc.constant("meta" as const), s: stream, m: fc.nat(METADATA.length - 1) }) },
    {
      weight: 1,
      arbitrary: fc.record({ k: fc.constant("metaOfMeta" as const), s: stream, m: fc.nat(METADATA.length - 1) })
    },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("soft" as const), s: stream }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("hard" as const), s: stream }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("link" as const), s: stream, n: fc.nat(8) }) },
    {
      weight: 4,
      arbitrary: fc.record({ k: fc.constant("advance" as const), seconds: fc.constantFrom(1, 5, 20, 60, 400, 700) })
    },
    {
      weight: 2,
      arbitrary: fc.record({ k: fc.constant("scavenge" as const), threshold: fc.constantFrom(...thresholds) })
    }
  )

export interface Workload {
  readonly chunkSize: number
  readonly collide: boolean
  /** The state's cache: 0 keeps no row in memory, so every lookup (chunk execution's too) reads its page. */
  readonly stateCacheBytes?: number
  readonly ops: ReadonlyArray<Op>
}

export const workloadArb = (
  thresholds: ReadonlyArray<number>,
  collide: fc.Arbitrary<boolean>
): fc.Arbitrary<Workload> =>
  fc.record({
    chunkSize: fc.constantFrom(1024, 2048, 4096),
    collide,
    stateCacheBytes: fc.constantFrom(0, 1 << 20),
    ops: fc.array(opArb(thresholds), { minLength: 12, maxLength: 40, size: "max" })
  })

const envRuns = process.env["VELLUM_SCAVENGE_RUNS"]

/** How long a property may run before fast-check stops it (a longer batch gets about 3 s a case). */
const timeLimitMillis = Math.max(100_000, Number(envRuns ?? 0) * 3_000)

/** The test's own timeout: the property's time limit, and time to report its counterexample. */
export const PROPERTY_TIMEOUT_MILLIS = timeLimitMillis + 20_000

/**
 * fast-check's parameters for a scavenger property: `defaultRuns` cases unless VELLUM_SCAVENGE_RUNS says
 * otherwise, VELLUM_SCAVENGE_SEED replays a seed, VELLUM_SCAVENGE_NO_SHRINK=1 reports the first failure.
 */
export const propertyParameters = (defaultRuns: number): fc.Parameters<unknown> => ({
  numRuns: Number(envRuns ?? defaultRuns),
  // A failure is still reported (with the smallest case found so far) when shrinking takes too long.
  interruptAfterTimeLimit: timeLimitMillis,
  markInterruptAsFailure: true,
  endOnFailure: process.env["VELLUM_SCAVENGE_NO_SHRINK"] === "1",
  ...(process.env["VELLUM_SCAVENGE_SEED"] === undefined ? {} : { seed: Number(process.env["VELLUM_SCAVENGE_SEED"]) })
})

let nextId = 1
const event = (size: number, type = "T", data?: string): ProposedEvent => {
  const id = nextId++
  return {
    eventId: uuid(id),
    eventType: type,
    isJson: data === undefined,
    data: Buffer.from(data ?? JSON.stringify({ id, pad: "x".repeat(size) })),
    metadata: Buffer.alloc(0)
  }
}

/** A day in, so `$maxAge` cutoffs are positive. */
export const START_MILLIS = 86_400_000

/**
 * The time every fiber of a workload sees (the store stamps events with it, a scavenge point takes its
 * EffectiveNow from it), moved on only by the workload. Like TestClock, but its sleeps never end: a
 * TestClock adjust steps the store's one-second sweeper through every simulated second, which made
 * advancing time most of a run's cost. Nothing a run waits for sleeps (the throttle is at 100%).
 */
export class ManualClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  constructor(private millis: number = START_MILLIS) {}
  unsafeCurrentTimeMillis(): number {
    return this.millis
  }
  readonly currentTimeMillis = Effect.sync(() => this.millis)
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.millis) * 1_000_000n
  }
  readonly currentTimeNanos = Effect.sync(() => this.unsafeCurrentTimeNanos())
  sleep(): Effect.Effect<void> {
    return Effect.never
  }
  /** Moves the time on at once (for callers outside Effect, such as a state wrapper). */
  unsafeAdvance(seconds: number): void {
    this.millis += seconds * 1000
  }
  readonly advance = (seconds: number) => Effect.sync(() => this.unsafeAdvance(seconds))
}

/** Applies one write; refusals (a hard-deleted stream, invalid metadata) are part of the workload. */
export const apply = (node: Node, clock: ManualClock, op: Exclude<Op, { k: "scavenge" }>) => {
  const { store } = node
  const name = STREAMS[op.k === "advance" ? 0 : op.s]!
  switch (op.k) {
    case "append":
      return store.append(
        name,
        ExpectedVersion.Any,
        Array.from({ length: op.n }, () => event(op.size))
      )
    case "meta":
    case "metaOfMeta": {
      const m = METADATA[op.m]!
      return store.setStreamMetadata(op.k === "meta" ? name : `$$${name}`, ExpectedVersion.Any, Buffer.from(m.text), {
        isJson: m.isJson
      })
    }
    case "soft":
    case "hard":
      return store.deleteStream(name, ExpectedVersion.Any, op.k === "hard")
    case "link":
      return store.append(LINKS, ExpectedVersion.Any, [event(0, "$>", `${op.n}@${name}`)])
    case "advance":
      return clock.advance(op.seconds)
  }
}

/** Runs an effect without the scavenger's progress logs. */
export const runQuietly = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(effect.pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))
