/**
 * A projection's source and config over HTTP: the script as `application/javascript`, the query document of
 * `?config=yes` (defaults left out, the reference's member order), a new script with `PUT …/query`, and the
 * config document and its update (operators only; defaults left out; a body that does not read is a 400).
 */
import { describe, expect, it } from "vitest"
import type { ProjectionConfig, ProjectionsOutcome } from "../src/service/Projections.js"
import { sampleConfig, sampleQuery } from "./httpFakeProjections.js"
import { AdminAuth, OpsAuth, UserAuth, header, json, makeProjectionsNode, text } from "./httpSupport.js"

describe("GET /projection/{name}/query", () => {
  it("answers the script exactly, as application/javascript, whatever the request accepts", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", "/projection/orders/query", {
      auth: UserAuth,
      headers: { Accept: "text/xml" }
    })
    expect(reply.status).toBe(200)
    expect(header(reply, "Content-Type")).toBe("application/javascript; charset=utf-8")
    expect(text(reply)).toBe(sampleQuery().query)
    expect(node.fake.onlyCall()).toEqual({ op: "query", args: ["orders"] })
  })

  it("?config=yes is the query document, default values left out, in the reference's order", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", "/projection/orders/query?config=yes", { auth: UserAuth })
    expect(reply.status).toBe(200)
    expect(header(reply, "Content-Type")).toBe("application/json; charset=utf-8")
    const body = json(reply)
    expect(Object.keys(body)).toEqual([
      "name",
      "query",
      "emitEnabled",
      "trackEmittedStreams",
      "checkpointsEnabled",
      "type",
      "definition",
      "outputConfig"
    ])
    expect(body).toEqual({
      name: "orders",
      query: sampleQuery().query,
      emitEnabled: true,
      trackEmittedStreams: false,
      checkpointsEnabled: true,
      type: "Continuous",
      definition: {
        allEvents: true,
        allStreams: true,
        categories: [],
        events: [],
        streams: [],
        options: { definesFold: true }
      },
      outputConfig: { resultStreamName: "$projections-orders-result" }
    })
  })

  it("leaves out emitEnabled when false and the definition when there is none", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.query = {
      _tag: "Ok",
      value: sampleQuery({ emitEnabled: false, definition: undefined, resultStreamName: "" })
    }
    const body = json(await node.request("GET", "/projection/orders/query?config=true", { auth: UserAuth }))
    expect(Object.keys(body)).toEqual([
      "name",
      "query",
      "trackEmittedStreams",
      "checkpointsEnabled",
      "type",
      "outputConfig"
    ])
    expect(body.outputConfig).toEqual({ resultStreamName: "" })
  })

  it("writes every option that is not at its default, in the reference's member order", async () => {
    const options = {
      resultStreamName: "totals",
      partitionResultStreamNamePattern: "totals-{0}",
      reorderEvents: true,
      processingLag: 500,
      isBiState: true,
      definesStateTransform: true,
      producesResults: true,
      definesFold: true,
      handlesDeletedNotifications: true,
      includeLinks: true
    }
    const lists = { categories: ["account"], events: ["Deposited", "Withdrawn"], streams: [] }
    const node = makeProjectionsNode()
    node.fake.answers.query = {
      _tag: "Ok",
      value: sampleQuery({
        definition: {
          allEvents: false,
          allStreams: false,
          byStream: true,
          byCustomPartitions: true,
          ...lists,
          // Given in the opposite order: the document has its own.
          options: Object.fromEntries(Object.entries(options).reverse())
        }
      })
    }
    const body = json(await node.request("GET", "/projection/orders/query?config=1", { auth: UserAuth }))
    expect(body.definition).toEqual({ byStream: true, byCustomPartitions: true, ...lists, options })
    expect(Object.keys(body.definition.options)).toEqual(Object.keys(options))
  })

  it("?config=no or anything else is the script", async () => {
    const node = makeProjectionsNode()
    for (const config of ["no", "maybe", ""]) {
      const reply = await node.request("GET", `/projection/orders/query?config=${config}`, { auth: UserAuth })
      expect(header(reply, "Content-Type")).toBe("application/javascript; charset=utf-8")
    }
  })

  it("404 for an unknown projection", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.query = { _tag: "NotFound" }
    const reply = await node.request("GET", "/projection/nope/query", { auth: UserAuth })
    expect(reply.status).toBe(404)
    expect(text(reply)).toBe("Not Found")
  })
})

describe("PUT /projection/{name}/query", () => {
  it("gives the body as the new script and answers the name", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("PUT", "/projection/orders/query?type=JS", {
      auth: AdminAuth,
      body: "fromStream('x')",
      headers: { "Content-Type": "application/x-www-form-urlencoded" }
    })
    expect(reply.status).toBe(200)
    expect(text(reply)).toBe('{\n  "name": "orders"\n}')
    expect(node.fake.onlyCall()).toEqual({
      op: "updateQuery",
      args: ["orders", "fromStream('x')", undefined, { runAs: { name: "admin", roles: ["$admins"] }, operator: true }]
    })
  })

  it.each([
    ["yes", true],
    ["1", true],
    ["no", false],
    ["FALSE", false],
    ["maybe", undefined]
  ])("emit=%s sets emitting to %s", async (emit, expected) => {
    const node = makeProjectionsNode()
    await node.request("PUT", `/projection/orders/query?emit=${emit}`, { auth: AdminAuth, body: "x" })
    expect(node.fake.onlyCall().args[2]).toBe(expected)
  })

  it("the service's refusal is its status", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.updateQuery = { _tag: "NotAuthorized" }
    const reply = await node.request("PUT", "/projection/orders/query", { auth: UserAuth, body: "x" })
    expect(reply.status).toBe(401)
    expect(text(reply)).toBe("Not authorized")
  })
})

