// The sim's HTTP client adapter against a real node (the whole NodeApp on a MemoryDisk, called in-process):
// every answer is read back into what the clients compare, the bytes stored are the bytes the model holds,
// and replies no correct node gives are told apart from indeterminate ones.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { defaultStorageConfig, type EventStoreService, type ProposedEvent } from "@vellum/storage"
import type { Reply } from "@vellum/http"
import { indentedJson } from "../src/client.js"
import { httpStore } from "../src/httpStore.js"
import { openNode } from "../src/simNode.js"
import { expectedFeedPaging } from "../src/readChecks.js"
import { StoreModel } from "../src/model.js"
import type { SimStore, StoreFailure } from "../src/simStore.js"

const storage = { ...defaultStorageConfig("/db"), chunkSize: 4096, memtableMaxEntries: 4, readCacheBytes: 64 * 1024 }

/** Runs `body` against a fresh node; the node is stopped afterwards. */
const withNode = <A>(body: (clients: SimStore, store: EventStoreService) => Effect.Effect<A, StoreFailure>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const node = yield* openNode("http", storage, new MemoryDisk().service, scope)
    const result = yield* Effect.either(body(node.clients, node.store))
    yield* Scope.close(scope, Exit.void)
    if (result._tag === "Left")
      return yield* Effect.die(new Error(`${result.left._tag}: ${JSON.stringify(result.left)}`))
    return result.right
  })

let ids = 0
const uuid = () => `00000000-0000-4000-8000-${(++ids).toString(16).padStart(12, "0")}`
const event = (value: object): ProposedEvent => ({
  eventId: uuid(),
  eventType: "E",
  isJson: true,
  data: Buffer.from(indentedJson(value)),
  metadata: Buffer.alloc(0)
})
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")

describe("the HTTP client adapter", () => {
  it.effect("stores client data byte for byte and reads it back from feeds and entries", () =>
    withNode((clients, store) =>
      Effect.gen(function* () {
        const events = [event({ c: 1, s: 0, i: 0, n: 2, pad: "xx" }), event({ c: 1, s: 0, i: 1, n: 2, pad: "" })]
        expect(yield* clients.append("s", -1, events)).toEqual({
          _tag: "Appended",
          first: 0,
          last: undefined,
          idempotent: undefined
        })
        const stored = yield* Effect.orDie(store.readStreamForward("s", 0, 10))
        if (stored._tag !== "Success") return expect.fail(stored._tag)
        expect(stored.events.map((e) => text(e.event!.data))).toEqual(events.map((e) => text(e.data)))
        const forward = yield* clients.readStream({ stream: "s", direction: "forward", from: 0, count: 5 })
        if (forward._tag !== "Success") return expect.fail(forward._tag)
        expect(forward.events.map((e) => [e.eventNumber, e.eventId, e.eventType, text(e.data)])).toEqual(
          events.map((e, i) => [i, e.eventId, "E", text(e.data)])
        )
        const single = yield* clients.readEvent("s", -1)
        if (single._tag !== "Success") return expect.fail(single._tag)
        expect([single.event.eventNumber, single.event.eventId, text(single.event.data)]).toEqual([
          1,
          events[1]!.eventId,
          text(events[1]!.data)
        ])
      })
    )
  )

  it.effect("answers a retried append with the original first event number", () =>
    withNode((clients) =>
      Effect.gen(function* () {
        const batch = [event({ a: 1 })]
        yield* clients.append("r", -2, [event({ a: 0 })])
        expect(yield* clients.append("r", -2, batch)).toMatchObject({ _tag: "Appended", first: 1 })
        yield* clients.append("r", -2, [event({ a: 2 })])
        expect(yield* clients.append("r", 0, batch)).toMatchObject({ _tag: "Appended", first: 1 })
      })
    )
  )

  it.effect("reads wrong versions, deletions and missing streams from statuses and headers", () =>
    withNode((clients) =>
      Effect.gen(function* () {
        expect(yield* clients.append("w", 3, [event({})])).toEqual({ _tag: "WrongExpectedVersion", current: -1 })
        expect(yield* clients.deleteStream("w", -2, false)).toEqual({ _tag: "WrongExpectedVersion", current: -1 })
        expect(yield* clients.readStream({ stream: "w", direction: "backward", from: -1, count: 3 })).toEqual({
          _tag: "NoStream",
          lastEventNumber: undefined
        })
        expect(yield* clients.readEvent("w", 0)).toEqual({ _tag: "Missing" })
        yield* clients.append("w", -1, [event({})])
        expect(yield* clients.deleteStream("w", 0, true)).toMatchObject({ _tag: "Appended" })
        expect(yield* clients.append("w", -2, [event({})])).toEqual({ _tag: "StreamDeleted" })
        expect(yield* clients.readStream({ stream: "w", direction: "forward", from: 0, count: 3 })).toEqual({
          _tag: "StreamDeleted"
        })
        expect(yield* clients.readEvent("w", -1)).toEqual({ _tag: "StreamDeleted" })
      })
    )
  )

  it.effect("writes metadata exactly as given, JSON or not", () =>
    withNode((clients, store) =>
      Effect.gen(function* () {
        yield* clients.append("m", -1, [event({})])
        const json = {
          eventId: uuid(),
          eventType: "$metadata",
          isJson: true,
          data: Buffer.from("{not json"),
          metadata: Buffer.alloc(0)
        }
        expect(yield* clients.setMetadata("m", -1, json)).toMatchObject({ _tag: "Appended", first: 0 })
        const raw = {
          eventId: uuid(),
          eventType: "$metadata",
          isJson: false,
          data: Buffer.from('{"$maxCount":1}'),
          metadata: Buffer.alloc(0)
        }
        expect(yield* clients.setMetadata("m", 0, raw)).toMatchObject({ _tag: "Appended", first: 1 })
        const meta = yield* Effect.orDie(store.readStreamForward("$$m", 0, 10))
        if (meta._tag !== "Success") return expect.fail(meta._tag)
        expect(meta.events.map((e) => [e.event!.eventId, e.event!.eventType, text(e.event!.data)])).toEqual([
          [raw.eventId, "$metadata", '{"$maxCount":1}']
        ])
        // A non-JSON event's bytes come from an octet-stream read (the feed shows no text for them).
        const observed = yield* clients.readEvent("$$m", 1)
        if (observed._tag !== "Success") return expect.fail(observed._tag)
        expect(text(observed.event.data)).toBe('{"$maxCount":1}')
      })
    )
  )

  it.effect("shows the paging links the spec derives from the model's page", () =>
    withNode((clients) =>
      Effect.gen(function* () {
        const model = new StoreModel()
        for (let n = 0; n < 8; n++) {
          const e = event({ n })
          yield* clients.append("p", n - 1, [e])
          model.applyAppend("p", { _tag: "Ok", current: n - 1, softDeleted: false }, [e], 0)
        }
        const requests = [
          { direction: "forward", from: 0, count: 3 },
          { direction: "forward", from: 3, count: 5 },
          { direction: "forward", from: 6, count: 4 },
          { direction: "forward", from: 9, count: 2 },
          { direction: "backward", from: -1, count: 3 },
          { direction: "backward", from: 4, count: 2 },
          { direction: "backward", from: 1, count: 5 },
          { direction: "backward", from: 10, count: 2 }
        ] as const
        for (const r of requests) {
          const request = { stream: "p", ...r }
          const observed = yield* clients.readStream(request)
          const page =
            r.direction === "forward"
              ? model.readForward("p", r.from, r.count)
              : model.readBackward("p", r.from, r.count)
          if (observed._tag !== "Success" || page._tag !== "Success")
            return expect.fail(`${observed._tag} / ${page._tag}`)
          expect({ request, paging: observed.paging }).toEqual({ request, paging: expectedFeedPaging(request, page) })
          expect(observed.events.map((e) => e.eventNumber)).toEqual(page.events.map((e) => e.eventNumber))
        }
      })
    )
  )
})

