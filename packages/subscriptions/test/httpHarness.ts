/**
 * The `/subscriptions` routes in-process over a test double of the service (fakeSubscriptions.ts), beside the
 * stream routes on a real in-memory store (for the parked-message views and stream ACLs), with the stream
 * tests' authenticator and ACL double. Users: `admin:changeit` ($admins), `ops:changeit` ($ops), `user:pass`.
 */
import { Effect, Exit, Scope } from "effect"
import { Disk, MemoryDisk } from "@vellum/platform"
import { Authenticator, StreamAccess } from "@vellum/security"
import { EventStore, make, type EventStoreService } from "@vellum/storage"
import { defaultHttpSettings, makeHandler, streamRoutes, type HttpSettings, type Reply } from "@vellum/http"
import { storageConfig, testAuthenticator, testStreamAccess } from "../../http/test/streams-harness.js"
import { subscriptionRoutes } from "../src/http/routes.js"
import { Subscriptions } from "../src/service/Subscriptions.js"
import { makeFakeSubscriptions, type FakeSubscriptions } from "./fakeSubscriptions.js"

export { AdminAuth, UserAuth, basic, header, json, text } from "../../http/test/streams-harness.js"

export const OpsAuth = `Basic ${Buffer.from("ops:changeit").toString("base64")}`

export interface SubsNode {
  readonly fake: FakeSubscriptions
  readonly store: EventStoreService
  readonly deny: Set<string>
  readonly request: (
    method: string,
    url: string,
    options?: { headers?: Record<string, string>; body?: string; auth?: string }
  ) => Effect.Effect<Reply>
}

export const makeSubsNode = (settings: Partial<HttpSettings> = {}): Effect.Effect<SubsNode, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const mem = new MemoryDisk()
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const store = yield* make(storageConfig()).pipe(Effect.provideService(Disk, mem.service), Scope.extend(scope))
    const fake = makeFakeSubscriptions()
    const deny = new Set<string>()
    const handle = makeHandler([...streamRoutes, ...subscriptionRoutes], { ...defaultHttpSettings, ...settings })
    const request: SubsNode["request"] = (method, url, options = {}) =>
      handle({
        method,
        url,
        headers: {
          Host: "localhost:2113",
          ...(options.auth !== undefined ? { Authorization: options.auth } : {}),
          ...options.headers
        },
        body: options.body === undefined ? undefined : Buffer.from(options.body, "utf8")
      }).pipe(
        Effect.provideService(EventStore, store),
        Effect.provideService(Authenticator, testAuthenticator()),
        Effect.provideService(StreamAccess, testStreamAccess(deny)),
        Effect.provideService(Subscriptions, fake.service)
      )
    return { fake, store, deny, request }
  })

/** Runs a test body against a fresh node. */
export const withNode = <A>(body: (node: SubsNode) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(makeSubsNode(), body)))
