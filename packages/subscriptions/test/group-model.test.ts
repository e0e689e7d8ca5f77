/**
 * A group driven by random histories (appends, reads answered late, pulls, long-poll waiters, connections that drop, acks and nacks
 * of every action, time passing, park writes landing late, parked messages replayed, crashes and restarts from the last durable
 * checkpoint) and checked against a reference model after every step (see groupModel.ts): no delivery of a
 * message still in flight, retry counts as the model counts them, parks exactly where the model parks,
 * checkpoints that only move forward over finished events, an event finished before the checkpoint never
 * delivered again; and at the end, once consumers keep acking, every event acked, skipped or parked.
 *
 * VELLUM_SUBSCRIPTION_RUNS sets the number of histories (default 200), VELLUM_SUBSCRIPTION_SEED their seed.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { NackAction } from "../src/group/index.js"
import { ModelDriver } from "./groupModel.js"
import { groupSettingsArb } from "./groupSettingsArb.js"

const runs = Number(process.env.VELLUM_SUBSCRIPTION_RUNS ?? 200)
const seed = Number(process.env.VELLUM_SUBSCRIPTION_SEED ?? 20261127)

const settingsArb = groupSettingsArb({ messageTimeout: 50, checkPointAfter: 100 })

const actionArb = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant("append" as const), n: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 3, arbitrary: fc.constant({ t: "notify" as const }) },
  { weight: 3, arbitrary: fc.constant({ t: "read" as const }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("pull" as const), n: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("wait" as const), n: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.constant({ t: "stopWaiting" as const }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("ack" as const), pick: fc.array(fc.nat(), { maxLength: 3 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("nack" as const),
      pick: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
      action: fc.constantFrom<NackAction>("Park", "Retry", "Skip", "Stop")
    })
  },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 60 }) }) },
  { weight: 2, arbitrary: fc.constant({ t: "confirmPark" as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("restart" as const), landed: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ t: "replay" as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("connect" as const), n: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("drop" as const), pick: fc.nat() }) }
)

type Action = typeof actionArb extends fc.Arbitrary<infer A> ? A : never

/** Picks ids among those held, now and then a stale one (an id the group no longer has in flight). */
const pickIds = (driver: ModelDriver, picks: ReadonlyArray<number>): Array<string> => {
  const held = driver.heldIds()
  return picks.map((p) => (held.length > 0 && p % 5 !== 0 ? held[p % held.length]! : `e${p % 20}`))
}

const run = (driver: ModelDriver, action: Action): void => {
  switch (action.t) {
    case "append":
      return driver.append(action.n)
    case "notify":
      return driver.notify()
    case "read":
      return driver.answerRead()
    case "pull":
      return driver.pull(action.n)
    case "wait":
      return driver.wait(action.n)
    case "stopWaiting":
      return driver.stopWaiting()
    case "ack":
      return driver.ack(pickIds(driver, action.pick))
    case "nack":
      return driver.nack(pickIds(driver, action.pick), action.action)
    case "tick":
      return driver.tick(action.ms)
    case "confirmPark":
      return driver.confirmPark()
    case "restart":
      return driver.restart(action.landed)
    case "replay":
      return driver.replay()
    case "connect":
      return driver.connect(action.n)
    case "drop":
      return driver.drop(action.pick)
  }
}

describe("a group against its reference model", () => {
  it("loses nothing, delivers nothing twice while in flight, and redelivers only after the checkpoint", () => {
    const seen: Record<string, number> = {}
    fc.assert(
      fc.property(
        settingsArb,
        fc.integer({ min: 0, max: 10 }),
        fc.array(actionArb, { minLength: 20, maxLength: 150, size: "max" }),
        (settings, initial, actions) => {
          const driver = new ModelDriver(settings, initial)
          for (const action of actions) run(driver, action)
          driver.drain()
          for (const [k, n] of Object.entries(driver.seen)) seen[k] = (seen[k] ?? 0) + n
        }
      ),
      { numRuns: runs, seed }
    )
    for (const n of Object.values(seen)) expect(n).toBeGreaterThan(0)
  })
})