describe("replies no operation expects", () => {
  const answering = (reply: Reply) => httpStore(() => Effect.succeed(reply))
  const failure = (reply: Reply) => Effect.flip(answering(reply).append("s", -2, [event({})]))

  it.effect("a 5xx is indeterminate (writes refused after a disk error too: the node heals by itself)", () =>
    Effect.gen(function* () {
      expect(yield* failure({ status: 507, reason: "Insufficient Storage", headers: {} })).toMatchObject({
        _tag: "Indeterminate"
      })
      expect(yield* failure({ status: 500, reason: "checksum mismatch at 1234", headers: {} })).toMatchObject({
        _tag: "Indeterminate"
      })
      expect(yield* failure({ status: 503, reason: "Service Unavailable", headers: {} })).toMatchObject({
        _tag: "Indeterminate"
      })
      expect(yield* failure({ status: 408, headers: {} })).toMatchObject({ _tag: "Indeterminate" })
      expect(
        yield* failure({
          status: 400,
          reason: "Bad Request",
          headers: {},
          body: "a write of 600 bytes does not fit in a chunk of 512 bytes"
        })
      ).toMatchObject({ _tag: "Indeterminate" })
    })
  )

  it.effect("a defect, a 401, a validation 400 or a malformed answer fails the run", () =>
    Effect.gen(function* () {
      expect(yield* failure({ status: 500, reason: "Internal Server Error: boom", headers: {} })).toMatchObject({
        _tag: "Unexpected"
      })
      expect(yield* failure({ status: 401, reason: "Unauthorized", headers: {} })).toMatchObject({ _tag: "Unexpected" })
      expect(
        yield* failure({ status: 400, reason: "Bad Request", headers: {}, body: "Write request body invalid." })
      ).toMatchObject({ _tag: "Unexpected" })
      expect(yield* failure({ status: 201, headers: { Location: "http://h/streams/other/3" } })).toMatchObject({
        _tag: "Unexpected"
      })
      expect(
        yield* failure({
          status: 400,
          reason: "Wrong expected EventNumber",
          headers: { "Kurrent-CurrentVersion": "3", "ES-CurrentVersion": "4" }
        })
      ).toMatchObject({ _tag: "Unexpected" })
      const read = yield* Effect.flip(
        answering({ status: 200, headers: {}, body: '{"entries": 3}' }).readStream({
          stream: "s",
          direction: "forward",
          from: 0,
          count: 1
        })
      )
      expect(read).toMatchObject({ _tag: "Unexpected" })
    })
  )
})
