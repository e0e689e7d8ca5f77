// A port already taken is a typed ListenFailed with one sentence naming the address and what to change,
// not a defect carrying a stack trace.
import { describe, it, assert } from "@effect/vitest"
import { createServer } from "node:net"
import { Effect, Either } from "effect"
import { ListenFailed, serveHttp, type Reply } from "../src/index.js"

const holdPort = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly close: () => void }>((resume) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resume(
        Effect.succeed({
          port: typeof address === "object" && address !== null ? address.port : 0,
          close: () => server.close()
        })
      )
    })
  }),
  (held) => Effect.sync(held.close)
)

describe("serveHttp on a taken port", () => {
  it.scopedLive("fails with ListenFailed (EADDRINUSE) and a message saying what to do", () =>
    Effect.gen(function* () {
      const held = yield* holdPort
      const handle = () => Effect.succeed<Reply>({ status: 200, headers: {} })
      const result = yield* Effect.either(serveHttp({ host: "127.0.0.1", port: held.port, handle }))
      assert.isTrue(Either.isLeft(result))
      const error = (result as Either.Left<ListenFailed, void>).left
      assert.instanceOf(error, ListenFailed)
      assert.strictEqual(error.code, "EADDRINUSE")
      assert.strictEqual(
        error.message,
        `cannot listen on 127.0.0.1:${held.port}: the port is already in use (another process listens on it; pick another with --node-port) [EADDRINUSE]`
      )
    })
  )
})
