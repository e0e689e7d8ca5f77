import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { AdminAuth, text, withNode } from "./httpHarness.js"

const Json = { "Content-Type": "application/json" }

const put = (body: unknown, path = "/subscriptions/%24all/g") =>
  withNode((node) =>
    Effect.gen(function* () {
      const reply = yield* node.request("PUT", path, { auth: AdminAuth, headers: Json, body: JSON.stringify(body) })
      return { reply, spec: node.fake.groups.get(`${path.includes("%24all") ? "$all" : "s"}::g`)?.spec }
    })
  )

describe("groups on $all over HTTP", () => {
  it("creates a group on $all with a filter and a C:/P: start", async () => {
    const { reply, spec } = await put({
      startPosition: "c:120/p:120",
      filter: { context: "EventType", type: "Prefix", data: "order-,invoice-" }
    })
    expect(reply.status).toBe(201)
    expect(spec!.stream).toBe("$all")
    expect(spec!.filter).toEqual({ context: "eventtype", type: "prefix", data: "order-,invoice-", isAllStream: true })
    expect(spec!.settings.startPosition).toBe("C:120/P:120")
  })

  it("starts at the beginning by default, at the end with startFrom -1, and takes no filter as every event", async () => {
    expect((await put({})).spec!.settings).toMatchObject({ startPosition: "C:0/P:0", startFrom: 0 })
    expect((await put({})).spec!.filter).toBeUndefined()
    expect((await put({ startFrom: -1 })).spec!.settings).toMatchObject({ startPosition: "C:-1/P:-1", startFrom: -1 })
  })

  it("refuses a bad filter with the filtered read's reasons", async () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [
        { context: "nope", type: "prefix", data: "a" },
        "Invalid context please provide one of the following: StreamId, EventType."
      ],
      [
        { context: "streamid", type: "exact", data: "a" },
        "Invalid type please provide one of the following: Regex, Prefix."
      ],
      [
        { context: "streamid", type: "prefix" },
        "Please provide a comma delimited list of data with at least one item."
      ],
      [{ context: "streamid", type: "regex", data: "(" }, "Invalid regular expression: ("],
      ["streamid", "The filter must be an object with context, type and data."]
    ]
    for (const [filter, reason] of cases) {
      const { reply, spec } = await put({ filter })
      expect(reply.status).toBe(400)
      expect(text(reply)).toBe(reason)
      expect(spec).toBeUndefined()
    }
  })

  it("refuses a start that is not a $all position", async () => {
    const bad = await put({ startPosition: "12" })
    expect(bad.reply.status).toBe(400)
    expect(text(bad.reply)).toBe("Start Position '12' must be a $all position C:{commit}/P:{prepare}")
    const mixed = await put({ startPosition: "C:-1/P:5" })
    expect(mixed.reply.status).toBe(400)
    const from = await put({ startFrom: 5 })
    expect(from.reply.status).toBe(400)
    expect(text(from.reply)).toMatch(
      /^Start From \(5\) of a group on \$all must be 0 \(the beginning\) or -1 \(the end\)/
    )
  })

  it("refuses a filter on a group of a stream", async () => {
    const { reply, spec } = await put(
      { filter: { context: "streamid", type: "prefix", data: "a" } },
      "/subscriptions/s/g"
    )
    expect(reply.status).toBe(400)
    expect(text(reply)).toBe("A filter applies only to groups on $all")
    expect(spec).toBeUndefined()
  })
})