describe("GET /projection/{name}/config", () => {
  it("writes the members that are not at their default, in the reference's order", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", "/projection/orders/config", { auth: OpsAuth })
    expect(reply.status).toBe(200)
    expect(text(reply)).toBe(
      [
        "{",
        '  "emitEnabled": true,',
        '  "checkpointHandledThreshold": 4000,',
        '  "checkpointUnhandledBytesThreshold": 10000000,',
        '  "pendingEventsThreshold": 5000,',
        '  "maxWriteBatchLength": 500,',
        '  "label": "Projections"',
        "}"
      ].join("\n")
    )
    expect(node.fake.onlyCall()).toEqual({
      op: "config",
      args: ["orders", { runAs: { name: "ops", roles: ["$ops"] }, operator: true }]
    })
  })

  it("writes every member when none is at its default", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.config = {
      _tag: "Ok",
      value: sampleConfig({
        trackEmittedStreams: true,
        checkpointAfterMs: 10,
        maxAllowedWritesInFlight: 2,
        projectionExecutionTimeout: 300
      })
    }
    const body = json(await node.request("GET", "/projection/orders/config", { auth: AdminAuth }))
    expect(Object.keys(body)).toEqual([
      "emitEnabled",
      "trackEmittedStreams",
      "checkpointAfterMs",
      "checkpointHandledThreshold",
      "checkpointUnhandledBytesThreshold",
      "pendingEventsThreshold",
      "maxWriteBatchLength",
      "maxAllowedWritesInFlight",
      "projectionExecutionTimeout",
      "label"
    ])
  })

  it("is for operators only", async () => {
    const node = makeProjectionsNode()
    expect((await node.request("GET", "/projection/orders/config", { auth: UserAuth })).status).toBe(401)
    expect(node.fake.calls).toEqual([])
  })
})

describe("PUT /projection/{name}/config", () => {
  const put = async (body: string, auth = AdminAuth, answer?: ProjectionsOutcome<string>) => {
    const node = makeProjectionsNode()
    if (answer !== undefined) node.fake.answers.updateConfig = answer
    const reply = await node.request("PUT", "/projection/orders/config", {
      auth,
      body,
      headers: { "Content-Type": "application/json" }
    })
    return { node, reply }
  }

  it("replaces every member: what is missing is 0 or false, the timeout null", async () => {
    const { node, reply } = await put('{"emitEnabled": true, "checkpointHandledThreshold": 100}')
    expect(reply.status).toBe(200)
    expect(json(reply)).toEqual({ name: "orders" })
    const call = node.fake.onlyCall()
    expect(call.op).toBe("updateConfig")
    expect(call.args[1]).toEqual({
      emitEnabled: true,
      trackEmittedStreams: false,
      checkpointAfterMs: 0,
      checkpointHandledThreshold: 100,
      checkpointUnhandledBytesThreshold: 0,
      pendingEventsThreshold: 0,
      maxWriteBatchLength: 0,
      maxAllowedWritesInFlight: 0,
      projectionExecutionTimeout: null
    } satisfies ProjectionConfig)
  })

  it("reads members ignoring case, nulls as missing, numbers and booleans given as strings", async () => {
    const { node } = await put(
      '{"EMITENABLED": "true", "checkpointAfterMs": "250", "pendingEventsThreshold": null, "projectionExecutionTimeout": 400}'
    )
    expect(node.fake.onlyCall().args[1]).toMatchObject({
      emitEnabled: true,
      checkpointAfterMs: 250,
      pendingEventsThreshold: 0,
      projectionExecutionTimeout: 400
    })
  })

  it("passes a timeout that is not positive on to the service, which refuses it", async () => {
    const { node, reply } = await put('{"projectionExecutionTimeout": 0}', AdminAuth, {
      _tag: "BadRequest",
      reason: "projectionExecutionTimeout should be positive. Found : 0"
    })
    expect(reply.status).toBe(400)
    expect(text(reply)).toBe("projectionExecutionTimeout should be positive. Found : 0")
    expect((node.fake.onlyCall().args[1] as ProjectionConfig).projectionExecutionTimeout).toBe(0)
  })

  it.each([
    "",
    "not json",
    "[]",
    "null",
    '{"checkpointAfterMs": "soon"}',
    '{"maxWriteBatchLength": 1.5}',
    '{"emitEnabled": "maybe"}',
    '{"pendingEventsThreshold": 3000000000}'
  ])("a body that does not read as a config (%j) is 400 `Failed to parse the projection config`", async (body) => {
    const { node, reply } = await put(body)
    expect(reply.status).toBe(400)
    expect(text(reply)).toBe("Failed to parse the projection config")
    expect(node.fake.calls).toEqual([])
  })

  it("needs a JSON body (415 otherwise) and an operator", async () => {
    const node = makeProjectionsNode()
    const plain = await node.request("PUT", "/projection/orders/config", {
      auth: AdminAuth,
      body: "{}",
      headers: { "Content-Type": "text/plain" }
    })
    expect(plain.status).toBe(415)
    expect((await put("{}", UserAuth)).reply.status).toBe(401)
  })

  it("a projection that is running is the service's 500 with its reason", async () => {
    const { reply } = await put("{}", AdminAuth, {
      _tag: "OperationFailed",
      reason: "Cannot update the config of a projection that hasn't been stopped or faulted."
    })
    expect(reply.status).toBe(500)
    expect(reply.reason).toBe("Failed")
    expect(text(reply)).toBe("Cannot update the config of a projection that hasn't been stopped or faulted.")
  })
})
