// The options that switch parts of the HTTP interface on and off, on the composed node: each route family
// is there or answers 404 as the reference's controller registration does, and /info's features say so.
import { describe, expect, it } from "vitest"
import { MemoryDisk } from "@vellum/platform"
import { admin, basic, text, withNode, type Call } from "./nodeSupport.js"

const as = (authorization?: string) => ({
  host: "127.0.0.1:2113",
  ...(authorization === undefined ? {} : { authorization })
})
const json = { ...as(admin), accept: "application/json" }
const statusOf = async (call: Call, url: string, headers: Record<string, string> = json, method = "GET") =>
  (await call({ method, url, headers })).status
const infoFeatures = async (call: Call) => JSON.parse(text(await call({ url: "/info", headers: json }))).features

const appendOne = (call: Call, stream: string) =>
  call({
    method: "POST",
    url: `/streams/${stream}`,
    headers: { ...as(admin), "content-type": "application/vnd.eventstore.events+json" },
    body: new TextEncoder().encode(
      JSON.stringify([{ eventId: "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4", eventType: "t", data: { a: 1 } }])
    )
  })

describe("--enable-atom-pub-over-http", () => {
  it("on by default: streams answer and /info says atomPub", async () => {
    await withNode(new MemoryDisk(), [], async (call) => {
      expect((await appendOne(call, "s")).status).toBe(201)
      expect(await infoFeatures(call)).toEqual({ projections: true, userManagement: true, atomPub: true })
    })
  })

  it("=false: every /streams route answers 404; users, node and admin endpoints stay", async () => {
    await withNode(new MemoryDisk(), ["--enable-atom-pub-over-http=false"], async (call) => {
      expect((await appendOne(call, "s")).status).toBe(404)
      for (const url of ["/streams/s", "/streams/$all", "/streams/s/metadata", "/streams/s/0"])
        expect(await statusOf(call, url), url).toBe(404)
      expect(await statusOf(call, "/streams/s", json, "DELETE")).toBe(404)
      expect(await infoFeatures(call)).toEqual({ projections: true, userManagement: true, atomPub: false })
      expect(await statusOf(call, "/users/")).toBe(200)
      expect(await statusOf(call, "/stats")).toBe(200)
      expect(await statusOf(call, "/gossip")).toBe(200)
      expect(await statusOf(call, "/admin/scavenge/last")).toBe(200)
    })
  })
})

describe("the scavenge history with AtomPub off", () => {
  it("stays readable as in the reference (its admin controller serves it): $scavenges and a run's page", async () => {
    await withNode(new MemoryDisk(), ["--enable-atom-pub-over-http=false"], async (call) => {
      expect(await statusOf(call, "/admin/scavenge", json, "POST")).toBe(200)
      let last = ""
      for (let i = 0; i < 200 && !/"scavengeResult": "Success"/.test(last); i++) {
        await new Promise((resolve) => setImmediate(resolve))
        last = text(await call({ url: "/admin/scavenge/last", headers: json }))
      }
      const scavengeId = JSON.parse(last).scavengeId as string
      const feed = { ...as(admin), accept: "application/vnd.eventstore.atom+json" }
      const history = await call({ url: "/streams/$scavenges?embed=body", headers: feed })
      expect(history.status).toBe(200)
      expect(JSON.parse(text(history)).entries.length).toBeGreaterThan(0)
      const run = await call({ url: `/streams/$scavenges/${scavengeId}/0/20`, headers: feed })
      expect(run.status).toBe(200)
      expect(JSON.parse(text(run)).title).toContain(`$scavenges-${scavengeId}`)
      expect(await statusOf(call, "/streams/$scavenges-x", feed)).toBe(404)
    })
    await withNode(new MemoryDisk(), ["--enable-atom-pub-over-http=false", "--disable-admin-ui"], async (call) => {
      expect(
        await statusOf(call, "/streams/$scavenges", { ...as(admin), accept: "application/vnd.eventstore.atom+json" })
      ).toBe(404)
    })
  })
})

describe("--insecure", () => {
  it("reports userManagement: false in /info", async () => {
    await withNode(new MemoryDisk(), ["--insecure"], async (call) => {
      expect(await infoFeatures(call)).toEqual({ projections: true, userManagement: false, atomPub: true })
      expect(JSON.parse(text(await call({ url: "/info", headers: json }))).authentication.type).toBe("insecure")
    })
  })
})

