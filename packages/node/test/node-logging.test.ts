// --log-http-requests and --log-failed-authentication-attempts on the composed node: one line per request
// (method, path, status, time) and one warning per rejected login (login and client address), never a
// password, an Authorization header, a query string or a body.
import { describe, expect, it } from "vitest"
import { MemoryDisk } from "@vellum/platform"
import { admin, basic, withNode } from "./nodeSupport.js"

interface LogLine {
  readonly level: string
  readonly message: string
  readonly annotations?: Record<string, unknown>
}

const parse = (lines: ReadonlyArray<string>): Array<LogLine> => lines.map((line) => JSON.parse(line) as LogLine)
const SECRET = "hunter2-secret"
const event = new TextEncoder().encode(
  JSON.stringify([{ eventId: "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4", eventType: "t", data: { secret: SECRET } }])
)

describe("--log-http-requests", () => {
  it("logs one line per request with method, path, status and duration, and no credentials, query or body", async () => {
    const logs: Array<string> = []
    await withNode(
      new MemoryDisk(),
      ["--log-http-requests"],
      async (call) => {
        await call({ url: "/ping", remote: "10.0.0.7" })
        await call({
          method: "POST",
          url: "/streams/orders?token=q-secret",
          remote: "10.0.0.8",
          body: event,
          headers: { host: "h", authorization: admin, "content-type": "application/vnd.eventstore.events+json" }
        })
        await call({
          url: "/streams/orders",
          headers: { host: "h", authorization: basic("admin", SECRET) },
          remote: "10.0.0.9"
        })
        await call({ url: "http://user:pw@h/info", remote: "10.0.0.7" })
      },
      logs
    )
    const lines = parse(logs).filter((line) => line.message.startsWith("HTTP "))
    expect(lines.map((line) => line.message.replace(/ \d+ ms$/, " _ ms"))).toEqual([
      "HTTP GET /ping 200 _ ms",
      "HTTP POST /streams/orders 201 _ ms",
      "HTTP GET /streams/orders 401 _ ms",
      "HTTP GET /info 200 _ ms"
    ])
    expect(lines[1]!.annotations).toMatchObject({
      method: "POST",
      path: "/streams/orders",
      status: 201,
      client: "10.0.0.8"
    })
    expect(typeof lines[1]!.annotations!["durationMs"]).toBe("number")
    const all = logs.join("\n")
    for (const secret of [SECRET, "changeit", "q-secret", "Basic ", "user:pw", admin]) expect(all).not.toContain(secret)
  })

  it("logs nothing per request without the option", async () => {
    const logs: Array<string> = []
    await withNode(
      new MemoryDisk(),
      [],
      async (call) => {
        await call({ url: "/ping" })
      },
      logs
    )
    expect(parse(logs).filter((line) => line.message.startsWith("HTTP "))).toEqual([])
  })
})

describe("--log-failed-authentication-attempts", () => {
  it("warns with the login and the client address, never the password", async () => {
    const logs: Array<string> = []
    await withNode(
      new MemoryDisk(),
      ["--log-failed-authentication-attempts"],
      async (call) => {
        expect(
          (
            await call({
              url: "/streams/s",
              headers: { host: "h", authorization: basic("mallory", SECRET) },
              remote: "192.0.2.1"
            })
          ).status
        ).toBe(401)
        expect(
          (
            await call({
              url: "/streams/s",
              headers: { host: "h", authorization: basic("admin", SECRET) },
              remote: "192.0.2.2"
            })
          ).status
        ).toBe(401)
        // Neither a good login nor a request without credentials is a failed attempt.
        await call({ url: "/stats", headers: { host: "h", authorization: admin }, remote: "192.0.2.3" })
        await call({ url: "/stats", remote: "192.0.2.4" })
      },
      logs
    )
    const warnings = parse(logs).filter((line) => line.message.startsWith("Authentication failed"))
    expect(warnings.map((line) => [line.level, line.message, line.annotations?.["client"]])).toEqual([
      ["WARN", 'Authentication failed for "mallory": Invalid login or password', "192.0.2.1"],
      ["WARN", 'Authentication failed for "admin": Invalid login or password', "192.0.2.2"]
    ])
    expect(logs.join("\n")).not.toContain(SECRET)
  })

  it("logs nothing without the option", async () => {
    const logs: Array<string> = []
    await withNode(
      new MemoryDisk(),
      [],
      async (call) => {
        expect(
          (await call({ url: "/streams/s", headers: { host: "h", authorization: basic("mallory", SECRET) } })).status
        ).toBe(401)
      },
      logs
    )
    expect(logs.join("\n")).not.toContain("Authentication failed")
  })
})
