// The HTTP limits come from the configuration: MaxAppendSize bounds request bodies and appends through the
// composed node, and the server's timeouts and connection cap are options passed to the live adapter.
import { describe, expect, it } from "vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { defaultServeLimits } from "@vellum/http"
import * as NodeApp from "../src/NodeApp.js"
import { toServeLimits } from "../src/config/index.js"
import { load } from "./configSupport.js"

const admin = `Basic ${Buffer.from("admin:changeit").toString("base64")}`

describe("HTTP limits from the configuration", () => {
  it("MaxAppendSize is the request body limit and the append limit of the node", async () => {
    const loaded = load({ argv: ["--mem-db", "--password-hash-cost", "4", "--max-append-size", "2000"] })
    const reply = await Effect.runPromise(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          Layer.provide(
            NodeApp.layer(loaded, { dbDir: "/db", instanceId: "00000000-0000-4000-8000-000000000001" }),
            MemoryDisk.layer(new MemoryDisk())
          ),
          scope
        )
        const handle = yield* Effect.provide(NodeApp.makeNodeHandler(loaded), context)
        const body = new TextEncoder().encode(
          JSON.stringify([{ eventId: "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4", eventType: "t", data: "x".repeat(2000) }])
        )
        const headers = { host: "h", authorization: admin, "content-type": "application/vnd.eventstore.events+json" }
        const answer = yield* Effect.provide(handle({ method: "POST", url: "/streams/s", headers, body }), context)
        yield* Scope.close(scope, Exit.void)
        return answer
      })
    )
    expect([reply.status, reply.reason]).toEqual([413, "Maximum Append Size of 2000 Exceeded."])
  })

  it("the timeouts and the connection cap are options, with defaults that long polls and pools survive", () => {
    expect(toServeLimits(load({ argv: [] }).config)).toEqual({
      maxRequestBodyBytes: 1024 * 1024,
      ...defaultServeLimits
    })
    const set = load({
      argv: [
        "--http-headers-timeout",
        "2000",
        "--http-request-timeout",
        "30000",
        "--http-keep-alive-timeout",
        "5000",
        "--http-max-connections",
        "64"
      ]
    })
    expect(toServeLimits(set.config)).toEqual({
      maxRequestBodyBytes: 1024 * 1024,
      headersTimeoutMillis: 2000,
      requestTimeoutMillis: 30_000,
      keepAliveTimeoutMillis: 5000,
      maxConnections: 64
    })
  })
})
