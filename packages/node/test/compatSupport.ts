/**
 * A whole Vellum node (the node package's composition root over a MemoryDisk) served on a real localhost
 * port, for driving it with third-party EventStoreDB HTTP clients. The port comes from the OS (listen on
 * 0, close, reuse): the node's configuration has no "any port" value, but serveHttp takes any port.
 */
import { createServer } from "node:net"
import { Effect, Exit, Layer, Option, Scope } from "effect"
import { MemoryDisk } from "@vellum/platform"
import * as NodeApp from "../src/NodeApp.js"
import { loadConfig, type LoadedConfig } from "../src/config/index.js"
import { serveHttp } from "@vellum/http"

export interface ServedNode {
  readonly host: string
  readonly port: number
  /** Stops the server (graceful) and closes the node. */
  readonly stop: () => Promise<void>
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error("no free port"))))
    })
  })

const loadNodeConfig = (argv: ReadonlyArray<string>): LoadedConfig =>
  Effect.runSync(
    Effect.flatMap(
      loadConfig({ argv, env: {}, readFile: () => Effect.succeed(Option.none()), version: "0.1.0" }),
      (outcome) =>
        outcome._tag === "Start"
          ? Effect.succeed(outcome.loaded)
          : Effect.dieMessage(`the node would not start: ${outcome._tag}`)
    )
  )

/** Starts a node with in-memory storage and fast password hashing, served on 127.0.0.1:<free port>. */
export const serveNode = async (extraArgv: ReadonlyArray<string> = []): Promise<ServedNode> => {
  const host = "127.0.0.1"
  const port = await freePort()
  const loaded = loadNodeConfig(["--mem-db", "--password-hash-cost", "4", ...extraArgv])
  const app = Layer.provide(
    NodeApp.layer(loaded, { dbDir: "/db", instanceId: "00000000-0000-4000-8000-0000000000c1" }),
    MemoryDisk.layer(new MemoryDisk())
  )
  const scope = Effect.runSync(Scope.make())
  await Effect.runPromise(
    Effect.gen(function* () {
      const context = yield* Layer.buildWithScope(app, scope)
      const handle = yield* Effect.provide(NodeApp.makeNodeHandler(loaded), context)
      yield* serveHttp({ host, port, handle, drainMillis: 500 }).pipe(Effect.provide(context), Scope.extend(scope))
    })
  )
  return { host, port, stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}
