// Projections on a whole node (the real service, sandbox, store and security), end to end over HTTP, and the
// options that shape them: `--run-projections`, `--start-standard-projections`, the compilation and execution
// timeouts, `--max-projection-state-size` and `--projections-query-expiry`.
import { describe, expect, it } from "vitest"
import type { Reply } from "@vellum/http"
import { admin, text, withNode, type Call } from "./nodeAppSupport.js"
import { load } from "./configSupport.js"
import { toProjectionsSettings } from "../src/config/projectionSettings.js"

const base = ["--mem-db", "--password-hash-cost", "4"]
const Events = { "Content-Type": "application/vnd.eventstore.events+json" }
const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

const append = (call: Call, stream: string, type: string, ns: ReadonlyArray<number>) =>
  call(
    "POST",
    `/streams/${stream}`,
    admin,
    Events,
    JSON.stringify(ns.map((n) => ({ eventId: id(n), eventType: type, data: { n } })))
  )

/** The subsystem loads once the node leads: until then its routes answer 503. */
const untilReady = async (request: () => Promise<Reply>): Promise<Reply> => {
  for (;;) {
    const reply = await request()
    if (reply.status !== 503) return reply
    await new Promise((resolve) => setImmediate(resolve))
  }
}

const until = async (check: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 5_000; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error("the condition never held")
}

const statistics = async (call: Call, name: string) =>
  JSON.parse(text(await call("GET", `/projection/${encodeURIComponent(name)}`, admin))) as {
    status: string
    stateReason: string
    eventsProcessedAfterRestart: number
  }

const create = (call: Call, mode: string, name: string, query: string, params = "") =>
  untilReady(() => call("POST", `/projections/${mode}?name=${encodeURIComponent(name)}${params}`, admin, {}, query))

