// Stream sources over a real store: fromStream, fromStreams (merged in log order) and a single fromCategory
// (its `$ce-` stream), links resolved, positions listing every source stream.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeSourceReader } from "../src/index.js"
import {
  append,
  appendLink,
  definition,
  hardDelete,
  openStore,
  readToEnd,
  seen,
  setMetadata,
  softDelete,
  storageConfig
} from "./sourcesSupport.js"

const plain = { validateContent: true, deletions: false }
const fromStreams = (...streams: Array<string>) => definition({ streams })
const fromCategory = (category: string, changes = {}) => definition({ categories: [category], ...changes })

describe("fromStream", () => {
  it.scoped("reads the stream in order, resolving links (the handler sees the target, the link alongside)", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "target", { type: "created" })
      yield* append(store, "s", { type: "own" })
      yield* appendLink(store, "s", "0@target", `{"note":1}`)
      yield* append(store, "other")
      const reader = makeSourceReader(store, fromStreams("s"), plain)
      expect(reader.startTag).toEqual({ kind: "streams", phase: 0, streams: [["s", -1]] })
      const { items } = yield* readToEnd(reader, 100)
      expect(seen(items)).toEqual(["s#0", "target#0"])
      const linked = items[1]!
      expect(linked.event.eventType).toBe("created")
      expect(linked.link?.stream).toBe("s")
      expect(linked.link?.eventNumber).toBe(1)
      expect(linked.logPosition).toBe(linked.link?.logPosition)
      expect(linked.partitionStream).toBe("target")
      expect(items.map((item) => item.tag)).toEqual([
        { kind: "streams", phase: 0, streams: [["s", 0]] },
        { kind: "streams", phase: 0, streams: [["s", 1]] }
      ])
    })
  )

  it.scoped("drops a link whose target cannot be read, moving past it", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* appendLink(store, "s", "5@nowhere")
      yield* append(store, "gone")
      yield* appendLink(store, "s", "0@gone")
      yield* hardDelete(store, "gone")
      const batch = yield* Effect.orDie(
        makeSourceReader(store, fromStreams("s"), plain).read({ kind: "streams", phase: 0, streams: [["s", -1]] }, 10)
      )
      expect(batch.items).toEqual([])
      expect(batch.next).toEqual({ kind: "streams", phase: 0, streams: [["s", 1]] })
      expect(batch.atEnd).toBe(true)
      expect(batch.skippedBytes).toBeGreaterThan(0)
    })
  )

  it.scoped("a link reaching a deletion record is no event", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* setMetadata(store, "x", `{"$tb":9223372036854775807}`)
      yield* setMetadata(store, "y", `{"$tb":1}`)
      yield* appendLink(store, "s", "0@$$x")
      yield* appendLink(store, "s", "0@$$y")
      const { items } = yield* readToEnd(makeSourceReader(store, fromStreams("s"), plain), 10)
      expect(seen(items)).toEqual(["$$y#0"])
      expect(items[0]!.partitionStream).toBe("y")
    })
  )

  it.scoped("filters by the target's type and content", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "t", { type: "wanted", data: "{bad" })
      yield* append(store, "t", { type: "wanted" })
      yield* append(store, "t", { type: "other" })
      for (const n of [0, 1, 2]) yield* appendLink(store, "s", `${n}@t`)
      const byType = definition({ streams: ["s"], allEvents: false, events: ["wanted"] })
      const { items, next } = yield* readToEnd(makeSourceReader(store, byType, plain), 100)
      expect(seen(items)).toEqual(["t#1"])
      expect(next).toEqual({ kind: "streams", phase: 0, streams: [["s", 2]] })
    })
  )

  it.scoped("a stream that does not exist, or was deleted, is at its end with nothing", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "deleted")
      yield* hardDelete(store, "deleted")
      yield* append(store, "soft")
      yield* softDelete(store, "soft")
      for (const stream of ["missing", "deleted", "soft"]) {
        const reader = makeSourceReader(store, fromStreams(stream), plain)
        const batch = yield* Effect.orDie(reader.read(reader.startTag, 10))
        expect(batch.items).toEqual([])
        expect(batch.atEnd).toBe(true)
        expect(batch.logPosition).toBe(yield* store.committedPosition)
      }
    })
  )

  it.scoped("touches only its own streams", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      const reader = makeSourceReader(store, fromStreams("a", "b"), plain)
      expect(reader.touches(["x", "b"])).toBe(true)
      expect(reader.touches(["x", "$$a"])).toBe(false)
      expect(makeSourceReader(store, fromCategory("c"), plain).touches(["$ce-c"])).toBe(true)
    })
  )
})

