/**
 * `GET /projection/{name}/state` and `/result`: the text as the service gives it, as application/json, with
 * the position headers (compact JSON, no version stamp) only when there is a position.
 */
import { describe, expect, it } from "vitest"
import { AdminAuth, UserAuth, header, makeProjectionsNode, text } from "./httpSupport.js"

describe.each(["state", "result"] as const)("GET /projection/{name}/%s", (view) => {
  it("answers the text with Kurrent-Position and ES-Position", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("GET", `/projection/orders/${view}`, { auth: UserAuth })
    expect(reply.status).toBe(200)
    expect(header(reply, "Content-Type")).toBe("application/json; charset=utf-8")
    expect(text(reply)).toBe('{"count":2}')
    expect(header(reply, "Kurrent-Position")).toBe('{"$s":{"orders-1":4}}')
    expect(header(reply, "ES-Position")).toBe('{"$s":{"orders-1":4}}')
    expect(node.fake.onlyCall()).toEqual({ op: view, args: ["orders", ""] })
  })

  it("passes the partition", async () => {
    const node = makeProjectionsNode()
    await node.request("GET", `/projection/orders/${view}?partition=account-7`, { auth: UserAuth })
    expect(node.fake.onlyCall().args).toEqual(["orders", "account-7"])
  })

  it("an empty text without a position: no position headers", async () => {
    const node = makeProjectionsNode()
    node.fake.answers[view] = { _tag: "Ok", value: { text: "", position: undefined } }
    const reply = await node.request("GET", `/projection/orders/${view}`, { auth: UserAuth })
    expect(reply.status).toBe(200)
    expect(text(reply)).toBe("")
    expect(header(reply, "Kurrent-Position")).toBeUndefined()
    expect(header(reply, "ES-Position")).toBeUndefined()
  })

  it("positions of $all and of a query's phase are written as the reference writes them", async () => {
    const node = makeProjectionsNode()
    node.fake.answers[view] = {
      _tag: "Ok",
      value: { text: "{}", position: { kind: "position", phase: 0, commit: 10, prepare: 9 } }
    }
    expect(header(await node.request("GET", `/projection/orders/${view}`, { auth: UserAuth }), "ES-Position")).toBe(
      '{"$c":10,"$p":9}'
    )
    node.fake.answers[view] = {
      _tag: "Ok",
      value: { text: "{}", position: { kind: "phase", phase: 1, completed: true } }
    }
    expect(header(await node.request("GET", `/projection/orders/${view}`, { auth: UserAuth }), "ES-Position")).toBe(
      '{"$ph":1,"$cp":true}'
    )
  })

  it("404 for an unknown projection, 500 with the text when the read failed", async () => {
    const node = makeProjectionsNode()
    node.fake.answers[view] = { _tag: "NotFound" }
    expect((await node.request("GET", `/projection/nope/${view}`, { auth: AdminAuth })).status).toBe(404)
    node.fake.answers[view] = { _tag: "OperationFailed", reason: "checkpoint unreadable" }
    const failed = await node.request("GET", `/projection/nope/${view}`, { auth: AdminAuth })
    expect(failed.status).toBe(500)
    expect(text(failed)).toBe("checkpoint unreadable")
  })

  it("needs an authenticated caller", async () => {
    const node = makeProjectionsNode()
    expect((await node.request("GET", `/projection/orders/${view}`)).status).toBe(401)
  })
})
