// The life of a one-time projection with checkpoints and emit on a whole node (in process, over HTTP): it
// completes with its result and `$Eof`; a reset runs it again in a new epoch over truncated output; a restart
// without reset finds its output already written; a new query resets a completed one; deleting it removes
// what it wrote. And a continuous projection reset while running starts again from the beginning with a fresh
// state, whose state and result stay readable once it is disabled.
import { describe, expect, it } from "vitest"
import type { Reply } from "@vellum/http"
import { admin, text, withNode, type Call } from "./nodeAppSupport.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
let ids = 0

const append = async (call: Call, stream: string, type: string, count: number) => {
  const body = Array.from({ length: count }, () => ({ eventId: id(++ids), eventType: type, data: { n: ids } }))
  const reply = await call(
    "POST",
    `/streams/${stream}`,
    admin,
    { "Content-Type": "application/vnd.eventstore.events+json" },
    JSON.stringify(body)
  )
  expect(reply.status).toBe(201)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The subsystem loads once the node leads: until then its routes answer 503. */
const ready = async (request: () => Promise<Reply>): Promise<Reply> => {
  for (;;) {
    const reply = await request()
    if (reply.status !== 503) return reply
    await sleep(5)
  }
}

const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 4_000; i++) {
    if (await check()) return
    await sleep(5)
  }
  throw new Error(`never: ${what}`)
}

interface Statistics {
  readonly status: string
  readonly epoch: number
  readonly version: number
}

const statistics = async (call: Call, name: string) =>
  JSON.parse(text(await call("GET", `/projection/${name}`, admin))) as Statistics

const command = async (call: Call, name: string, what: string) =>
  expect((await call("POST", `/projection/${name}/command/${what}`, admin)).status).toBe(200)

/** Sets the checkpoint threshold (the projection must be stopped). */
const configure = async (call: Call, name: string, checkpointHandledThreshold: number) => {
  const body = {
    emitEnabled: true,
    checkpointHandledThreshold,
    checkpointUnhandledBytesThreshold: 10_000_000,
    pendingEventsThreshold: 5000,
    maxWriteBatchLength: 500
  }
  const reply = await call(
    "PUT",
    `/projection/${name}/config`,
    admin,
    { "Content-Type": "application/json" },
    JSON.stringify(body)
  )
  expect(reply.status).toBe(200)
}

interface Event {
  readonly eventNumber: number
  readonly eventType: string
  readonly data: unknown
}

/** The events a reader sees in `stream`, oldest first; undefined when it is not found (404). */
const read = async (call: Call, stream: string): Promise<ReadonlyArray<Event> | undefined> => {
  const reply = await call("GET", `/streams/${encodeURIComponent(stream)}/0/forward/4096?embed=body`, admin, {
    Accept: "application/vnd.eventstore.atom+json"
  })
  if (reply.status === 404) return undefined
  expect(reply.status, `${stream}: ${text(reply)}`).toBe(200)
  const entries = (JSON.parse(text(reply)) as { entries: ReadonlyArray<Event & { data?: string }> }).entries
  return [...entries]
    .map((e) => ({ eventNumber: e.eventNumber, eventType: e.eventType, data: parse(e.data) }))
    .sort((a, b) => a.eventNumber - b.eventNumber)
}

const parse = (data: string | undefined): unknown => {
  if (data === undefined || data === "") return undefined
  try {
    return JSON.parse(data) as unknown
  } catch {
    return data
  }
}

/** One event's data as it is stored (not JSON: the feeds leave it out). */
const rawData = async (call: Call, stream: string, number: number) =>
  text(
    await call("GET", `/streams/${encodeURIComponent(stream)}/${number}`, admin, { Accept: "application/octet-stream" })
  )

/** The `$tb` of a stream's metadata (undefined without one). */
const truncateBefore = async (call: Call, stream: string) => {
  const reply = await call("GET", `/streams/${encodeURIComponent(stream)}/metadata`, admin, {
    Accept: "application/json"
  })
  return (JSON.parse(text(reply)) as { $tb?: number }).$tb
}

/** The last event number of a stream, truncated or not. */
const lastNumber = async (call: Call, stream: string) => {
  const reply = await call("GET", `/streams/${encodeURIComponent(stream)}/head/backward/1?embed=body`, admin, {
    Accept: "application/vnd.eventstore.atom+json"
  })
  expect(reply.status).toBe(200)
  return (JSON.parse(text(reply)) as { entries: ReadonlyArray<{ eventNumber: number }> }).entries[0]!.eventNumber
}

const seen = (events: ReadonlyArray<Event> | undefined) => events?.map((e) => [e.eventType, e.data])

// Counts the Sold events and emits one `Seen` per event into `out-{its stream}`.
const counting = (tag: string) =>
  `fromAll().when({
    $init: function () { return { n: 0 } },
    Sold: function (s, e) {
      s.n++
      emit("out-" + e.streamId, "Seen", { number: e.sequenceNumber, tag: "${tag}" })
      return s
    }
  })`

