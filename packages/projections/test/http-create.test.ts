/**
 * `POST /projections/{transient|onetime|continuous}`: the source is the body whatever its content type, the
 * query parameters' yes/no rules and defaults by mode, and the 201 with `Location` and the name.
 */
import { describe, expect, it } from "vitest"
import type { CreateProjection, Requester } from "../src/service/Projections.js"
import { AdminAuth, UserAuth, header, json, makeProjectionsNode, text } from "./httpSupport.js"

const Source = "fromAll().when({$any: function (s, e) { return s }})"

const created = async (
  url: string,
  options: { body?: string; headers?: Record<string, string>; auth?: string } = {}
) => {
  const node = makeProjectionsNode()
  const reply = await node.request("POST", url, { auth: AdminAuth, body: Source, ...options })
  const call = node.fake.onlyCall()
  expect(call.op).toBe("create")
  return { reply, request: call.args[0] as CreateProjection, by: call.args[1] as Requester }
}

describe("creating a projection", () => {
  it("answers 201 with Location and the name, the body being the source", async () => {
    const { reply, request } = await created("/projections/continuous?name=orders")
    expect(reply.status).toBe(201)
    expect(reply.reason).toBe("Created")
    expect(header(reply, "Location")).toBe("http://localhost:2113/projection/orders")
    expect(header(reply, "Content-Type")).toBe("application/json; charset=utf-8")
    expect(text(reply)).toBe('{\n  "name": "orders"\n}')
    expect(request.query).toBe(Source)
  })

  it("defaults of a continuous projection: JS, enabled, checkpoints on, no emit", async () => {
    const { request } = await created("/projections/continuous?name=orders")
    expect(request).toEqual({
      mode: "Continuous",
      name: "orders",
      query: Source,
      handlerType: "JS",
      enabled: true,
      emitEnabled: false,
      checkpointsEnabled: true,
      trackEmittedStreams: false
    })
  })

  it("a continuous projection always checkpoints, whatever `checkpoints` says", async () => {
    const { request } = await created("/projections/continuous?name=orders&checkpoints=no")
    expect(request.checkpointsEnabled).toBe(true)
  })

  it("a one-time projection reads every flag; checkpoints default to off", async () => {
    expect((await created("/projections/onetime?name=q")).request).toMatchObject({
      mode: "OneTime",
      checkpointsEnabled: false,
      emitEnabled: false,
      enabled: true
    })
    expect(
      (await created("/projections/onetime?name=q&checkpoints=yes&emit=TRUE&trackemittedstreams=1&enabled=no")).request
    ).toMatchObject({ checkpointsEnabled: true, emitEnabled: true, trackEmittedStreams: true, enabled: false })
  })

  it("a transient projection never emits, checkpoints or tracks, whatever it is asked", async () => {
    const { request } = await created("/projections/transient?name=t&emit=yes&checkpoints=yes&trackemittedstreams=yes")
    expect(request).toMatchObject({
      mode: "Transient",
      emitEnabled: false,
      checkpointsEnabled: false,
      trackEmittedStreams: false
    })
  })

  it("tracking emitted streams needs emit", async () => {
    const { request } = await created("/projections/continuous?name=p&trackemittedstreams=yes")
    expect(request.trackEmittedStreams).toBe(false)
    expect(
      (await created("/projections/continuous?name=p&emit=yes&trackemittedstreams=yes")).request.trackEmittedStreams
    ).toBe(true)
  })

  it.each([
    ["yes", true],
    ["YES", true],
    ["true", true],
    ["True", true],
    ["1", true],
    ["no", false],
    ["false", false],
    ["0", false],
    ["maybe", false],
    ["2", false]
  ])("enabled=%s means %s; any other non-empty value is false", async (value, enabled) => {
    expect((await created(`/projections/continuous?name=p&enabled=${value}`)).request.enabled).toBe(enabled)
  })

  it("an empty flag is its default", async () => {
    const { request } = await created("/projections/continuous?name=p&enabled=&emit=")
    expect(request.enabled).toBe(true)
    expect(request.emitEnabled).toBe(false)
  })

  it("query parameter names are matched ignoring case", async () => {
    const { request } = await created("/projections/onetime?Name=q&EMIT=yes&trackEmittedStreams=yes&Checkpoints=yes")
    expect(request).toMatchObject({ name: "q", emitEnabled: true, trackEmittedStreams: true, checkpointsEnabled: true })
  })

  it("the handler type is passed as given (the service refuses what is not JS)", async () => {
    expect((await created("/projections/continuous?name=p&type=js")).request.handlerType).toBe("js")
    expect((await created("/projections/continuous?name=p&type=native:Foo")).request.handlerType).toBe("native:Foo")
  })

  it("without a name the service is asked with an empty one, and the name it gives is answered", async () => {
    const { reply, request } = await created("/projections/onetime")
    expect(request.name).toBe("")
    expect(header(reply, "Location")).toBe("http://localhost:2113/projection/generated-name")
    expect(json(reply)).toEqual({ name: "generated-name" })
  })

  it("takes any content type, or none", async () => {
    const contentTypes: ReadonlyArray<Record<string, string>> = [
      { "Content-Type": "application/javascript" },
      { "Content-Type": "text/plain" },
      {}
    ]
    for (const headers of contentTypes) {
      const { reply, request } = await created("/projections/continuous?name=p", { headers })
      expect(reply.status).toBe(201)
      expect(request.query).toBe(Source)
    }
  })

  it("the body is read as UTF-8", async () => {
    const { request } = await created("/projections/continuous?name=p", { body: "// é ✓\nfromAll()" })
    expect(request.query).toBe("// é ✓\nfromAll()")
  })

  it("Location escapes the name as a path: `$` kept, a space as %20", async () => {
    const { reply } = await created("/projections/continuous?name=%24my%20proj")
    expect(header(reply, "Location")).toBe("http://localhost:2113/projection/$my%20proj")
  })

  it("who asks: the caller's name and groups, and whether they are an operator", async () => {
    expect((await created("/projections/transient?name=t", { auth: UserAuth })).by).toEqual({
      runAs: { name: "user", roles: [] },
      operator: false
    })
    expect((await created("/projections/transient?name=t", { auth: AdminAuth })).by).toEqual({
      runAs: { name: "admin", roles: ["$admins"] },
      operator: true
    })
  })

  it("anonymous callers get 401 and nothing is created", async () => {
    const node = makeProjectionsNode()
    const reply = await node.request("POST", "/projections/transient?name=t", { body: Source })
    expect(reply.status).toBe(401)
    expect(node.fake.calls).toEqual([])
  })

  it.each([
    [{ _tag: "Conflict", reason: "Duplicate projection names : p" }, 409, "Duplicate projection names : p"],
    [{ _tag: "OperationFailed", reason: "Projection name is required" }, 500, "Projection name is required"],
    [{ _tag: "NotAuthorized" }, 401, "Not authorized"]
  ] as const)("the service's %j is %s with its text", async (outcome, status, body) => {
    const node = makeProjectionsNode()
    node.fake.answers.create = outcome
    const reply = await node.request("POST", "/projections/continuous?name=p", { auth: UserAuth, body: Source })
    expect(reply.status).toBe(status)
    expect(header(reply, "Content-Type")).toBe("text/plain; charset=utf-8")
    expect(text(reply)).toBe(body)
    expect(header(reply, "Location")).toBeUndefined()
  })
})
