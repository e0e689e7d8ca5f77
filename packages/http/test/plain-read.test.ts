/**
 * The read routes' plain form (Answer.ts, platform runNow.ts): a stream page, a `$all` page and a single
 * event whose facts are in memory are answered with no Effect at all; over a socket the plain form writes the
 * very bytes the store's Effect reads give in a fiber, and a store whose reads must go to disk (no read cache)
 * falls back to an Effect that answers the same bytes.
 */
import { describe, it, assert } from "@effect/vitest"
import { Context, Effect } from "effect"
import { Authenticator, StreamAccess, systemPrincipal } from "@vellum/security"
import { Disk, MemoryDisk } from "@vellum/platform"
import { EventStore, make, type EventStoreService } from "@vellum/storage"
import { defaultHttpSettings, makeHandler, serveHttp, streamRoutes, type HttpRequest } from "../src/index.js"
import { LaterReply, toEffect } from "../src/Answer.js"
import { exchange, withoutDate } from "./rawExchange.js"
import { AdminAuth, EventsJson, eventsBody, storageConfig, testStreamAccess } from "./streams-harness.js"

// Apart from the other serveHttp tests (23_000 … 26_000 + 3 × (pid % 1000)).
const port = 27_000 + 4 * (process.pid % 1000)

const get = (path: string, headers = "") =>
  `GET ${path} HTTP/1.1\r\nHost: localhost:2113\r\nAuthorization: ${AdminAuth}\r\n${headers}Connection: close\r\n\r\n`

/** A store with a stream, a link to it, a metastream and `$maxCount` on another stream. */
const filled = (readCacheBytes?: number) =>
  Effect.gen(function* () {
    const mem = new MemoryDisk()
    const store = yield* make(storageConfig(readCacheBytes === undefined ? {} : { readCacheBytes })).pipe(
      Effect.provideService(Disk, mem.service)
    )
    const context = Context.make(EventStore, store).pipe(
      Context.add(Authenticator, { authenticate: () => Effect.succeed(systemPrincipal) }),
      Context.add(StreamAccess, testStreamAccess(new Set()))
    )
    const handle = makeHandler(streamRoutes, defaultHttpSettings)
    const append = (path: string, body: string, type = EventsJson) =>
      Effect.provide(
        handle({
          method: "POST",
          url: path,
          headers: { host: "localhost:2113", authorization: AdminAuth, "content-type": type },
          body: Buffer.from(body)
        }),
        context
      )
    for (let i = 0; i < 3; i++) yield* append("/streams/page", eventsBody(...tenFrom(10 * i)))
    yield* append(
      "/streams/linked",
      JSON.stringify([
        { eventId: "11111111-1111-4111-8111-111111111111", eventType: "$>", data: "3@page" },
        { eventId: "22222222-2222-4222-8222-222222222222", eventType: "plain", data: { a: 1 } }
      ])
    )
    yield* append("/streams/capped/metadata", JSON.stringify([metadataEvent({ $maxCount: 2 })]))
    yield* append("/streams/capped", eventsBody(...tenFrom(100)))
    return { store, context, handle }
  })

const tenFrom = (first: number) => Array.from({ length: 10 }, (_, i) => first + i)

const metadataEvent = (data: object) => ({
  eventId: "33333333-3333-4333-8333-333333333333",
  eventType: "$metadata",
  data
})

/** The requests compared; `middle` is a `$all` position inside the log (a record boundary). */
const requestsFor = (middle: string) => [
  get("/streams/page/0/forward/20?embed=body"),
  get("/streams/page/0/forward/20?embed=rich"),
  get("/streams/page/5/forward/20"),
  get("/streams/page/29/backward/20?embed=body"),
  get("/streams/page", "Accept: application/json\r\n"),
  get("/streams/page"),
  get("/streams/page", "Accept: application/vnd.eventstore.streamdesc+json\r\n"),
  get("/streams/page/0/forward/20?embed=body", "Accept: text/html\r\n"),
  get("/streams/page/0/forward/20", 'If-None-Match: "29;-2043752224"\r\n'),
  get("/streams/linked/0/forward/20?embed=body"),
  get("/streams/linked/0/forward/20?embed=body", "ES-ResolveLinkTos: false\r\n"),
  get("/streams/capped/0/forward/20?embed=body"),
  get("/streams/missing/0/forward/20"),
  get("/streams/page/7"),
  get("/streams/page/7?embed=body", "Accept: application/vnd.eventstore.atom+json\r\n"),
  get("/streams/page/head"),
  get("/streams/linked/0", "Accept: application/json\r\n"),
  get("/streams/capped/0"),
  get("/streams/capped/metadata"),
  get("/streams/page/99"),
  get(`/streams/$all/${allStart}/forward/100?embed=body`),
  get("/streams/$all/head/backward/20?embed=body"),
  get("/streams/$all"),
  get(`/streams/$all/${allStart}/forward/5`, "Accept: application/atom+xml\r\n"),
  get("/streams/$all/12/forward/5"),
  get(`/streams/$all/${middle}/forward/20?embed=body`),
  get(`/streams/$all/${middle}/backward/20?embed=body`)
]

