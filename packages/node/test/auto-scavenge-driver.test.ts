// The auto-scavenge driver on a real single node (memory disk, simulated clock): a cycle runs on schedule
// through the node's own scavenger and is recorded in `$auto-scavenges`; pause and resume; a second driver
// over the same store rebuilds the same state. The schedule here is "every minute", injected, so the
// driver is tested apart from the CRON dialect.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { ClusterStatus } from "@vellum/cluster"
import { gossipInputNow, NodeInfo, selfMember } from "@vellum/http"
import { Scavenger } from "@vellum/scavenge"
import { EventStore } from "@vellum/storage"
import { AutoScavengeCodec, type AutoScavengeReply } from "@vellum/auto-scavenge"
import { makeDriver } from "../../auto-scavenge/src/service/Driver.js"
import { makeNodeScavengeCalls } from "../../auto-scavenge/src/service/nodeCalls.js"
import * as NodeApp from "../src/NodeApp.js"
import { load } from "./configSupport.js"

const everyMinute = (_schedule: string, after: number) => (Math.floor(after / 60_000) + 1) * 60_000

/** A fresh node on its own memory disk. */
const nodeLayer = () =>
  Layer.provide(
    NodeApp.layer(load({ argv: ["--db", "/db", "--password-hash-cost", "4"] }), {
      dbDir: "/db",
      instanceId: "00000000-0000-4000-8000-000000000001"
    }),
    MemoryDisk.layer(new MemoryDisk())
  )

const makeTestDriver = Effect.gen(function* () {
  const store = yield* EventStore
  const cluster = yield* ClusterStatus
  const scavenger = yield* Scavenger
  const context = yield* Effect.context<EventStore | ClusterStatus | NodeInfo>()
  return yield* makeDriver(
    { tickMillis: 5_000, next: everyMinute },
    {
      store,
      cluster,
      scavenger,
      calls: makeNodeScavengeCalls(scavenger, undefined),
      selfRecord: Effect.provide(Effect.map(gossipInputNow, selfMember), context)
    }
  )
})

const eventTypes = Effect.gen(function* () {
  const store = yield* EventStore
  const page = yield* store.readStreamForward(AutoScavengeCodec.ScavengesStream, 0, 100)
  return page._tag === "Success" ? page.events.map((e) => e.event!.eventType) : []
})

const statusOf = (reply: AutoScavengeReply) => (reply._tag === "Status" ? reply.body : reply)

/** Lets the simulated clock run in 5 s steps until `done` holds (bounded). */
const runUntil = (done: Effect.Effect<boolean, unknown, EventStore>, steps = 200) =>
  Effect.gen(function* () {
    for (let i = 0; i < steps; i++) {
      if (yield* done) return true
      yield* TestClock.adjust(5_000)
      yield* Effect.yieldNow()
    }
    return false
  })

describe("the auto-scavenge driver on a single node", () => {
  it.scoped("runs a cycle on schedule through the node's scavenger and records it", () =>
    Effect.gen(function* () {
      const driver = yield* makeTestDriver
      expect(statusOf(yield* driver.execute({ _tag: "GetStatus" }))).toMatchObject({
        state: "NotConfigured",
        schedule: null,
        timeUntilNextCycle: null
      })
      expect(yield* driver.execute({ _tag: "Configure", schedule: "* * * * *" })).toEqual({ _tag: "Done" })
      expect(statusOf(yield* driver.execute({ _tag: "GetStatus" }))).toMatchObject({
        state: "Waiting",
        schedule: "* * * * *",
        timeUntilNextCycle: "00:01:00"
      })
      const completed = yield* runUntil(
        Effect.map(eventTypes, (types) => types.includes("$cluster-scavenge-completed"))
      )
      expect(completed).toBe(true)
      expect(yield* eventTypes).toEqual([
        "$cluster-scavenge-started",
        "$node-designated",
        "$node-scavenge-started",
        "$node-scavenge-completed",
        "$cluster-scavenge-completed"
      ])
      const store = yield* EventStore
      const meta = yield* store.getStreamMetadata(AutoScavengeCodec.ScavengesStream)
      expect(meta.metadata.maxAge).toBeGreaterThan(0)
      expect(statusOf(yield* driver.execute({ _tag: "GetStatus" }))).toMatchObject({ state: "Waiting", cycle: null })
      const last = yield* (yield* Scavenger).last
      expect(last.result).toBe("Success")
      const figures = yield* driver.figures
      expect(figures).toMatchObject({ cyclesStarted: 1, cyclesCompleted: 1, nodeScavengesStarted: 1 })
    }).pipe(Effect.provide(nodeLayer()))
  )

  it.scoped("pauses and resumes while idle; nothing starts while paused; a new driver rebuilds the state", () =>
    Effect.gen(function* () {
      const driver = yield* makeTestDriver
      yield* driver.execute({ _tag: "Configure", schedule: "* * * * *" })
      expect(yield* driver.execute({ _tag: "Pause" })).toEqual({ _tag: "Done" })
      expect(statusOf(yield* driver.execute({ _tag: "GetStatus" }))).toMatchObject({ state: "Paused" })
      const started = yield* runUntil(
        Effect.map(eventTypes, (types) => types.includes("$cluster-scavenge-started")),
        40
      )
      expect(started).toBe(false)
      expect(yield* eventTypes).toEqual(["$paused"])
      const second = yield* makeTestDriver
      expect(statusOf(yield* second.execute({ _tag: "GetStatus" }))).toMatchObject({
        state: "Paused",
        schedule: "* * * * *"
      })
      expect(yield* second.execute({ _tag: "Resume" })).toEqual({ _tag: "Done" })
      expect(yield* runUntil(Effect.map(eventTypes, (t) => t.includes("$cluster-scavenge-completed")))).toBe(true)
    }).pipe(Effect.provide(nodeLayer()))
  )
})
