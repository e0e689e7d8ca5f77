/**
 * The collection routes and one projection's statistics: the lists by mode, the statistics document (the
 * reference's members in its order, absolute URLs, positions as text, `progress` as a .NET float, Vellum's
 * figures at the end), the redirect of `GET /projections` and the restart.
 */
import { describe, expect, it } from "vitest"
import { AdminAuth, OpsAuth, UserAuth, header, json, makeProjectionsNode, text } from "./httpSupport.js"
import { sampleStatistics } from "./httpFakeProjections.js"

const StatisticsMembers = [
  "coreProcessingTime",
  "version",
  "epoch",
  "effectiveName",
  "writesInProgress",
  "readsInProgress",
  "partitionsCached",
  "status",
  "stateReason",
  "name",
  "mode",
  "position",
  "progress",
  "lastCheckpoint",
  "eventsProcessedAfterRestart",
  "statusUrl",
  "stateUrl",
  "resultUrl",
  "queryUrl",
  "resultStreamUrl",
  "enableCommandUrl",
  "disableCommandUrl",
  "checkpointStatus",
  "bufferedEvents",
  "writePendingEventsBeforeCheckpoint",
  "writePendingEventsAfterCheckpoint",
  "lagEvents",
  "lagMilliseconds",
  "stateBytes"
]

describe("GET /projections/{mode}", () => {
  it.each([
    ["any", "Any"],
    ["all-non-transient", "AllNonTransient"],
    ["transient", "Transient"],
    ["onetime", "OneTime"],
    ["continuous", "Continuous"]
  ])("/projections/%s lists with the filter %s", async (path, filter) => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", `/projections/${path}`, { auth: UserAuth })
    expect(reply.status).toBe(200)
    expect(header(reply, "Content-Type")).toBe("application/json; charset=utf-8")
    expect(node.fake.onlyCall()).toEqual({ op: "list", args: [filter] })
    const body = json(reply)
    expect(Object.keys(body)).toEqual(["projections"])
    expect(body.projections.map((p: { name: string }) => p.name)).toEqual(["orders"])
  })

  it("is indented JSON, as the reference's codec writes it", async () => {
    const node = makeProjectionsNode()
    const body = text(await node.request("GET", "/projections/any", { auth: UserAuth }))
    expect(body.startsWith('{\n  "projections": [\n    {\n      "coreProcessingTime": 17,\n')).toBe(true)
  })

  it("an empty list is an empty array", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.list = { _tag: "Ok", value: [] }
    expect(text(await node.request("GET", "/projections/onetime", { auth: UserAuth }))).toBe(
      '{\n  "projections": []\n}'
    )
  })

  it("needs an authenticated caller", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", "/projections/any")
    expect(reply.status).toBe(401)
    expect(node.fake.calls).toEqual([])
  })

  it("lets anonymous callers list when the node allows anonymous endpoint access", async () => {
    const node = makeProjectionsNode({ allowAnonymousEndpointAccess: true })
    expect((await node.request("GET", "/projections/any")).status).toBe(200)
  })

  it("answers 503 with the reason while the subsystem is not running here", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.list = { _tag: "NotReady", reason: "Projections are not running on this node" }
    const reply = await node.request("GET", "/projections/any", { auth: UserAuth })
    expect(reply.status).toBe(503)
    expect(header(reply, "Content-Type")).toBe("text/plain; charset=utf-8")
    expect(text(reply)).toBe("Projections are not running on this node")
  })
})