/** A `$all` position as the feeds write it (commit then prepare, 16 hex digits each). */
const allPosition = (position: number) => position.toString(16).padStart(16, "0").repeat(2)
const allStart = allPosition(0)

/** The same store without its plain reads: every read is the store's Effect read, in a fiber. */
const withoutReadNow = (store: EventStoreService): EventStoreService => ({ ...store, readNow: undefined })

describe("the read routes' plain form", () => {
  it.scoped("answers a cached stream page, `$all` page and single event with no Effect", () =>
    Effect.gen(function* () {
      const { context, handle } = yield* filled()
      const surroundings = { context, clock: yield* Effect.clock }
      const headers = { host: "localhost:2113", authorization: AdminAuth, accept: "application/json" }
      for (const url of [
        "/streams/page/0/forward/20?embed=body",
        `/streams/$all/${allStart}/forward/100`,
        "/streams/page/7"
      ]) {
        const answer = handle.answer!({ method: "GET", url, headers, body: undefined }, surroundings)
        // The first read of `$all` brings the log's blocks into the cache; asked again, it is all in memory.
        yield* Effect.provide(toEffect(answer), context)
        const again = handle.answer!({ method: "GET", url, headers, body: undefined }, surroundings)
        assert.isFalse(Effect.isEffect(again) || again instanceof LaterReply, url)
        const reply = yield* Effect.provide(toEffect(again), context)
        assert.strictEqual(reply.status, 200, url)
      }
    })
  )

  it.scoped("goes on as an Effect when the records must be read from disk", () =>
    Effect.gen(function* () {
      const { context, handle } = yield* filled(0)
      const surroundings = { context, clock: yield* Effect.clock }
      const answer = handle.answer!(
        {
          method: "GET",
          url: "/streams/page/0/forward/20?embed=body",
          headers: { host: "localhost:2113", authorization: AdminAuth },
          body: undefined
        },
        surroundings
      )
      assert.isTrue(Effect.isEffect(answer))
      const reply = yield* Effect.provide(toEffect(answer), context)
      assert.strictEqual(reply.status, 200)
    })
  )

  it.scopedLive("writes the bytes the store's Effect reads give, from memory and after a miss", () =>
    Effect.gen(function* () {
      const cached = yield* filled()
      const uncached = yield* filled(0)
      const viaFiber = (request: HttpRequest) => cached.handle(request)
      const effectReads = Context.add(cached.context, EventStore, withoutReadNow(cached.store))
      yield* serveHttp({ host: "127.0.0.1", port, handle: cached.handle }).pipe(Effect.provide(cached.context))
      yield* serveHttp({ host: "127.0.0.1", port: port + 1, handle: viaFiber }).pipe(Effect.provide(effectReads))
      yield* serveHttp({ host: "127.0.0.1", port: port + 2, handle: uncached.handle }).pipe(
        Effect.provide(uncached.context)
      )
      const uncachedEffectReads = Context.add(uncached.context, EventStore, withoutReadNow(uncached.store))
      yield* serveHttp({ host: "127.0.0.1", port: port + 3, handle: (r: HttpRequest) => uncached.handle(r) }).pipe(
        Effect.provide(uncachedEffectReads)
      )
      const middle = (yield* cached.store.readAllForward(0, 7)).nextPosition
      const middleUncached = (yield* uncached.store.readAllForward(0, 7)).nextPosition
      assert.strictEqual(middle, middleUncached)
      for (const request of requestsFor(allPosition(middle))) {
        const plain = withoutDate(yield* Effect.promise(() => exchange(port, request)))
        const effect = withoutDate(yield* Effect.promise(() => exchange(port + 1, request)))
        assert.match(plain, /^HTTP\/1\.1 \d{3} /)
        assert.strictEqual(plain, effect, request)
        const missed = withoutDate(yield* Effect.promise(() => exchange(port + 2, request)))
        const missedEffect = withoutDate(yield* Effect.promise(() => exchange(port + 3, request)))
        assert.strictEqual(missed, missedEffect, request)
        // Another store (other event ids and times in the bodies): the same status.
        assert.strictEqual(missed.split("\r\n")[0], plain.split("\r\n")[0], request)
      }
    })
  )
})
