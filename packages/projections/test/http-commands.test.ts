/**
 * Commands on one projection and its deletion: the command reaches the service with who asked, the name is
 * answered, `enableRunAs` is not looked at, the delete flags follow the yes/no rules, and every outcome of
 * the service is the reference's status with a plain-text body.
 */
import { describe, expect, it } from "vitest"
import type { ProjectionsOutcome } from "../src/service/Projections.js"
import { AdminAuth, OpsAuth, UserAuth, header, makeProjectionsNode, text } from "./httpSupport.js"

describe("POST /projection/{name}/command/{command}", () => {
  it.each(["enable", "disable", "reset", "abort"] as const)("%s: answers the name once done", async (command) => {
    const node = makeProjectionsNode()
    const reply = await node.request("POST", `/projection/orders/command/${command}`, { auth: UserAuth })
    expect(reply.status).toBe(200)
    expect(header(reply, "Content-Type")).toBe("application/json; charset=utf-8")
    expect(text(reply)).toBe('{\n  "name": "orders"\n}')
    expect(node.fake.onlyCall()).toEqual({
      op: "command",
      args: ["orders", command, { runAs: { name: "user", roles: [] }, operator: false }]
    })
  })

  it("enableRunAs is accepted and not looked at", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("POST", "/projection/orders/command/enable?enableRunAs=true", { auth: OpsAuth })
    expect(reply.status).toBe(200)
    expect(node.fake.onlyCall().args).toEqual([
      "orders",
      "enable",
      { runAs: { name: "ops", roles: ["$ops"] }, operator: true }
    ])
  })

  it("takes a body of any type (a client may post an empty form)", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("POST", "/projection/orders/command/disable", {
      auth: UserAuth,
      body: "",
      headers: { "Content-Type": "application/x-www-form-urlencoded" }
    })
    expect(reply.status).toBe(200)
  })

  it("an unknown command is no route", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("POST", "/projection/orders/command/explode", { auth: UserAuth })
    // 404 once the node stops answering unbuilt `/projection` paths with 501 (packages/http's notBuilt.ts).
    expect([404, 501]).toContain(reply.status)
    expect(node.fake.calls).toEqual([])
  })

  it("anonymous callers get 401 and nothing happens", async () => {
    const node = makeProjectionsNode()
    expect((await node.request("POST", "/projection/orders/command/disable")).status).toBe(401)
    expect(node.fake.calls).toEqual([])
  })
})

describe("the service's outcomes", () => {
  it.each([
    [{ _tag: "NotFound" }, 404, "Not Found", "Not Found"],
    [{ _tag: "NotAuthorized" }, 401, "Not Authorized", "Not authorized"],
    [{ _tag: "Conflict", reason: "Duplicate projection names : p" }, 409, "Conflict", "Duplicate projection names : p"],
    [{ _tag: "BadRequest", reason: "bad" }, 400, "Bad Request", "bad"],
    [
      { _tag: "OperationFailed", reason: "Aborted by subsequent operation" },
      500,
      "Failed",
      "Aborted by subsequent operation"
    ],
    [{ _tag: "NotReady", reason: "Not the leader" }, 503, "Service Unavailable", "Not the leader"]
  ] as const)("%j answers %s (%s) with a plain-text body", async (outcome, status, reason, body) => {
    const node = makeProjectionsNode()
    node.fake.answers.command = outcome as ProjectionsOutcome<string>
    const reply = await node.request("POST", "/projection/orders/command/reset", { auth: AdminAuth })
    expect(reply.status).toBe(status)
    expect(reply.reason).toBe(reason)
    expect(header(reply, "Content-Type")).toBe("text/plain; charset=utf-8")
    expect(text(reply)).toBe(body)
  })
})

describe("DELETE /projection/{name}", () => {
  it("operators delete; every flag defaults to no", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("DELETE", "/projection/orders", { auth: OpsAuth })
    expect(reply.status).toBe(200)
    expect(text(reply)).toBe('{\n  "name": "orders"\n}')
    expect(node.fake.onlyCall()).toEqual({
      op: "delete",
      args: [
        "orders",
        { deleteStateStream: false, deleteCheckpointStream: false, deleteEmittedStreams: false },
        { runAs: { name: "ops", roles: ["$ops"] }, operator: true }
      ]
    })
  })

  it("reads each flag by the yes/no rules", async () => {
    const node = makeProjectionsNode()
    await node.request(
      "DELETE",
      "/projection/orders?deleteStateStream=yes&deleteCheckpointStream=TRUE&deleteEmittedStreams=1",
      { auth: AdminAuth }
    )
    await node.request(
      "DELETE",
      "/projection/orders?deleteStateStream=no&deleteCheckpointStream=maybe&deleteEmittedStreams=",
      { auth: AdminAuth }
    )
    expect(node.fake.calls.map((call) => call.args[1])).toEqual([
      { deleteStateStream: true, deleteCheckpointStream: true, deleteEmittedStreams: true },
      { deleteStateStream: false, deleteCheckpointStream: false, deleteEmittedStreams: false }
    ])
  })

  it("is for operators only", async () => {
    const node = makeProjectionsNode()
    expect((await node.request("DELETE", "/projection/orders", { auth: UserAuth })).status).toBe(401)
    expect(node.fake.calls).toEqual([])
  })

  it("a projection still running is the service's 500", async () => {
    const node = makeProjectionsNode()
    node.fake.answers.delete = {
      _tag: "OperationFailed",
      reason: "Cannot delete a projection that hasn't been stopped or faulted."
    }
    const reply = await node.request("DELETE", "/projection/orders", { auth: AdminAuth })
    expect(reply.status).toBe(500)
    expect(text(reply)).toBe("Cannot delete a projection that hasn't been stopped or faulted.")
  })
})