describe("statistics", () => {
  it("GET /projection/{name} is one statistics object, members in the reference's order, Vellum's last", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", "/projection/orders", { auth: UserAuth })
    expect(reply.status).toBe(200)
    expect(node.fake.onlyCall()).toEqual({ op: "statistics", args: ["orders"] })
    const body = json(reply)
    expect(Object.keys(body)).toEqual(StatisticsMembers)
    expect(body).toEqual({
      coreProcessingTime: 17,
      version: 3,
      epoch: -1,
      effectiveName: "orders",
      writesInProgress: 2,
      readsInProgress: 1,
      partitionsCached: 3,
      status: "Running",
      stateReason: "",
      name: "orders",
      mode: "Continuous",
      position: "C:1200/P:1100",
      progress: 100,
      lastCheckpoint: "C:800/P:700",
      eventsProcessedAfterRestart: 42,
      statusUrl: "http://localhost:2113/projection/orders",
      stateUrl: "http://localhost:2113/projection/orders/state",
      resultUrl: "http://localhost:2113/projection/orders/result",
      queryUrl: "http://localhost:2113/projection/orders/query%3Fconfig=yes",
      resultStreamUrl: null,
      enableCommandUrl: "http://localhost:2113/projection/orders/command/enable",
      disableCommandUrl: "http://localhost:2113/projection/orders/command/disable",
      checkpointStatus: "",
      bufferedEvents: 4,
      writePendingEventsBeforeCheckpoint: 5,
      writePendingEventsAfterCheckpoint: 6,
      lagEvents: 7,
      lagMilliseconds: 250,
      stateBytes: 33
    })
  })

  it("writes progress as a .NET float and nulls as null", async () => {
    const node = makeProjectionsNode()
    const body = text(await node.request("GET", "/projection/orders", { auth: UserAuth }))
    expect(body).toContain('\n  "progress": 100.0,\n')
    expect(body).toContain('\n  "resultStreamUrl": null,\n')
  })

  it.each([
    [-1, "-1.0"],
    [12.5, "12.5"],
    [100 / 3, "33.333332"],
    [Number.NaN, "-2.0"],
    [Number.POSITIVE_INFINITY, "-2.0"],
    [1e300, "-2.0"]
  ])("progress %s is written %s", async (progress, written) => {
    const node = makeProjectionsNode()
    node.fake.answers.statistics = { _tag: "Ok", value: sampleStatistics("p", {}, { progress }) }
    expect(text(await node.request("GET", "/projection/p", { auth: UserAuth }))).toContain(
      `\n  "progress": ${written},\n`
    )
  })

  it("a figure that is no number is written 0, so the document stays JSON", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.statistics = { _tag: "Ok", value: sampleStatistics("p", {}, { lagMilliseconds: Number.NaN }) }
    expect(json(await node.request("GET", "/projection/p", { auth: UserAuth })).lagMilliseconds).toBe(0)
  })

  it("positions are empty before the projection has one; other kinds of position as the reference's text", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.statistics = {
      _tag: "Ok",
      value: sampleStatistics(
        "p",
        {},
        {
          position: {
            kind: "streams",
            phase: 0,
            streams: [
              ["a", 1],
              ["b", 3]
            ]
          },
          lastCheckpoint: undefined
        }
      )
    }
    const body = json(await node.request("GET", "/projection/p", { auth: UserAuth }))
    expect(body.position).toBe("a: 1; b: 3; ")
    expect(body.lastCheckpoint).toBe("")
  })

  it("the result stream's URL is given only when the projection names one, the stream name escaped", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.statistics = {
      _tag: "Ok",
      value: sampleStatistics("p", { resultStreamName: "$projections-p-result" })
    }
    const body = json(await node.request("GET", "/projection/p", { auth: UserAuth }))
    expect(body.resultStreamUrl).toBe("http://localhost:2113/streams/%24projections-p-result")
  })

  it("URLs come from the request's base URL and keep `$`, escaping spaces", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.statistics = { _tag: "Ok", value: sampleStatistics("$by category") }
    const reply = await node.request("GET", "/projection/%24by%20category", {
      auth: UserAuth,
      headers: { Host: "db.example:8080", "X-Forwarded-Proto": "https" }
    })
    expect(node.fake.onlyCall().args).toEqual(["$by category"])
    const body = json(reply)
    expect(body.statusUrl).toBe("https://db.example:8080/projection/$by%20category")
    expect(body.queryUrl).toBe("https://db.example:8080/projection/$by%20category/query%3Fconfig=yes")
  })

  it("GET /projection/{name}/statistics is the object in a list", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", "/projection/orders/statistics", { auth: UserAuth })
    expect(reply.status).toBe(200)
    expect(node.fake.onlyCall()).toEqual({ op: "statistics", args: ["orders"] })
    const body = json(reply)
    expect(Object.keys(body)).toEqual(["projections"])
    expect(Object.keys(body.projections[0])).toEqual(StatisticsMembers)
  })

  it("an unknown projection is 404 `Not Found`, as plain text", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.statistics = { _tag: "NotFound" }
    for (const path of ["/projection/nope", "/projection/nope/statistics"]) {
      const reply = await node.request("GET", path, { auth: UserAuth })
      expect(reply.status).toBe(404)
      expect(header(reply, "Content-Type")).toBe("text/plain; charset=utf-8")
      expect(text(reply)).toBe("Not Found")
    }
  })
})

describe("GET /projections", () => {
  it("redirects to the admin UI's projections page (302) without calling the service", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", "/projections", { auth: UserAuth, headers: { Accept: "text/html" } })
    expect(reply.status).toBe(302)
    expect(header(reply, "Location")).toBe("http://localhost:2113/web/projections.htm")
    expect(node.fake.calls).toEqual([])
  })

  it("takes the host as the request named it, whatever it is", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", "/projections?x=1", { auth: UserAuth, headers: { Host: "[zz" } })
    expect(reply.status).toBe(302)
    expect(header(reply, "Location")).toBe("http://[zz/web/projections.htm")
  })
})

describe("POST /projections/restart", () => {
  it("operators restart the subsystem: 200 with the JSON string `Restarting`", async () => {
    for (const auth of [AdminAuth, OpsAuth]) {
      const node = makeProjectionsNode()
      const reply = await node.request("POST", "/projections/restart", { auth })
      expect(reply.status).toBe(200)
      expect(text(reply)).toBe('"Restarting"')
      expect(node.fake.onlyCall().op).toBe("restart")
      expect(node.fake.onlyCall().args).toEqual([
        {
          runAs: { name: auth === AdminAuth ? "admin" : "ops", roles: [auth === AdminAuth ? "$admins" : "$ops"] },
          operator: true
        }
      ])
    }
  })

  it("other users get a bare 401 and nothing restarts", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("POST", "/projections/restart", { auth: UserAuth })
    expect(reply.status).toBe(401)
    expect(node.fake.calls).toEqual([])
  })

  it("a restart that is not possible now is 400 with the reason", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.restart = { _tag: "BadRequest", reason: "Projection subsystem is not running" }
    const reply = await node.request("POST", "/projections/restart", { auth: AdminAuth })
    expect(reply.status).toBe(400)
    expect(text(reply)).toBe("Projection subsystem is not running")
  })
})
