/**
 * The live adapter reports its open connections (for `/stats` `proc.tcp.connections`, and `/metrics`
 * `vellum_http_open_connections` / `kurrentdb_kestrel_connections`): one more when a client connects, one
 * less when it goes away.
 */
import { describe, it, assert } from "@effect/vitest"
import { connect, type Socket } from "node:net"
import { Effect } from "effect"
import { serveHttp, type Reply } from "../src/index.js"

// Below the ephemeral range (32768 on), so no server another test binds to port 0 can take it.
const port = 23_000 + (process.pid % 1000)

/** A keep-alive connection that has been answered once (so the server surely saw it). */
const openConnection = (): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () =>
      socket.write("GET /ping HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
    )
    socket.once("data", () => resolve(socket))
    socket.once("error", reject)
  })

const until = (condition: () => boolean): Effect.Effect<void> =>
  Effect.promise(async () => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setImmediate(r))
  })

describe("serveHttp connection count", () => {
  it.scopedLive("reports each connection opened and closed", () =>
    Effect.gen(function* () {
      const reported: Array<number> = []
      const handle = (): Effect.Effect<Reply> =>
        Effect.succeed({ status: 200, reason: "OK", headers: { "Content-Length": "0" } })
      yield* serveHttp({ host: "127.0.0.1", port, handle, onConnections: (open) => void reported.push(open) })
      const a = yield* Effect.promise(openConnection)
      const b = yield* Effect.promise(openConnection)
      assert.deepStrictEqual(reported, [1, 2])
      a.destroy()
      yield* until(() => reported.length === 3)
      assert.deepStrictEqual(reported, [1, 2, 1])
      b.destroy()
      yield* until(() => reported.length === 4)
      assert.deepStrictEqual(reported, [1, 2, 1, 0])
    })
  )
})
