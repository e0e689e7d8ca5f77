// A composed node called in-process over a MemoryDisk, for the node tests: `withNode` builds it from
// command-line options, hands `body` a function that sends one request, and closes it afterwards (a stop).
import { Effect, Exit, Layer, LogLevel, Scope, type Context } from "effect"
import { JsonLogger, MemoryDisk } from "@vellum/platform"
import type { HttpRequest, Reply } from "@vellum/http"
import * as NodeApp from "../src/NodeApp.js"
import { load } from "./configSupport.js"

export const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`
export const admin = basic("admin", "changeit")

export type Call = (r: Partial<HttpRequest> & { url: string }) => Promise<Reply>

/**
 * Runs `body` against a node on `disk`; the node's scope is closed afterwards (as a stop). With `logs`, the
 * JSON log lines written while requests are handled are collected there.
 */
export const withNode = <A>(
  disk: MemoryDisk,
  argv: ReadonlyArray<string>,
  body: (call: Call) => Promise<A>,
  logs?: Array<string>
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const loaded = load({ argv: ["--mem-db", "--password-hash-cost", "4", ...argv] })
      const scope = yield* Scope.make()
      const context: Context.Context<NodeApp.NodeAppServices> = yield* Layer.buildWithScope(
        Layer.provide(
          NodeApp.layer(loaded, { dbDir: "/db", instanceId: "00000000-0000-4000-8000-000000000001" }),
          MemoryDisk.layer(disk)
        ),
        scope
      )
      const handle = yield* Effect.provide(NodeApp.makeNodeHandler(loaded), context)
      const logger = logs === undefined ? Layer.empty : JsonLogger.layer((line) => logs.push(line), LogLevel.All)
      const call: Call = (r) =>
        Effect.runPromise(
          Effect.provide(
            Effect.provide(
              handle({ method: "GET", headers: { host: "127.0.0.1:2113" }, body: undefined, ...r }),
              context
            ),
            logger
          )
        )
      const result = yield* Effect.promise(() => body(call))
      yield* Scope.close(scope, Exit.void)
      return { result, context }
    })
  )

export const text = (reply: Reply) =>
  typeof reply.body === "string" ? reply.body : Buffer.from(reply.body ?? new Uint8Array()).toString("utf8")
