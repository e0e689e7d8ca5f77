/**
 * The Subscriptions service over a real single-node store, driven by random histories and checked against a
 * reference model after every step (serviceHarness.ts, serviceModel.ts): groups created (random settings,
 * from the start or the end of their stream), updated (restarted from their checkpoint) and deleted; events
 * appended; reads with and without a long-poll wait; acks, nacks of every action and of unknown ids; time
 * passing tick by tick past message timeouts and checkpoint intervals; parked messages replayed with and
 * without `stopAt`; the node restarted gracefully, after a power loss (strict or random), or only its groups.
 *
 * Nothing is handed out that the model has finished or in flight, unless it lay after the checkpoint the group
 * restarted from; retry counts are the model's; parks, the parked stream's links and counts are the model's;
 * a checkpoint never passes an event not yet finished; and at the end, consumers that keep acking finish
 * every event: nothing is lost.
 *
 * VELLUM_SUBSCRIPTION_RUNS sets the number of histories (default 100, about 12 s), VELLUM_SUBSCRIPTION_SEED their
 * seed; VELLUM_SUBSCRIPTION_SHRINK=0 stops at the first failure, VELLUM_SUBSCRIPTION_VERBOSE prints how often each
 * case came up, VELLUM_SUBSCRIPTION_TRACE each command, and VELLUM_SUBSCRIPTION_CASE replays one counterexample
 * saved to a file.
 */
import fc from "fast-check"
import { Effect, Logger, LogLevel } from "effect"
import { SimClock } from "@vellum/platform"
import { describe, expect, it } from "vitest"
import type { NackAction } from "../src/group/types.js"
import { groupSettingsArb } from "./groupSettingsArb.js"
import { ServiceHarness, type RestartKind } from "./serviceHarness.js"

const runs = Number(process.env.VELLUM_SUBSCRIPTION_RUNS ?? 100)
const seed = Number(process.env.VELLUM_SUBSCRIPTION_SEED ?? 20261127)

const trace = process.env.VELLUM_SUBSCRIPTION_TRACE !== undefined

const slots = [
  ["s0", "g0"],
  ["s0", "g1"],
  ["s1", "g0"]
] as const
const streams = ["s0", "s1"] as const
const slotOf = (i: number): readonly [string, string] => slots[i]!

const settingsArb = groupSettingsArb({ messageTimeout: 2_000, checkPointAfter: 3_000 })

/** Half the commands go to the first group, so its messages meet more acks, nacks and timeouts. */
const slotArb = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: slots.length - 1 }))
const picksArb = fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 4 })

const createArb = fc.record({
  t: fc.constant("create" as const),
  slot: slotArb,
  settings: settingsArb,
  end: fc.boolean()
})

const baseCommandArb = fc.oneof(
  { weight: 2, arbitrary: createArb },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("update" as const), slot: slotArb, settings: settingsArb }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("delete" as const), slot: slotArb }) },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant("append" as const),
      stream: fc.constantFrom(...streams),
      n: fc.integer({ min: 1, max: 5 })
    })
  },
  {
    weight: 8,
    arbitrary: fc.record({ t: fc.constant("read" as const), slot: slotArb, n: fc.integer({ min: 1, max: 6 }) })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant("longPoll" as const),
      slot: slotArb,
      n: fc.integer({ min: 1, max: 6 }),
      waitMillis: fc.integer({ min: 1, max: 1_500 }),
      append: fc.integer({ min: 0, max: 3 })
    })
  },
  {
    weight: 6,
    arbitrary: fc.record({ t: fc.constant("ack" as const), slot: slotArb, picks: picksArb, all: fc.boolean() })
  },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant("nack" as const),
      slot: slotArb,
      picks: picksArb,
      action: fc.constantFrom<NackAction>("Park", "Retry", "Skip", "Stop")
    })
  },
  {
    weight: 4,
    arbitrary: fc.record({ t: fc.constant("advance" as const), millis: fc.integer({ min: 1, max: 3_000 }) })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("replay" as const),
      slot: slotArb,
      stopAfter: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined })
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("restart" as const),
      kind: fc.constantFrom<RestartKind>("clean", "strictCrash", "randomCrash", "service"),
      /** Straight after the previous command, before its writes ran (a power loss: after some of them). */
      abrupt: fc.boolean(),
      yields: fc.nat({ max: 30 })
    })
  }
)