const expectedOut = (count: number, tag: string) =>
  Array.from({ length: count }, (_, number) => ["Seen", { number, tag }])

describe("a one-time projection with checkpoints and emit", () => {
  it("completes, resets into a new epoch, restarts over its own output, resets on a new query, and is deleted with what it wrote", () =>
    withNode(async (call) => {
      await append(call, "shop-1", "Sold", 3)
      await append(call, "bank-1", "Sold", 2)
      await append(call, "bank-1", "Other", 1)
      const created = await ready(() =>
        call(
          "POST",
          "/projections/onetime?name=once&emit=yes&checkpoints=yes&trackemittedstreams=yes&enabled=yes",
          admin,
          {},
          counting("a")
        )
      )
      expect(created.status).toBe(201)

      // Completed: its result, then $Eof, in its result stream; each emitted event once.
      const completed = async (epoch: number) =>
        until(`once completed in epoch ${epoch}`, async () => {
          const s = await statistics(call, "once")
          return s.status === "Completed" && s.epoch === epoch
        })
      const first = await statistics(call, "once").then(async (s) => (await completed(s.epoch), s.epoch))
      expect(text(await call("GET", "/projection/once/result", admin))).toBe('{"n":5}')
      expect(seen(await read(call, "$projections-once-result"))).toEqual([
        ["Result", { n: 5 }],
        ["$Eof", undefined]
      ])
      expect(seen(await read(call, "out-shop-1"))).toEqual(expectedOut(3, "a"))
      expect(seen(await read(call, "out-bank-1"))).toEqual(expectedOut(2, "a"))

      // Reset: a new epoch from the start; the older output is truncated away and written again once.
      await append(call, "shop-1", "Sold", 1)
      await command(call, "once", "reset")
      const second = (await statistics(call, "once")).epoch
      expect(second).toBeGreaterThan(first)
      await completed(second)
      expect(text(await call("GET", "/projection/once/result", admin))).toBe('{"n":6}')
      expect(seen(await read(call, "out-shop-1"))).toEqual(expectedOut(4, "a"))
      expect(await truncateBefore(call, "out-shop-1")).toBe(3)
      expect(seen(await read(call, "out-bank-1"))).toEqual(expectedOut(2, "a"))
      expect(await truncateBefore(call, "out-bank-1")).toBe(2)
      expect(seen(await read(call, "$projections-once-result"))).toEqual([
        ["Result", { n: 6 }],
        ["$Eof", undefined]
      ])

      // Disable and enable (no reset): it runs from the start again in the same epoch and finds every write of
      // its own already there.
      await command(call, "once", "disable")
      expect((await statistics(call, "once")).status).toMatch(/^Stopped/)
      const written = await lastNumber(call, "out-shop-1")
      expect(written).toBe(6)
      // Checkpoints every other event from now on, so that this run and the next write some.
      await configure(call, "once", 2)
      await command(call, "once", "enable")
      await completed(second)
      expect(text(await call("GET", "/projection/once/result", admin))).toBe('{"n":6}')
      expect(seen(await read(call, "out-shop-1"))).toEqual(expectedOut(4, "a"))
      expect(await lastNumber(call, "out-shop-1")).toBe(written)
      expect(seen(await read(call, "out-bank-1"))).toEqual(expectedOut(2, "a"))
      expect(seen(await read(call, "$projections-once-result"))).toEqual([
        ["Result", { n: 6 }],
        ["$Eof", undefined]
      ])

      // A new query on a completed projection resets it: a new epoch, its new output alone.
      const put = await call("PUT", "/projection/once/query?emit=yes", admin, {}, counting("b"))
      expect(put.status).toBe(200)
      const third = (await statistics(call, "once")).epoch
      expect(third).toBeGreaterThan(second)
      await completed(third)
      expect(seen(await read(call, "out-shop-1"))).toEqual(expectedOut(4, "b"))
      expect(seen(await read(call, "out-bank-1"))).toEqual(expectedOut(2, "b"))

      // Deleted with its emitted and checkpoint streams: what it wrote is gone.
      const tracked = await read(call, "$projections-once-emittedstreams")
      const trackedStreams = await Promise.all(
        (tracked ?? []).map((e) => rawData(call, "$projections-once-emittedstreams", e.eventNumber))
      )
      expect(trackedStreams.sort()).toEqual(["$projections-once-result", "out-bank-1", "out-shop-1"])
      expect((await read(call, "$projections-once-checkpoint"))?.map((e) => e.eventType)).toContain(
        "$ProjectionCheckpoint"
      )
      await command(call, "once", "disable")
      const deleted = await call(
        "DELETE",
        "/projection/once?deleteEmittedStreams=yes&deleteCheckpointStream=yes",
        admin
      )
      expect(deleted.status).toBe(200)
      await until("once deleted", async () => (await call("GET", "/projection/once", admin)).status === 404)
      expect(await read(call, "out-shop-1")).toBeUndefined()
      expect(await read(call, "out-bank-1")).toBeUndefined()
      expect(await read(call, "$projections-once-checkpoint")).toBeUndefined()
      expect(await read(call, "$projections-once-emittedstreams")).toBeUndefined()
      expect(await read(call, "$projections-once-result")).toBeUndefined()
      expect(await read(call, "shop-1")).toHaveLength(4)
    }))
  it("stopped while it runs and enabled again, runs from the start and writes each output once", () =>
    withNode(async (call) => {
      const streams = 6
      for (let batch = 0; batch < 12; batch++) await append(call, `shop-${batch % streams}`, "Sold", 100)
      const created = await ready(() =>
        call("POST", "/projections/onetime?name=long&emit=yes&checkpoints=yes&enabled=no", admin, {}, counting("a"))
      )
      expect(created.status).toBe(201)
      // Small batches (a batch is at most the checkpoint threshold), so that requests come between them.
      await configure(call, "long", 10)
      await command(call, "long", "enable")
      await until("long midway", async () => ((await read(call, "out-shop-0")) ?? []).length > 0)
      await command(call, "long", "disable")
      expect((await statistics(call, "long")).status).toMatch(/^Stopped/)
      const midway = await Promise.all(
        Array.from({ length: streams }, async (_, k) => (await read(call, `out-shop-${k}`))?.length ?? 0)
      )
      expect(midway.reduce((a, b) => a + b)).toBeLessThan(1200)
      const epoch = (await statistics(call, "long")).epoch
      await command(call, "long", "enable")
      await until("long completed", async () => (await statistics(call, "long")).status === "Completed")
      expect((await statistics(call, "long")).epoch).toBe(epoch)
      expect(text(await call("GET", "/projection/long/result", admin))).toBe('{"n":1200}')
      for (let stream = 0; stream < streams; stream++) {
        expect(seen(await read(call, `out-shop-${stream}`)), `out-shop-${stream}`).toEqual(expectedOut(200, "a"))
        expect(await truncateBefore(call, `out-shop-${stream}`)).toBeUndefined()
      }
      expect(seen(await read(call, "$projections-long-result"))).toEqual([
        ["Result", { n: 1200 }],
        ["$Eof", undefined]
      ])
    }))
})

