/**
 * The live adapter over a real socket: reason phrases reach the wire, bodies and headers round-trip, an
 * oversized body is handed over flagged instead of read, and the server closes with its scope.
 */
import { describe, it, assert } from "@effect/vitest"
import { request as httpRequest } from "node:http"
import { Effect } from "effect"
import { serveHttp, type HttpRequest, type Reply } from "../src/index.js"

interface Wire {
  readonly status: number
  readonly reason: string
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly raw: ReadonlyArray<string>
  readonly body: string
}

const send = (port: number, method: string, path: string, body?: string): Promise<Wire> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path, headers: body === undefined ? {} : { "Content-Type": "text/plain" } },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            reason: res.statusMessage ?? "",
            headers: res.headers,
            raw: res.rawHeaders,
            body: Buffer.concat(chunks).toString("utf8")
          })
        )
      }
    )
    req.on("error", reject)
    if (body !== undefined) req.write(body)
    req.end()
  })

// Below the ephemeral range (32768 on), so no server another test binds to port 0 can take it.
const port = 24_000 + (process.pid % 1000)

describe("serveHttp (live adapter)", () => {
  it.scopedLive("serves the processor's replies with their reason phrases", () =>
    Effect.gen(function* () {
      const seen: Array<HttpRequest> = []
      const handle = (request: HttpRequest): Effect.Effect<Reply> =>
        Effect.sync(() => {
          seen.push(request)
          return {
            status: 400,
            reason: "Wrong expected EventNumber",
            headers: { "ES-CurrentVersion": "3", "WWW-Authenticate": ["a", "b"], "Content-Length": "5" },
            body: "hello"
          }
        })
      yield* serveHttp({ host: "127.0.0.1", port, handle, maxRequestBodyBytes: 1000 })
      const wire = yield* Effect.promise(() => send(port, "POST", "/streams/s?x=1", "payload"))
      assert.strictEqual(wire.status, 400)
      assert.strictEqual(wire.reason, "Wrong expected EventNumber")
      assert.strictEqual(wire.headers["es-currentversion"], "3")
      // A repeated header goes out as separate header lines.
      assert.strictEqual(wire.raw.filter((h) => h.toLowerCase() === "www-authenticate").length, 2)
      assert.strictEqual(wire.body, "hello")
      assert.strictEqual(seen[0]!.url, "/streams/s?x=1")
      assert.strictEqual(Buffer.from(seen[0]!.body!).toString("utf8"), "payload")
      const get = yield* Effect.promise(() => send(port, "GET", "/x"))
      assert.strictEqual(get.status, 400)
      assert.isUndefined(seen[1]!.body)

      // An oversized body reaches the processor flagged, without its bytes, and its answer is sent.
      const big = yield* Effect.promise(() => send(port, "POST", "/x", "y".repeat(5000)))
      assert.strictEqual(big.status, 400)
      assert.strictEqual(seen.length, 3)
      assert.isTrue(seen[2]!.bodyTooLarge)
      assert.isUndefined(seen[2]!.body)
    })
  )
})