describe("--disable-stats-on-http and --disable-gossip-on-http", () => {
  it("by default /stats, its sub-paths, /metrics and /gossip answer", async () => {
    await withNode(new MemoryDisk(), [], async (call) => {
      for (const url of ["/stats", "/stats/proc", "/stats/tcp", "/stats/replication", "/metrics", "/gossip"]) {
        expect(await statusOf(call, url, as(admin)), url).toBe(200)
      }
    })
  })

  it("--disable-stats-on-http: /stats… and /metrics answer 404 (the reference drops both controllers); gossip stays", async () => {
    await withNode(new MemoryDisk(), ["--disable-stats-on-http"], async (call) => {
      for (const url of ["/stats", "/stats/proc", "/stats/tcp", "/stats/replication", "/metrics"])
        expect(await statusOf(call, url, as(admin)), url).toBe(404)
      expect(await statusOf(call, "/gossip")).toBe(200)
    })
  })

  it("--disable-gossip-on-http: /gossip answers 404; stats stay", async () => {
    await withNode(new MemoryDisk(), ["--disable-gossip-on-http"], async (call) => {
      expect(await statusOf(call, "/gossip")).toBe(404)
      expect(await statusOf(call, "/stats")).toBe(200)
    })
  })
})

describe("--disable-admin-ui", () => {
  it("drops the admin endpoints as the reference's switch drops its admin controller: shutdown and scavenge answer 404", async () => {
    await withNode(new MemoryDisk(), ["--disable-admin-ui"], async (call) => {
      expect(await statusOf(call, "/admin/shutdown", json, "POST")).toBe(404)
      expect(await statusOf(call, "/admin/scavenge", json, "POST")).toBe(404)
      expect(await statusOf(call, "/admin/scavenge/last")).toBe(404)
      expect(await statusOf(call, "/ping")).toBe(200)
    })
    await withNode(new MemoryDisk(), [], async (call) => {
      expect(await statusOf(call, "/admin/scavenge/last")).toBe(200)
    })
  })
})

describe("anonymous access", () => {
  it("gossip is anonymous by default; --override-anonymous-endpoint-access-for-gossip=false makes it follow the endpoint rule", async () => {
    await withNode(new MemoryDisk(), [], async (call) => {
      expect(await statusOf(call, "/gossip", as())).toBe(200)
    })
    await withNode(new MemoryDisk(), ["--override-anonymous-endpoint-access-for-gossip=false"], async (call) => {
      expect(await statusOf(call, "/gossip", as())).toBe(401)
      expect(await statusOf(call, "/gossip", as(basic("ops", "changeit")))).toBe(200)
    })
    await withNode(
      new MemoryDisk(),
      ["--override-anonymous-endpoint-access-for-gossip=false", "--allow-anonymous-endpoint-access"],
      async (call) => {
        expect(await statusOf(call, "/gossip", as())).toBe(200)
      }
    )
  })

  it("--allow-anonymous-endpoint-access opens /stats to anonymous callers; --allow-anonymous-stream-access opens streams", async () => {
    await withNode(new MemoryDisk(), [], async (call) => {
      expect(await statusOf(call, "/stats", as())).toBe(401)
      expect(await statusOf(call, "/streams/s", as())).toBe(401)
    })
    await withNode(
      new MemoryDisk(),
      ["--allow-anonymous-endpoint-access", "--allow-anonymous-stream-access"],
      async (call) => {
        expect(await statusOf(call, "/stats", as())).toBe(200)
        expect(await statusOf(call, "/streams/s", { ...as(), accept: "application/json" })).toBe(404)
      }
    )
  })
})

describe("--node-priority", () => {
  it("is reported in /gossip", async () => {
    await withNode(new MemoryDisk(), ["--node-priority", "7"], async (call) => {
      const gossip = JSON.parse(text(await call({ url: "/gossip", headers: json })))
      expect(gossip.members[0].nodePriority).toBe(7)
    })
  })
})

describe("--node-host-advertise-as, --node-port-advertise-as", () => {
  it("put the advertised address in absolute links and in /gossip's HTTP endpoint", async () => {
    const argv = ["--node-host-advertise-as", "db1.example.com", "--node-port-advertise-as", "8113"]
    await withNode(new MemoryDisk(), argv, async (call) => {
      expect((await appendOne(call, "s")).headers["Location"]).toBe("http://db1.example.com:8113/streams/s/0")
      const member = JSON.parse(text(await call({ url: "/gossip", headers: json }))).members[0]
      expect([member.httpEndPointIp, member.httpEndPointPort]).toEqual(["db1.example.com", 8113])
    })
    await withNode(new MemoryDisk(), [], async (call) => {
      expect((await appendOne(call, "s")).headers["Location"]).toBe("http://127.0.0.1:2113/streams/s/0")
    })
  })
})

describe("--disable-http-caching", () => {
  it("makes every read uncacheable", async () => {
    const cacheOf = async (argv: ReadonlyArray<string>) =>
      withNode(new MemoryDisk(), argv, async (call) => {
        expect((await appendOne(call, "s")).status).toBe(201)
        return (await call({ url: "/streams/s/0", headers: json })).headers["Cache-Control"]
      }).then(({ result }) => result)
    expect(await cacheOf([])).toMatch(/max-age=\d+/)
    expect(await cacheOf(["--disable-http-caching"])).toBe("max-age=0, no-cache, must-revalidate")
  })
})