describe("projections on a node", () => {
  it("runs a continuous user projection: its state and result follow the log", () =>
    withNode(async (call) => {
      await append(call, "account-1", "Deposited", [1, 2])
      const created = await create(
        call,
        "continuous",
        "count",
        "fromAll().when({$init: () => ({n: 0}), Deposited: (s, e) => { s.n += e.data.n }}).transformBy((s) => ({total: s.n}))"
      )
      expect(created.status).toBe(201)
      await until(async () => text(await call("GET", "/projection/count/state", admin)) === '{"n":3}')
      await append(call, "account-2", "Deposited", [10])
      await until(async () => text(await call("GET", "/projection/count/result", admin)) === '{"total":13}')
      expect((await statistics(call, "count")).status).toBe("Running")
    }))

  it("reports projections as enabled in /info by default, and not with --run-projections None", async () => {
    await withNode(async (call) => {
      expect(JSON.parse(text(await call("GET", "/info", admin))).features.projections).toBe(true)
    })
    await withNode(
      async (call) => {
        expect(JSON.parse(text(await call("GET", "/info", admin))).features.projections).toBe(false)
        expect((await call("GET", "/projections/any", admin)).status).toBe(404)
      },
      [...base, "--run-projections", "None"]
    )
  })

  it("creates the system projections stopped, and started with --start-standard-projections", async () => {
    await withNode(async (call) => {
      await untilReady(() => call("GET", "/projections/any", admin))
      await until(async () => (await call("GET", "/projection/$by_category", admin)).status === 200)
      expect((await statistics(call, "$by_category")).status).toBe("Stopped")
    })
    await withNode(
      async (call) => {
        await append(call, "order-1", "Placed", [1])
        await untilReady(() => call("GET", "/projections/any", admin))
        await until(
          async () => (await call("GET", "/streams/$ce-order/0", admin, { Accept: "application/json" })).status === 200
        )
        expect((await statistics(call, "$by_category")).status).toBe("Running")
      },
      [...base, "--start-standard-projections"]
    )
  })

  it("with --run-projections System creates user projections but does not run them", () =>
    withNode(
      async (call) => {
        expect((await create(call, "continuous", "idle", "fromAll().when({$any: (s) => s})")).status).toBe(201)
        await until(async () => (await statistics(call, "idle")).status.startsWith("Stopped"))
        expect((await statistics(call, "idle")).eventsProcessedAfterRestart).toBe(0)
      },
      [...base, "--run-projections", "System"]
    ))

  it("faults a handler that runs past --projection-execution-timeout, naming the event", () =>
    withNode(
      async (call) => {
        await append(call, "loop-1", "Spin", [1])
        await create(call, "continuous", "spin", "fromAll().when({Spin: () => { for (;;) {} }})")
        await until(async () => (await statistics(call, "spin")).status.startsWith("Faulted"))
        const reason = (await statistics(call, "spin")).stateReason
        expect(reason).toContain("Projection script took too long to execute")
        expect(reason).toContain("Spin")
      },
      [...base, "--projection-execution-timeout", "50"]
    ))

  it("faults a script whose top level runs past --projection-compilation-timeout", () =>
    withNode(
      async (call) => {
        expect((await create(call, "continuous", "slow", "for (;;) {} fromAll()")).status).toBe(201)
        await until(async () => (await statistics(call, "slow")).status.startsWith("Faulted"))
        expect((await statistics(call, "slow")).stateReason).toContain("Projection script took too long to compile")
      },
      [...base, "--projection-compilation-timeout", "50"]
    ))

  it("faults a projection whose state grows past --max-projection-state-size", () =>
    withNode(
      async (call) => {
        await append(call, "big-1", "Grow", [1])
        await create(call, "continuous", "big", "fromAll().when({Grow: () => ({text: 'x'.repeat(200)})})")
        await until(async () => (await statistics(call, "big")).status.startsWith("Faulted"))
        expect((await statistics(call, "big")).stateReason).toContain(
          "exceeds the configured MaxProjectionStateSize of 100 bytes"
        )
      },
      [...base, "--max-projection-state-size", "100"]
    ))

  it("shows a faulted projection, its progress and its lag in /stats and /metrics", () =>
    withNode(async (call) => {
      await append(call, "job-1", "Run", [1, 2])
      await create(
        call,
        "continuous",
        "fails-on-2",
        "fromAll().when({Run: (s, e) => { if (e.data.n === 2) throw new Error('two') }})"
      )
      await until(async () => (await statistics(call, "fails-on-2")).status.startsWith("Faulted"))
      const stats = JSON.parse(text(await call("GET", "/stats", admin))) as {
        es: { projection: Record<string, Record<string, unknown>> }
      }
      const figures = stats.es.projection["fails_on_2"]!
      expect(figures.status).toBe("Faulted (Enabled)")
      expect(figures.faulted).toBe(1)
      expect(figures.running).toBe(0)
      expect(figures.eventsProcessedAfterRestart).toBe(1)
      expect(figures.lagEvents).toBeGreaterThan(0)
      const metrics = text(await call("GET", "/metrics", admin))
      expect(metrics).toContain('vellum_projection_faulted{projection="fails-on-2"} 1')
      expect(metrics).toContain('vellum_projection_events_processed{projection="fails-on-2"} 1')
      expect(metrics).toMatch(/vellum_projection_lag_events\{projection="fails-on-2"\} [1-9]/)
    }))

  it("answers a transient query: it runs to the end of the log, completes, and gives its result", () =>
    withNode(async (call) => {
      await append(call, "shop-1", "Sold", [3, 4])
      const created = await create(
        call,
        "transient",
        "sales",
        "fromAll().when({$init: () => ({total: 0}), Sold: (s, e) => { s.total += e.data.n }})"
      )
      expect(created.status).toBe(201)
      await until(async () => (await statistics(call, "sales")).status === "Completed")
      expect(text(await call("GET", "/projection/sales/result", admin))).toBe('{"total":7}')
    }))

  it("runs fromCategory over $by_category, and $by_event_type indexes every type", () =>
    withNode(
      async (call) => {
        await append(call, "cart-1", "Added", [1, 2])
        await append(call, "cart-2", "Added", [3])
        await append(call, "user-1", "Joined", [4])
        await create(
          call,
          "continuous",
          "carts",
          "fromCategory('cart').foreachStream().when({$init: () => ({n: 0}), Added: (s, e) => { s.n += e.data.n }})"
        )
        await until(
          async () => text(await call("GET", "/projection/carts/state?partition=cart-1", admin)) === '{"n":3}'
        )
        expect(text(await call("GET", "/projection/carts/state?partition=cart-2", admin))).toBe('{"n":3}')
        const feed = (stream: string) =>
          call("GET", `/streams/${stream}/0/forward/10`, admin, { Accept: "application/vnd.eventstore.atom+json" })
        await until(async () => (await feed("$et-Joined")).status === 200)
        const titles = JSON.parse(text(await feed("$et-Added"))).entries.map((e: { title: string }) => e.title)
        // Newest first, each link resolved to its event: the three Added events in log order.
        expect(titles).toEqual(["0@cart-2", "1@cart-1", "0@cart-1"])
      },
      [...base, "--start-standard-projections"]
    ))

  it("reads events for a definition (read-events) with the projection's filters", () =>
    withNode(async (call) => {
      await append(call, "acct-1", "Opened", [1])
      await append(call, "acct-1", "Closed", [2])
      await untilReady(() => call("GET", "/projections/any", admin))
      const reply = await call(
        "POST",
        "/projections/read-events",
        admin,
        { "Content-Type": "application/json" },
        JSON.stringify({
          query: { allEvents: false, events: ["Closed"], streams: ["acct-1"] },
          position: { $s: { "acct-1": -1 } },
          maxEvents: 10
        })
      )
      expect(reply.status).toBe(200)
      const body = JSON.parse(text(reply)) as { events: ReadonlyArray<{ eventType: string; data: { n: number } }> }
      expect(body.events.map((e) => [e.eventType, e.data.n])).toEqual([["Closed", 2]])
    }))

  it("keeps a shared state beside the partitions' (bi-state): the root state is the shared one", () =>
    withNode(async (call) => {
      await append(call, "room-1", "Said", [1, 2])
      await append(call, "room-2", "Said", [3])
      await create(
        call,
        "continuous",
        "rooms",
        `fromAll().foreachStream().when({
          $init: () => ({n: 0}),
          $initShared: () => ({total: 0}),
          Said: (s, e) => { s[0].n++; s[1].total += e.data.n }
        })`
      )
      await until(async () => text(await call("GET", "/projection/rooms/state", admin)) === '{"total":6}')
      expect(text(await call("GET", "/projection/rooms/state?partition=room-1", admin))).toBe('{"n":2}')
    }))

  it("takes the query expiry in minutes from --projections-query-expiry", () => {
    expect(
      toProjectionsSettings(load({ argv: [...base, "--projections-query-expiry", "2"] }).config).queryExpiryMillis
    ).toBe(120_000)
  })
})
