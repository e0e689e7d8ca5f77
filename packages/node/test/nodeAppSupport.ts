// A composed node on an in-memory disk, called in-process with plain requests (method, URL, credentials,
// headers, body), for tests that go through every layer of the real node: users, ACLs, metrics.
import { Effect, Exit, Layer, Scope } from "effect"
import { MemoryDisk } from "@vellum/platform"
import type { HttpRequest, Reply } from "@vellum/http"
import * as NodeApp from "../src/NodeApp.js"
import { load } from "./configSupport.js"

export const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`
export const admin = basic("admin", "changeit")

export type Call = (
  method: string,
  url: string,
  auth: string,
  headers?: Record<string, string>,
  body?: string
) => Promise<Reply>

/** A started node (in memory unless `argv` says otherwise); `body` gets a call function; the node stops afterwards. */
export const withNode = (
  body: (call: Call) => Promise<void>,
  argv: ReadonlyArray<string> = ["--mem-db", "--password-hash-cost", "4"]
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const loaded = load({ argv })
      const scope = yield* Scope.make()
      const layer = Layer.provide(
        NodeApp.layer(loaded, { dbDir: "/db", instanceId: "00000000-0000-4000-8000-000000000001" }),
        MemoryDisk.layer(new MemoryDisk())
      )
      const context = yield* Layer.buildWithScope(layer, scope)
      const handle = yield* Effect.provide(NodeApp.makeNodeHandler(loaded), context)
      const call: Call = (method, url, auth, headers = {}, text) =>
        Effect.runPromise(
          Effect.provide(
            handle({
              method,
              url,
              headers: { host: "127.0.0.1:2113", authorization: auth, ...headers },
              body: text === undefined ? undefined : Buffer.from(text, "utf8")
            } satisfies HttpRequest),
            context
          )
        )
      yield* Effect.promise(() => body(call))
      yield* Scope.close(scope, Exit.void)
    })
  )

export const text = (reply: Reply) =>
  typeof reply.body === "string" ? reply.body : Buffer.from(reply.body ?? new Uint8Array()).toString("utf8")