describe("fromStreams", () => {
  it.scoped("merges the streams in the order the log holds them, positions listing every stream", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "b")
      yield* append(store, "a")
      yield* append(store, "c")
      yield* append(store, "a")
      yield* append(store, "b")
      const reader = makeSourceReader(store, fromStreams("a", "b"), plain)
      expect(reader.startTag).toEqual({
        kind: "streams",
        phase: 0,
        streams: [
          ["a", -1],
          ["b", -1]
        ]
      })
      const { items } = yield* readToEnd(reader, 1)
      expect(seen(items)).toEqual(["b#0", "a#0", "a#1", "b#1"])
      expect(items.map((item) => item.tag.kind === "streams" && item.tag.streams)).toEqual([
        [
          ["a", -1],
          ["b", 0]
        ],
        [
          ["a", 0],
          ["b", 0]
        ],
        [
          ["a", 1],
          ["b", 0]
        ],
        [
          ["a", 1],
          ["b", 1]
        ]
      ])
    })
  )

  it.scoped("a full page of one stream holds back what another stream has after it", () =>
    Effect.gen(function* () {
      const store = yield* openStore({ ...storageConfig, maxReadCount: 2 })
      for (let i = 0; i < 3; i++) yield* append(store, "a")
      yield* append(store, "b")
      yield* append(store, "a")
      const reader = makeSourceReader(store, fromStreams("a", "b"), plain)
      const first = yield* Effect.orDie(reader.read(reader.startTag, 10))
      expect(seen(first.items)).toEqual(["a#0", "a#1", "a#2", "b#0", "a#3"])
      expect(first.atEnd).toBe(true)
    })
  )

  it.scoped("a single stream given to fromStreams reads as fromStream", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "t")
      yield* append(store, "s")
      yield* appendLink(store, "s", "0@t")
      const viaStreams = yield* readToEnd(makeSourceReader(store, definition({ streams: ["s", "s"] }), plain), 1)
      const viaStream = yield* readToEnd(makeSourceReader(store, fromStreams("s"), plain), 100)
      expect(seen(viaStreams.items)).toEqual(["s#0", "t#0"])
      expect(viaStreams.next).toEqual(viaStream.next)
    })
  )

  it.scoped("resumes after a position naming streams in another order, or missing one", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "a")
      yield* append(store, "b")
      yield* append(store, "a")
      const reader = makeSourceReader(store, fromStreams("a", "b"), plain)
      const batch = yield* Effect.orDie(reader.read({ kind: "streams", phase: 0, streams: [["a", 0]] }, 10))
      expect(seen(batch.items)).toEqual(["b#0", "a#1"])
    })
  )
})

describe("fromCategory (one)", () => {
  it.scoped("reads $ce-{category}: links only, resolved, with the category and the link's $o as partition", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "c-1", { type: "opened" })
      yield* append(store, "c-2", { type: "opened" })
      yield* appendLink(store, "$ce-c", "0@c-1", `{"$o":"c-1"}`)
      yield* append(store, "$ce-c", { type: "stray" })
      yield* appendLink(store, "$ce-c", "0@c-2", `{"$o":"recategorised"}`)
      const reader = makeSourceReader(store, fromCategory("c"), plain)
      expect(reader.startTag).toEqual({ kind: "streams", phase: 0, streams: [["$ce-c", -1]] })
      const { items, next } = yield* readToEnd(reader, 100)
      expect(seen(items)).toEqual(["c-1#0", "c-2#0"])
      expect(items.map((item) => item.category)).toEqual(["c", "c"])
      expect(items.map((item) => item.partitionStream)).toEqual(["c-1", "recategorised"])
      expect(next).toEqual({ kind: "streams", phase: 0, streams: [["$ce-c", 2]] })
    })
  )

  it.scoped("a deletion linked into the category is a notice for the deleted stream, or nothing", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "c-1")
      yield* append(store, "c-2")
      yield* appendLink(store, "$ce-c", "0@c-1", `{"$o":"c-1"}`)
      yield* appendLink(store, "$ce-c", "0@c-2", `{"$o":"c-2"}`)
      yield* hardDelete(store, "c-1")
      yield* appendLink(store, "$ce-c", "9223372036854775807@c-1", `{"$o":"c-1","$deleted":-1}`)
      yield* softDelete(store, "c-2")
      yield* appendLink(store, "$ce-c", "0@$$c-2", `{"$o":"c-2","$deleted":-1}`)
      yield* setMetadata(store, "c-3", `{"$tb":9223372036854775807}`)
      yield* appendLink(store, "$ce-c", "0@$$c-3", `{"$deleted":-1}`)
      const quiet = yield* readToEnd(makeSourceReader(store, fromCategory("c"), plain), 100)
      expect(seen(quiet.items)).toEqual([])
      const notified = yield* readToEnd(
        makeSourceReader(store, fromCategory("c", { byStream: true }), { validateContent: true, deletions: true }),
        100
      )
      expect(notified.items.map((item) => `${item.kind}:${item.partitionStream}`)).toEqual([
        "deleted:c-1",
        "deleted:c-2",
        "deleted:c-3"
      ])
      expect(notified.items[0]!.link?.stream).toBe("$ce-c")
      expect(notified.items[1]!.event.stream).toBe("$$c-2")
    })
  )
})