/**
 * One command in ten (and half the restarts) follows the previous one at once, before its reads and writes ran
 * (never next to a replay).
 */
const commandArb = fc
  .tuple(baseCommandArb, fc.nat(9))
  .map(([c, n]) => ({ ...c, hurry: c.t === "restart" ? c.abrupt : n === 0 }))

type Command = typeof commandArb extends fc.Arbitrary<infer C> ? C : never

const run = (h: ServiceHarness, c: Command): Effect.Effect<void> => {
  switch (c.t) {
    case "create": {
      const [stream, group] = slotOf(c.slot)
      return h.create(stream, group, { ...c.settings, startFrom: c.end ? -1 : 0 })
    }
    case "update": {
      const [stream, group] = slotOf(c.slot)
      const startFrom = h.groups.get(`${stream}::${group}`)?.settings.startFrom ?? 0
      return h.update(stream, group, { ...c.settings, startFrom })
    }
    case "delete":
      return h.delete(...slotOf(c.slot))
    case "append":
      return h.append(c.stream, c.n)
    case "read":
      return h.read(...slotOf(c.slot), c.n)
    case "longPoll":
      return h.longPoll(...slotOf(c.slot), c.n, c.waitMillis, c.append)
    case "ack":
      return h.ack(...slotOf(c.slot), c.picks, c.all)
    case "nack":
      return h.nack(...slotOf(c.slot), c.picks, c.action)
    case "advance":
      return h.advance(c.millis)
    case "replay":
      return h.replayParked(...slotOf(c.slot), c.stopAfter)
    case "restart":
      return h.restart(c.kind, c.yields)
  }
}

const history = (crashSeed: number, commands: ReadonlyArray<Command>, clock = new SimClock()) =>
  Effect.gen(function* () {
    const h = yield* ServiceHarness.open(crashSeed, clock)
    yield* Effect.addFinalizer(() => h.close)
    for (let i = 0; i < commands.length; i++) {
      if (trace) console.log(JSON.stringify(commands[i]))
      yield* run(h, commands[i]!)
      // A replay reads the parked stream as it is once writes in flight landed, and is read before the next command.
      const next = commands[i + 1]
      if (next?.hurry === true && next.t !== "replay" && commands[i]!.t !== "replay") continue
      yield* h.settle
      yield* h.check
    }
    yield* h.drain
    return h
  }).pipe(Effect.scoped, Effect.withClock(clock), Logger.withMinimumLogLevel(LogLevel.None))

describe("the Subscriptions service against its reference model", () => {
  // VELLUM_SUBSCRIPTION_CASE: a JSON file holding one counterexample ([crashSeed, creates, commands]) to replay.
  const replayCase = process.env.VELLUM_SUBSCRIPTION_CASE
  if (replayCase !== undefined)
    it("replays one history", async () => {
      const text = (await import("node:fs")).readFileSync(replayCase, "utf8").replace(/undefined/g, "null")
      const [crashSeed, creates, commands] = JSON.parse(text, (_, v: unknown) => (v === null ? undefined : v)) as [
        number,
        Array<Command>,
        Array<Command>
      ]
      await Effect.runPromise(history(crashSeed, [...creates, ...commands]))
    })

  it(
    "loses nothing, hands out nothing finished or in flight, and redelivers only after the checkpoint",
    async () => {
      const seen: Record<string, number> = {}
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 1_000_000 }),
          fc.array(
            createArb.map((c) => ({ ...c, hurry: false })),
            { minLength: 1, maxLength: 3 }
          ),
          fc.array(commandArb, { minLength: 10, maxLength: 80, size: "max" }),
          async (crashSeed, creates, commands) => {
            const h = await Effect.runPromise(history(crashSeed, [...creates, ...commands]))
            for (const [k, n] of Object.entries(h.seen)) seen[k] = (seen[k] ?? 0) + n
            for (const model of h.models) for (const [k, n] of Object.entries(model.seen)) seen[k] = (seen[k] ?? 0) + n
          }
        ),
        { numRuns: runs, seed, endOnFailure: process.env.VELLUM_SUBSCRIPTION_SHRINK === "0" }
      )
      if (process.env.VELLUM_SUBSCRIPTION_VERBOSE !== undefined) console.log(seen)
      for (const n of Object.values(seen)) expect(n).toBeGreaterThan(0)
    },
    Math.max(120_000, runs * 2_000)
  )
})
