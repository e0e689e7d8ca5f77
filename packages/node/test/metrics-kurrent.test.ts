// The composed node's `/metrics` carries KurrentDB's `kurrentdb_*` series, and they move when the node works:
// an append moves the events-written counter and the writer checkpoint, a read moves the events-read counter.
import { describe, expect, it } from "vitest"
import { parseExposition, value } from "../../http/test/nodeFixtures.js"
import { admin, text, withNode, type Call } from "./nodeAppSupport.js"

const scrape = async (call: Call) => {
  const reply = await call("GET", "/metrics", admin)
  expect(reply.status).toBe(200)
  return parseExposition(text(reply))
}

describe("kurrentdb_* metrics of a working node", () => {
  it("appends and reads move the event counters, byte counters and checkpoints; the node reports Leader", async () => {
    await withNode(async (call) => {
      // The projections subsystem writes its registry once the node leads: counted from after it.
      while ((await call("GET", "/projections/any", admin)).status !== 200)
        await new Promise((resolve) => setImmediate(resolve))
      const before = await scrape(call)
      expect(before.types.get("kurrentdb_io_events_total")).toBe("counter")
      expect(before.types.get("kurrentdb_checkpoints")).toBe("gauge")
      const written0 = value(before.samples, "kurrentdb_io_events_total", { activity: "written" }) ?? -1
      const writer0 = value(before.samples, "kurrentdb_checkpoints", { name: "writer", read: "non-flushed" }) ?? -1
      expect(written0).toBeGreaterThanOrEqual(0)
      expect(writer0).toBeGreaterThan(0)
      expect(value(before.samples, "kurrentdb_statuses", { name: "Node", status: "Leader" })).toBeGreaterThan(0)
      expect(value(before.samples, "kurrentdb_statuses", { name: "Scavenge", status: "Idle" })).toBeGreaterThan(0)
      expect(value(before.samples, "kurrentdb_proc_up_time_seconds_total")).toBeGreaterThanOrEqual(0)

      const events = [1, 2, 3].map((i) => ({
        eventId: `00000000-0000-4000-8000-00000000000${i}`,
        eventType: "t",
        data: { i, pad: "x".repeat(100) }
      }))
      const appended = await call(
        "POST",
        "/streams/orders",
        admin,
        { "content-type": "application/vnd.eventstore.events+json" },
        JSON.stringify(events)
      )
      expect(appended.status).toBe(201)
      const afterAppend = await scrape(call)
      expect(value(afterAppend.samples, "kurrentdb_io_events_total", { activity: "written" })).toBe(written0 + 3)
      const writer1 = value(afterAppend.samples, "kurrentdb_checkpoints", { name: "writer", read: "non-flushed" }) ?? -1
      expect(writer1).toBeGreaterThan(writer0 + 300)
      expect(value(afterAppend.samples, "kurrentdb_checkpoints", { name: "replication", read: "non-flushed" })).toBe(
        writer1
      )
      expect(value(afterAppend.samples, "kurrentdb_checkpoints", { name: "index", read: "non-flushed" })).toBe(writer1)

      const read0 = value(afterAppend.samples, "kurrentdb_io_events_total", { activity: "read" }) ?? -1
      const readBytes0 = value(afterAppend.samples, "kurrentdb_io_bytes_total", { activity: "read" }) ?? -1
      expect((await call("GET", "/streams/orders/0/forward/10", admin, { accept: "application/json" })).status).toBe(
        200
      )
      const afterRead = await scrape(call)
      expect(value(afterRead.samples, "kurrentdb_io_events_total", { activity: "read" })).toBe(read0 + 3)
      expect(value(afterRead.samples, "kurrentdb_io_bytes_total", { activity: "read" })).toBeGreaterThan(
        readBytes0 + 300
      )
    })
  })
})
