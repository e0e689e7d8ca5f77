// `POST /projections/read-events`: a posted source definition and position read with a projection's filters,
// and the reasons a request cannot be read.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { parseSourceDefinitionJson, readEvents, type ReadEventsRequest } from "../src/index.js"
import { append, appendLink, definition, openStore } from "./sourcesSupport.js"

const request = (query: unknown, position: unknown = undefined, maxEvents = 10): ReadEventsRequest => ({
  query,
  position,
  maxEvents
})

describe("read-events", () => {
  it.scoped("reads fromAll after a $c/$p position, validating content, a position per event and overall", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      const first = yield* append(store, "a", { type: "one", data: `{"n":1}`, metadata: `{"m":1}` })
      yield* append(store, "a", { type: "bad", data: "{oops" })
      const third = yield* append(store, "b", { type: "two", data: "text", isJson: false })
      yield* append(store, "$sys")
      const all = yield* readEvents(store, request({ allStreams: true, allEvents: true }, { $c: 0, $p: -1 }))
      expect(all.events).toEqual([
        {
          eventStreamId: "a",
          eventNumber: 0,
          eventType: "one",
          data: `{"n":1}`,
          metadata: `{"m":1}`,
          linkMetadata: "",
          isJson: true,
          readerPosition: { kind: "position", phase: 0, commit: first, prepare: first }
        },
        {
          eventStreamId: "b",
          eventNumber: 0,
          eventType: "two",
          data: "text",
          metadata: "",
          linkMetadata: "",
          isJson: false,
          readerPosition: { kind: "position", phase: 0, commit: third, prepare: third }
        }
      ])
      expect(all.readerPosition.kind).toBe("position")
      const after = yield* readEvents(store, request({ allStreams: true, allEvents: true }, { c: first, p: first }))
      expect(after.events.map((event) => event.eventType)).toEqual(["two"])
      const long = yield* readEvents(
        store,
        request({ allStreams: true, allEvents: true }, { commitPosition: first, preparePosition: first })
      )
      expect(long.events.map((event) => event.eventType)).toEqual(["two"])
    })
  )

  it.scoped("stops at maxEvents, and the overall position continues from there", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      for (let i = 0; i < 5; i++) yield* append(store, "s")
      const query = { streams: ["s"], allEvents: true }
      const first = yield* readEvents(store, request(query, { $s: { s: -1 } }, 2))
      expect(first.events.map((event) => event.eventNumber)).toEqual([0, 1])
      expect(first.readerPosition).toEqual({ kind: "streams", phase: 0, streams: [["s", 1]] })
      const next = yield* readEvents(store, request(query, { streams: { s: 1 } }, 10))
      expect(next.events.map((event) => event.eventNumber)).toEqual([2, 3, 4])
      const short = yield* readEvents(store, request(query, { s: { s: 3 } }, 10))
      expect(short.events.map((event) => event.eventNumber)).toEqual([4])
    })
  )

  it.scoped("resolves links of stream sources and gives the link's metadata", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "c-1", { type: "opened" })
      yield* appendLink(store, "$ce-c", "0@c-1", `{"$o":"c-1"}`)
      const result = yield* readEvents(store, request({ categories: ["c"], allEvents: true }))
      expect(result.events.map((event) => [event.eventStreamId, event.eventType, event.linkMetadata])).toEqual([
        ["c-1", "opened", `{"$o":"c-1"}`]
      ])
      expect(result.readerPosition).toEqual({ kind: "streams", phase: 0, streams: [["$ce-c", 0]] })
    })
  )

  it.scoped("takes the definition leniently: names in any case, nulls and absent members at their defaults", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "a", { type: "x" })
      yield* append(store, "a", { type: "y" })
      const result = yield* readEvents(
        store,
        request(JSON.stringify({ AllStreams: true, events: ["y"], categories: null, options: null, extra: 1 }))
      )
      expect(result.events.map((event) => event.eventType)).toEqual(["y"])
    })
  )

  it.scoped("refuses what it cannot read, with a reason", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "a")
      const reasons = yield* Effect.forEach(
        [
          request("not json"),
          request({ allStreams: "yes", allEvents: true }),
          request({ streams: [1], allEvents: true }),
          request({ allStreams: true }),
          request({ allStreams: true, allEvents: true }, { $s: { a: 0 } }),
          request({ allStreams: true, allEvents: true }, "{oops"),
          request({ allStreams: true, allEvents: true }, { $ph: 1, $cp: true }),
          request({ streams: ["a"], allEvents: true }, { $s: { b: 0 } }),
          request({ streams: ["a"], allEvents: true }, { $c: 0, $p: -1 }),
          request({ allStreams: true, allEvents: true }, { $c: 0, $p: -1 }, 0),
          request({ allStreams: true, allEvents: true }, { $c: "0", $p: -1 })
        ],
        (r) => Effect.map(Effect.either(readEvents(store, r)), (e) => (Either.isLeft(e) ? e.left : undefined))
      )
      expect(reasons.map((reason) => reason?._tag)).toEqual(Array(11).fill("PrepareFault"))
      expect(reasons[3]).toEqual({ _tag: "PrepareFault", reason: "None of events are included" })
    })
  )
})

describe("source definition JSON", () => {
  it("reads every member, in any case, with defaults for the rest", () => {
    const parsed = parseSourceDefinitionJson({
      allevents: false,
      ALLSTREAMS: true,
      byStream: true,
      events: ["a"],
      options: { IncludeLinks: true, processingLag: 100, resultStreamName: "r", handlesDeletedNotifications: true }
    })
    expect(parsed).toEqual({
      definition: definition(
        { allEvents: false, allStreams: true, byStream: true, events: ["a"] },
        {
          includeLinks: true,
          processingLag: 100,
          resultStreamName: "r",
          handlesDeletedNotifications: true
        }
      )
    })
  })

  it("refuses members of the wrong type", () => {
    expect(parseSourceDefinitionJson({ options: [] })).toEqual({
      reason: "the source definition is not valid: 'options' must be an object"
    })
    expect(parseSourceDefinitionJson({ options: { processingLag: "5" } })).toEqual({
      reason: "the source definition is not valid: 'processingLag' must be an integer"
    })
    expect(parseSourceDefinitionJson([])).toEqual({ reason: "the query must be a source definition (a JSON object)" })
  })
})
