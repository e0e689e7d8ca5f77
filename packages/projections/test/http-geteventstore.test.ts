/**
 * geteventstore-promise 4.0.1's projection functions, called as its README and type definitions show, against
 * the projection routes served on a real localhost socket (an ephemeral port) over the recording test double
 * of the service: each function's exact requests reach the service as meant, and its answers parse.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { HTTPClient } from "geteventstore-promise"
import { sampleStatistics } from "./httpFakeProjections.js"
import { makeProjectionsNode, type ProjectionsNode } from "./httpSupport.js"

let node: ProjectionsNode
let server: Server
let client: HTTPClient

const Admin = { runAs: { name: "admin", roles: ["$admins"] }, operator: true }

/** A minimal server: the body read whole, the pipeline's reply written as it is. */
const serve = (): Promise<number> =>
  new Promise((resolve) => {
    server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const body = chunks.length === 0 ? undefined : Buffer.concat(chunks)
        void node
          .handle({ method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body })
          .then((reply) => {
            res.writeHead(reply.status, reply.reason, reply.headers as Record<string, string | Array<string>>)
            res.end(reply.body ?? "")
          })
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  })

beforeAll(async () => {
  node = makeProjectionsNode()
  const port = await serve()
  client = new HTTPClient({ hostname: "127.0.0.1", port, credentials: { username: "admin", password: "changeit" } })
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

beforeEach(() => {
  node.fake.calls.length = 0
  for (const key of Object.keys(node.fake.answers)) delete (node.fake.answers as Record<string, unknown>)[key]
})

describe("geteventstore-promise projections against the projection routes", () => {
  it("getAllProjectionsInfo lists the non-transient projections", async () => {
    const info = (await client.projections.getAllProjectionsInfo()) as { projections: Array<{ name: string }> }
    expect(info.projections.map((p) => p.name)).toEqual(["orders"])
    expect(node.fake.calls).toEqual([{ op: "list", args: ["AllNonTransient"] }])
  })

  it("getInfo finds one projection in the list, with its config when asked", async () => {
    const info = (await client.projections.getInfo("orders", true)) as {
      name: string
      status: string
      config: { emitEnabled: boolean; trackEmittedStreams: boolean; checkpointHandledThreshold: number }
    }
    expect(info.name).toBe("orders")
    expect(info.status).toBe("Running")
    expect(info.config).toMatchObject({
      emitEnabled: true,
      trackEmittedStreams: false,
      checkpointHandledThreshold: 4000
    })
    expect(node.fake.calls.map((call) => call.op)).toEqual(["list", "config"])
  })

  it("assert creates a projection that is not listed yet (continuous, enabled, checkpoints on)", async () => {
    const source = "fromAll().when({$init: function () { return {count: 0} }})"
    const created = (await client.projections.assert("totals", source)) as unknown as { name: string }
    expect(created).toEqual({ name: "totals" })
    expect(node.fake.calls.map((call) => call.op)).toEqual(["list", "create"])
    expect(node.fake.calls[1]!.args).toEqual([
      {
        mode: "Continuous",
        name: "totals",
        query: source,
        handlerType: "JS",
        enabled: true,
        emitEnabled: false,
        checkpointsEnabled: true,
        trackEmittedStreams: false
      },
      Admin
    ])
  })

  it("assert creates a one-time projection with its flags", async () => {
    await client.projections.assert("once", "fromAll()", "onetime", true, true, true, true)
    expect(node.fake.calls[1]!.args[0]).toMatchObject({
      mode: "OneTime",
      checkpointsEnabled: true,
      emitEnabled: true,
      trackEmittedStreams: true
    })
  })

  it("assert updates the query of a projection that is listed", async () => {
    const updated = (await client.projections.assert(
      "orders",
      "fromStream('x')",
      "continuous",
      true,
      true,
      true
    )) as unknown
    expect(updated).toEqual({ name: "orders" })
    expect(node.fake.calls.map((call) => call.op)).toEqual(["list", "updateQuery"])
    expect(node.fake.calls[1]!.args).toEqual(["orders", "fromStream('x')", true, Admin])
  })

  it("start, stop and reset are the enable, disable and reset commands", async () => {
    expect(await client.projections.start("orders")).toEqual({ name: "orders" })
    expect(await client.projections.stop("orders")).toEqual({ name: "orders" })
    expect(await client.projections.reset("orders")).toEqual({ name: "orders" })
    expect(node.fake.calls).toEqual([
      { op: "command", args: ["orders", "enable", Admin] },
      { op: "command", args: ["orders", "disable", Admin] },
      { op: "command", args: ["orders", "reset", Admin] }
    ])
  })

  it("getState and getResult read the root or a partition, parsed as JSON", async () => {
    expect(await client.projections.getState("orders")).toEqual({ count: 2 })
    expect(await client.projections.getResult("orders", { partition: "orders-1" })).toEqual({ count: 2 })
    expect(node.fake.calls).toEqual([
      { op: "state", args: ["orders", ""] },
      { op: "result", args: ["orders", "orders-1"] }
    ])
  })

  it("remove deletes with the checkpoint and state stream flags it sends as yes/no", async () => {
    expect(await client.projections.remove("orders", true, false)).toEqual({ name: "orders" })
    expect(node.fake.calls).toEqual([
      {
        op: "delete",
        args: ["orders", { deleteStateStream: false, deleteCheckpointStream: true, deleteEmittedStreams: false }, Admin]
      }
    ])
  })

  it("enableAll and disableAll command every listed projection", async () => {
    node.fake.answers.list = { _tag: "Ok", value: [sampleStatistics("a"), sampleStatistics("b")] }
    await client.projections.enableAll()
    await client.projections.disableAll()
    // Each sends its commands at once: they may arrive in any order.
    const commands = node.fake.calls
      .filter((call) => call.op === "command")
      .map((call) => `${String(call.args[1])} ${String(call.args[0])}`)
    expect(commands.slice(0, 2).sort()).toEqual(["enable a", "enable b"])
    expect(commands.slice(2).sort()).toEqual(["disable a", "disable b"])
  })

  it("an unknown projection fails with the 404", async () => {
    node.fake.answers.state = { _tag: "NotFound" }
    const failure = await client.projections.getState("nope").then(
      () => undefined,
      (error: { response?: { status: number; data: unknown } }) => error.response
    )
    expect(failure?.status).toBe(404)
    expect(failure?.data).toBe("Not Found")
  })
})
