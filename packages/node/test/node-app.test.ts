// The composed node, called in-process: every route family answers through one handler over one store,
// the default users exist, and a restart on the same disk keeps what was acknowledged.
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { Shutdown } from "@vellum/http"
import { admin, basic, text, withNode } from "./nodeSupport.js"

describe("the composed node", () => {
  it("answers every route family through one handler", async () => {
    const disk = new MemoryDisk()
    await withNode(disk, [], async (call) => {
      expect((await call({ url: "/ping" })).status).toBe(200)
      expect((await call({ url: "/health/live" })).status).toBe(204)
      // Streams need credentials (anonymous stream access is off by default).
      const event = JSON.stringify([
        { eventId: "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4", eventType: "t", data: { a: 1 } }
      ])
      const body = new TextEncoder().encode(event)
      const post = {
        method: "POST",
        url: "/streams/orders",
        body,
        headers: { host: "127.0.0.1:2113", "content-type": "application/vnd.eventstore.events+json" }
      }
      expect((await call(post)).status).toBe(401)
      const created = await call({ ...post, headers: { ...post.headers, authorization: admin } })
      expect(created.status).toBe(201)
      expect(created.headers["Location"]).toBe("http://127.0.0.1:2113/streams/orders/0")
      const read = await call({
        url: "/streams/orders/0",
        headers: { host: "h", authorization: admin, accept: "application/json" }
      })
      expect(JSON.parse(text(read))).toEqual({ a: 1 })
      // Users API, then the new user authenticates.
      const user = new TextEncoder().encode(
        JSON.stringify({ loginName: "ann", fullName: "Ann", password: "pw", groups: [] })
      )
      expect(
        (
          await call({
            method: "POST",
            url: "/users/",
            body: user,
            headers: { host: "h", authorization: admin, "content-type": "application/json" }
          })
        ).status
      ).toBe(201)
      const asAnn = await call({
        url: "/streams/orders/0",
        headers: { host: "h", authorization: basic("ann", "pw"), accept: "application/json" }
      })
      expect(asAnn.status).toBe(200)
      expect(
        (await call({ url: "/streams/orders/0", headers: { host: "h", authorization: basic("ann", "nope") } })).status
      ).toBe(401)
      // Node endpoints: /info/options for ops only; stats and metrics.
      expect(
        (await call({ url: "/info/options", headers: { host: "h", authorization: basic("ann", "pw") } })).status
      ).toBe(401)
      const options = await call({
        url: "/info/options",
        headers: { host: "h", authorization: basic("ops", "changeit") }
      })
      expect(options.status).toBe(200)
      expect(JSON.parse(text(options)).find((o: { name: string }) => o.name === "DefaultAdminPassword").value).toBe(
        "********"
      )
      expect((await call({ url: "/stats", headers: { host: "h", authorization: admin } })).status).toBe(200)
      expect(text(await call({ url: "/metrics", headers: { host: "h", authorization: admin } }))).toMatch(/^# HELP /m)
    })
  })

  it("keeps acknowledged events and users across a restart on the same disk", async () => {
    const disk = new MemoryDisk()
    const user = new TextEncoder().encode(
      JSON.stringify({ loginName: "bob", fullName: "Bob", password: "pw", groups: ["$admins"] })
    )
    await withNode(disk, [], async (call) => {
      expect(
        (
          await call({
            method: "POST",
            url: "/users/",
            body: user,
            headers: { host: "h", authorization: admin, "content-type": "application/json" }
          })
        ).status
      ).toBe(201)
      const body = new TextEncoder().encode('{"n":1}')
      const headers = {
        host: "h",
        authorization: admin,
        "content-type": "application/json",
        "es-eventtype": "t",
        "es-eventid": "0bf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4"
      }
      expect((await call({ method: "POST", url: "/streams/s", body, headers })).status).toBe(201)
    })
    await withNode(disk, [], async (call) => {
      const read = await call({
        url: "/streams/s/0",
        headers: { host: "h", authorization: basic("bob", "pw"), accept: "application/json" }
      })
      expect(read.status).toBe(200)
      expect(JSON.parse(text(read))).toEqual({ n: 1 })
    })
  })

  it("has no users API and no 401s in insecure mode", async () => {
    await withNode(new MemoryDisk(), ["--insecure"], async (call) => {
      expect((await call({ url: "/users/" })).status).toBe(404)
      expect((await call({ url: "/streams/$all", headers: { host: "h", accept: "application/json" } })).status).toBe(
        200
      )
    })
  })

  it("POST /admin/shutdown asks the node to stop", async () => {
    await withNode(new MemoryDisk(), [], async (call) => {
      expect(
        (
          await call({
            method: "POST",
            url: "/admin/shutdown",
            headers: { host: "h", authorization: basic("ops", "changeit") }
          })
        ).status
      ).toBe(200)
    })
      .then(({ context }) =>
        Effect.runPromise(
          Effect.provide(
            Effect.flatMap(Shutdown, (s) => s.isRequested),
            context
          )
        )
      )
      .then((requested) => expect(requested).toBe(true))
  })
})

describe("node scavenging over HTTP", () => {
  it("POST /admin/scavenge runs a scavenge that removes deleted history; /admin/scavenge/last reports it; /metrics shows the gauges", async () => {
    const disk = new MemoryDisk()
    await withNode(disk, ["--chunk-size", "1048576", "--max-append-event-size", "65536"], async (call) => {
      const as = { host: "127.0.0.1:2113", authorization: admin }
      let ids = 0
      const post = (stream: string, n: number) =>
        call({
          method: "POST",
          url: `/streams/${stream}`,
          headers: { ...as, "content-type": "application/vnd.eventstore.events+json" },
          body: new TextEncoder().encode(
            JSON.stringify(
              Array.from({ length: n }, (_, i) => ({
                eventId: `00000000-0000-4000-8000-${(++ids).toString(16).padStart(12, "0")}`,
                eventType: "t",
                data: { i, pad: "x".repeat(200) }
              }))
            )
          )
        })
      for (let round = 0; round < 5; round++) {
        expect((await post("kept", 4)).status).toBe(201)
        expect((await post("doomed", 4)).status).toBe(201)
      }
      expect(
        (await call({ method: "DELETE", url: "/streams/doomed", headers: { ...as, "es-harddelete": "true" } })).status
      ).toBe(204)
      expect(
        (
          await call({
            method: "POST",
            url: "/admin/scavenge?threshold=-1",
            headers: { host: "h", authorization: basic("ops", "changeit") }
          })
        ).status
      ).toBe(200)
      let last = ""
      for (let i = 0; i < 200 && !/"scavengeResult": "Success"/.test(last); i++) {
        await new Promise((resolve) => setImmediate(resolve))
        last = text(await call({ url: "/admin/scavenge/last", headers: { ...as, accept: "application/json" } }))
      }
      expect(last).toMatch(/"scavengeResult": "Success"/)
      // $all no longer holds the deleted stream's events, only its tombstone.
      const all = JSON.parse(
        text(
          await call({
            url: "/streams/$all/head/backward/4096?embed=body",
            headers: { ...as, accept: "application/vnd.eventstore.atom+json" }
          })
        )
      ) as { entries: Array<{ streamId: string }> }
      expect(all.entries.filter((e) => e.streamId === "doomed")).toHaveLength(1)
      expect(all.entries.filter((e) => e.streamId === "kept")).toHaveLength(20)
      expect(
        (await call({ url: "/streams/doomed", headers: { ...as, accept: "application/vnd.eventstore.atom+json" } }))
          .status
      ).toBe(410)
      expect(text(await call({ url: "/metrics", headers: as }))).toMatch(/^vellum_scavenge_running 0$/m)
      expect((await call({ method: "DELETE", url: "/admin/scavenge/current", headers: as })).status).toBe(404)
    })
  })
})