describe("a continuous projection", () => {
  it("reset while running starts again from the beginning with a fresh state; disabled, its state and result stay readable", () =>
    withNode(async (call) => {
      await append(call, "till-1", "Sold", 4)
      const query = `fromAll().when({
        $init: function () { return { n: 0, done: false } },
        Sold: function (s, e) { s.n++; emit("tally-" + e.streamId, "Counted", { n: s.n }); return s },
        Done: function (s) { s.done = true; return s }
      }).transformBy(function (s) { return { total: s.n } })`
      const created = await ready(() =>
        call("POST", "/projections/continuous?name=live&emit=yes&enabled=yes", admin, {}, query)
      )
      expect(created.status).toBe(201)
      await until(
        "live counted 4",
        async () => text(await call("GET", "/projection/live/state", admin)) === '{"n":4,"done":false}'
      )
      await until("live wrote 4", async () => (await read(call, "tally-till-1"))?.length === 4)
      const first = (await statistics(call, "live")).epoch

      await command(call, "live", "reset")
      expect((await statistics(call, "live")).epoch).toBeGreaterThan(first)
      await append(call, "till-1", "Sold", 2)
      await append(call, "till-1", "Done", 1)
      await until(
        "live saw Done",
        async () =>
          (JSON.parse(text(await call("GET", "/projection/live/state", admin)) || "{}") as { done?: boolean }).done ===
          true
      )
      expect(text(await call("GET", "/projection/live/state", admin))).toBe('{"n":6,"done":true}')
      expect(text(await call("GET", "/projection/live/result", admin))).toBe('{"total":6}')
      expect((await statistics(call, "live")).status).toBe("Running")
      // Its output of the older epoch is out of sight; the new one counts from 1 again, each event once.
      expect(seen(await read(call, "tally-till-1"))).toEqual(
        Array.from({ length: 6 }, (_, i) => ["Counted", { n: i + 1 }])
      )
      expect(await truncateBefore(call, "tally-till-1")).toBe(4)
      expect(await lastNumber(call, "tally-till-1")).toBe(9)

      await command(call, "live", "disable")
      expect((await statistics(call, "live")).status).toMatch(/^Stopped/)
      expect(text(await call("GET", "/projection/live/state", admin))).toBe('{"n":6,"done":true}')
      expect(text(await call("GET", "/projection/live/result", admin))).toBe('{"total":6}')
      expect(text(await call("GET", "/projection/live/state", admin))).toBe('{"n":6,"done":true}')
    }))
})
