/**
 * The pipeline's plain form (Answer.ts): an append is answered by the writer's callback with no fiber, a
 * route miss at once, and over a socket the plain form writes the very bytes the Effect form writes.
 */
import { describe, it, assert } from "@effect/vitest"
import { Context, Effect, Ref } from "effect"
import { Authenticator, StreamAccess, systemPrincipal } from "@vellum/security"
import { Disk, MemoryDisk } from "@vellum/platform"
import { EventStore, make } from "@vellum/storage"
import {
  defaultHttpSettings,
  makeHandler,
  peekRef,
  serveHttp,
  streamRoutes,
  type HttpRequest,
  type RequestHandler
} from "../src/index.js"
import { LaterReply, toEffect } from "../src/Answer.js"
import { exchange, withoutDate } from "./rawExchange.js"
import { AdminAuth, EventsJson, eventsBody, storageConfig, testStreamAccess } from "./streams-harness.js"

const post = (path: string, body: string) =>
  `POST ${path} HTTP/1.1\r\nHost: localhost:2113\r\nAuthorization: ${AdminAuth}\r\n` +
  `Content-Type: ${EventsJson}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`

// Below the ephemeral range, and apart from the other serveHttp tests (23_000, 24_000, 25_000 + pid % 1000).
const port = 26_000 + 3 * (process.pid % 1000)

const services = Effect.gen(function* () {
  const mem = new MemoryDisk()
  const store = yield* make(storageConfig()).pipe(Effect.provideService(Disk, mem.service))
  const context = Context.make(EventStore, store).pipe(
    // Credentials checked from a cache: an answer already settled, as the node's verified-credentials cache gives.
    Context.add(Authenticator, { authenticate: () => Effect.succeed(systemPrincipal) }),
    Context.add(StreamAccess, testStreamAccess(new Set()))
  )
  return { context }
})

describe("the pipeline's plain form", () => {
  it("reads a Ref's value without an Effect (the node's lifecycle state, for leader routing)", () => {
    const ref = Ref.unsafeMake<string>("Leader")
    assert.strictEqual(peekRef(ref), "Leader")
    Effect.runSync(Ref.set(ref, "ShuttingDown"))
    assert.strictEqual(peekRef(ref), "ShuttingDown")
  })

  it.scoped("answers an append in the writer's callback and a route miss at once", () =>
    Effect.gen(function* () {
      const { context } = yield* services
      const handle: RequestHandler<EventStore | Authenticator | StreamAccess> = makeHandler(
        streamRoutes,
        defaultHttpSettings
      )
      const surroundings = { context, clock: yield* Effect.clock }
      const answer = handle.answer!(
        {
          method: "POST",
          url: "/streams/plain",
          headers: { host: "localhost:2113", authorization: AdminAuth, "content-type": EventsJson },
          body: Buffer.from(eventsBody(1))
        },
        surroundings
      )
      assert.isTrue(answer instanceof LaterReply)
      const reply = yield* Effect.provide(toEffect(answer), context)
      assert.strictEqual(reply.status, 201)
      assert.strictEqual(reply.headers["Location"], "http://localhost:2113/streams/plain/0")

      const miss = handle.answer!({ method: "GET", url: "/nowhere", headers: {}, body: undefined }, surroundings)
      assert.isFalse(Effect.isEffect(miss) || miss instanceof LaterReply)
    })
  )

  it.scopedLive("writes the bytes the Effect form writes", () =>
    Effect.gen(function* () {
      const { context } = yield* services
      const plain = makeHandler(streamRoutes, defaultHttpSettings)
      const viaFiber = (request: HttpRequest) => plain(request)
      yield* serveHttp({ host: "127.0.0.1", port, handle: plain }).pipe(Effect.provide(context))
      yield* serveHttp({ host: "127.0.0.1", port: port + 1, handle: viaFiber }).pipe(Effect.provide(context))
      const cases = [
        post("/streams/bytes-a", eventsBody(1)),
        post("/streams/bytes-b", eventsBody(2)),
        // A wrong expected version: the writer's failure, answered in its callback.
        post("/streams/bytes-a", eventsBody(3)).replace(
          "Connection: close",
          "ES-ExpectedVersion: 7\r\nConnection: close"
        ),
        post("/streams/bytes-c", "not json"),
        "GET /nowhere HTTP/1.1\r\nHost: localhost:2113\r\nConnection: close\r\n\r\n"
      ]
      for (const request of cases) {
        const fromPlain = yield* Effect.promise(() => exchange(port, request.replace(/bytes-(.)/, "plain-$1")))
        const fromFiber = yield* Effect.promise(() => exchange(port + 1, request.replace(/bytes-(.)/, "fiber-$1")))
        assert.strictEqual(
          withoutDate(fromPlain).replace(/plain-/g, "X-"),
          withoutDate(fromFiber).replace(/fiber-/g, "X-")
        )
        assert.match(fromPlain, /^HTTP\/1\.1 \d{3} /)
      }
    })
  )

  it.scopedLive("answers 500 when the plain form throws, and goes on serving", () =>
    Effect.gen(function* () {
      let calls = 0
      const handle = Object.assign((_: HttpRequest) => Effect.die("unused"), {
        answer: () => {
          calls++
          if (calls === 1) throw new Error("boom")
          return { status: 204, reason: "No Content", headers: { "Content-Length": "0" } }
        }
      })
      yield* serveHttp({ host: "127.0.0.1", port: port + 2, handle })
      const get = "GET /x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
      const first = yield* Effect.promise(() => exchange(port + 2, get))
      assert.match(first, /^HTTP\/1\.1 500 Internal Server Error\r\n/)
      const second = yield* Effect.promise(() => exchange(port + 2, get))
      assert.match(second, /^HTTP\/1\.1 204 No Content\r\n/)
    })
  )
})
