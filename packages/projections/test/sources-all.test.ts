// A `fromAll` source over a real store: which records of the log a projection sees, in which order, and the
// positions it moves through (commit = prepare = the record's log position).
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { framedLength } from "@vellum/storage"
import { makeSourceReader, type CheckpointTag } from "../src/index.js"
import {
  append,
  appendLink,
  fromAll,
  hardDelete,
  openStore,
  readToEnd,
  seen,
  setMetadata,
  softDelete,
  storageConfig
} from "./sourcesSupport.js"

const plain = { validateContent: true, deletions: false }

describe("fromAll", () => {
  it.scoped("reads non-$ streams and the metastreams of non-$ streams, in log order", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "a")
      yield* append(store, "$system")
      yield* append(store, "b")
      yield* setMetadata(store, "a", `{"x":1}`)
      yield* setMetadata(store, "$system", `{"x":1}`)
      yield* append(store, "a")
      const { items } = yield* readToEnd(makeSourceReader(store, fromAll(), plain), 100)
      expect(seen(items)).toEqual(["a#0", "b#0", "$$a#0", "a#1"])
      expect(items.map((item) => item.partitionStream)).toEqual(["a", "b", "a", "a"])
      expect(items.every((item) => item.link === undefined && item.category === null)).toBe(true)
    })
  )

  it.scoped("leaves links out, or gives them unresolved with $includeLinks", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "a")
      yield* appendLink(store, "b", "0@a")
      const without = yield* readToEnd(makeSourceReader(store, fromAll(), plain), 100)
      expect(seen(without.items)).toEqual(["a#0"])
      const withLinks = yield* readToEnd(makeSourceReader(store, fromAll({}, { includeLinks: true }), plain), 100)
      expect(seen(withLinks.items)).toEqual(["a#0", "b#0"])
      const link = withLinks.items[1]!
      expect(link.event.eventType).toBe("$>")
      expect(link.event.data.toString()).toBe("0@a")
      expect(link.link).toBeUndefined()
      expect(link.partitionStream).toBe("b")
    })
  )

  it.scoped("with handled types only, gives those types of non-$ streams (no metastream events)", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "a", { type: "wanted" })
      yield* append(store, "a", { type: "other" })
      yield* append(store, "$system", { type: "wanted" })
      yield* setMetadata(store, "a", `{"x":1}`)
      yield* append(store, "b", { type: "wanted" })
      const byType = fromAll({ allEvents: false, events: ["wanted", "$metadata"] })
      const { items } = yield* readToEnd(makeSourceReader(store, byType, plain), 100)
      expect(seen(items)).toEqual(["a#0", "b#0"])
    })
  )

  it.scoped("drops JSON events whose data is empty or no JSON, and moves past them", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "a", { data: "" })
      yield* append(store, "a", { data: "{not json" })
      yield* append(store, "a", { data: "not json either", isJson: false })
      const last = yield* append(store, "a", { data: "{not json" })
      const checked = yield* Effect.orDie(
        makeSourceReader(store, fromAll(), plain).read({ kind: "position", phase: 0, commit: 0, prepare: -1 }, 100)
      )
      expect(seen(checked.items)).toEqual(["a#2"])
      expect(checked.next).toEqual({ kind: "position", phase: 0, commit: last, prepare: last })
      const unchecked = yield* readToEnd(
        makeSourceReader(store, fromAll(), { validateContent: false, deletions: false }),
        100
      )
      expect(seen(unchecked.items)).toEqual(["a#0", "a#1", "a#2", "a#3"])
    })
  )

  it.scoped("shows deletions as the events they are, unless deletions are notified", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "hard")
      yield* append(store, "soft")
      yield* append(store, "$sys")
      yield* hardDelete(store, "hard")
      yield* softDelete(store, "soft")
      yield* hardDelete(store, "$sys")
      const asEvents = yield* readToEnd(makeSourceReader(store, fromAll(), plain), 100)
      expect(asEvents.items.map((item) => `${item.kind}:${item.event.stream}:${item.event.eventType}`)).toEqual([
        "event:hard:thing",
        "event:soft:thing",
        "event:hard:$streamDeleted",
        "event:$$soft:$metadata"
      ])
      const notified = yield* readToEnd(
        makeSourceReader(store, fromAll({ byStream: true }), { validateContent: true, deletions: true }),
        100
      )
      expect(notified.items.map((item) => `${item.kind}:${item.partitionStream}:${item.event.eventType}`)).toEqual([
        "event:hard:thing",
        "event:soft:thing",
        "deleted:hard:$streamDeleted",
        "deleted:soft:$metadata"
      ])
    })
  )

  it.scoped("positions: starts at C:0/P:-1, each item at its record's position, never given again", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      const first = yield* append(store, "a")
      const second = yield* append(store, "a")
      const reader = makeSourceReader(store, fromAll(), plain)
      expect(reader.startTag).toEqual({ kind: "position", phase: 0, commit: 0, prepare: -1 })
      const batch = yield* Effect.orDie(reader.read(reader.startTag, 1))
      expect(batch.items.map((item) => item.tag)).toEqual([
        { kind: "position", phase: 0, commit: first, prepare: first }
      ])
      expect(batch.items[0]!.logPosition).toBe(first)
      expect(batch.atEnd).toBe(false)
      const after = yield* Effect.orDie(reader.read(batch.next, 10))
      expect(after.items.map((item) => item.event.logPosition)).toEqual([second])
      expect(after.atEnd).toBe(true)
      const again = yield* Effect.orDie(reader.read(after.next, 10))
      expect(again.items).toEqual([])
      expect(again.atEnd).toBe(true)
    })
  )

  it.scoped("a position between two records resumes at the next record", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      const first = yield* append(store, "a")
      const second = yield* append(store, "a")
      const reader = makeSourceReader(store, fromAll(), plain)
      const between: CheckpointTag = { kind: "position", phase: 0, commit: first + 1, prepare: first + 1 }
      const batch = yield* Effect.orDie(reader.read(between, 10))
      expect(batch.items.map((item) => item.event.logPosition)).toEqual([second])
    })
  )

  it.scoped("a batch of filtered records is empty, moves on, and counts the bytes it passed", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      yield* append(store, "$x")
      yield* append(store, "$x")
      const last = yield* append(store, "$x")
      const reader = makeSourceReader(store, fromAll(), plain)
      const records = yield* Effect.orDie(store.readAllForward(0, 100))
      const systemBytes = records.events
        .filter((resolved) => resolved.event!.stream === "$x")
        .reduce((sum, resolved) => sum + framedLength(resolved.event!), 0)
      const batch = yield* Effect.orDie(reader.read(reader.startTag, 10))
      expect(batch.items).toEqual([])
      expect(batch.next).toEqual({ kind: "position", phase: 0, commit: last, prepare: last })
      expect(batch.atEnd).toBe(true)
      expect(batch.skippedBytes).toBeGreaterThanOrEqual(systemBytes)
      expect(batch.logPosition).toBe(yield* store.committedPosition)
      expect(reader.touches(["anything"])).toBe(true)
    })
  )

  it.scoped("passes over at most a page of filtered records before answering, empty and not at the end", () =>
    Effect.gen(function* () {
      const store = yield* openStore({ ...storageConfig, maxReadCount: 3 })
      for (let i = 0; i < 8; i++) yield* append(store, "$x")
      yield* append(store, "a")
      const reader = makeSourceReader(store, fromAll(), plain)
      const batch = yield* Effect.orDie(reader.read(reader.startTag, 1))
      expect(batch.items).toEqual([])
      expect(batch.atEnd).toBe(false)
      expect(batch.next).not.toEqual(reader.startTag)
      expect(seen((yield* readToEnd(reader, 1, batch.next)).items)).toEqual(["a#0"])
    })
  )

  it.scoped("logPosition is where a cut batch stopped reading", () =>
    Effect.gen(function* () {
      const store = yield* openStore()
      const first = yield* append(store, "a")
      const second = yield* append(store, "a")
      const batch = yield* Effect.orDie(
        makeSourceReader(store, fromAll(), plain).read({ kind: "position", phase: 0, commit: first, prepare: first }, 1)
      )
      expect(batch.items.map((item) => item.logPosition)).toEqual([second])
      expect(batch.logPosition).toBeGreaterThan(second)
      expect(batch.logPosition).toBeLessThanOrEqual(yield* store.committedPosition)
    })
  )
})
