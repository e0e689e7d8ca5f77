// The output writer against a real store: what it stamps, how it starts streams (new, older epoch), whose
// streams it refuses, and what it skips after a restart.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import {
  encodeEmittedMetadata,
  multipleProjectionsReason,
  writtenFromOutsideReason
} from "../src/persisted/emittedMetadata.js"
import {
  appendRaw,
  at,
  causeOf,
  closeWriter,
  dataOf,
  emit,
  eventsOf,
  metadataOf,
  openStore,
  specOf,
  stampOf,
  startWriter,
  version0
} from "./outputSupport.js"

describe("output writer: streams", () => {
  it.scoped("writes each stream's events in order, stamped with the cause's position, version and ids", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(1, "corr-1"), [
        emit("a", `{"n":1}`),
        { ...emit("b", `{"n":2}`, "other"), extraMetadata: [["user", `"x"`]] },
        emit("a", `{"n":3}`)
      ])
      output.enqueue(causeOf(2), [emit("a", `{"n":4}`)])
      yield* output.flush
      expect(yield* dataOf(store, "a")).toEqual([`{"n":1}`, `{"n":3}`, `{"n":4}`])
      const [b] = yield* eventsOf(store, "b")
      expect(b).toMatchObject({ type: "other", isJson: true, data: `{"n":2}` })
      expect(b!.metadata).toBe(
        encodeEmittedMetadata(at(1), version0, {
          extra: [["user", `"x"`]],
          causedBy: causeOf(1).eventId,
          correlationId: "corr-1"
        })
      )
      expect((yield* eventsOf(store, "a")).map((event) => event.metadata)).toEqual([
        encodeEmittedMetadata(at(1), version0, { causedBy: causeOf(1).eventId, correlationId: "corr-1" }),
        encodeEmittedMetadata(at(1), version0, { causedBy: causeOf(1).eventId, correlationId: "corr-1" }),
        stampOf(2)
      ])
      expect(output.pendingEvents()).toBe(0)
      expect(output.fault()).toBeUndefined()
    })
  )

  it.scoped("a new $-stream is first made readable by all; a new stream of a user gets no metadata", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(1), [emit("$sys", "{}"), emit("user", "{}")])
      yield* output.flush
      expect(yield* metadataOf(store, "$sys")).toBe(`{"$acl":{"$r":"$all","$mr":"$all"}}`)
      expect(yield* metadataOf(store, "user")).toBe("")
    })
  )

  it.scoped(
    "a stream an older epoch wrote is truncated ($tb, its other metadata kept) before the new epoch writes",
    () =>
      Effect.gen(function* () {
        const store = yield* openStore
        yield* appendRaw(store, "a", [
          { data: "old-1", metadata: stampOf(1) },
          { data: "old-2", metadata: stampOf(2) }
        ])
        yield* Effect.orDie(store.setStreamMetadata("a", -1, Buffer.from(`{"$maxCount":50,"custom":"kept"}`)))
        const reset = { projectionId: 7, epoch: 3, version: 3 }
        const { output } = yield* startWriter(store, specOf({ version: reset }))
        // Position 1 again: the new epoch starts from the beginning, and skips nothing of the older one.
        output.enqueue(causeOf(1), [emit("a", "new-1")])
        yield* output.flush
        expect(yield* dataOf(store, "a")).toEqual(["new-1"])
        expect((yield* eventsOf(store, "a"))[0]!.number).toBe(2)
        expect(JSON.parse(yield* metadataOf(store, "a"))).toEqual({ $maxCount: 50, custom: "kept", $tb: 2 })
      })
  )

  it.scoped("a stream truncated already (a reset's run stopped after its metadata) is not truncated again", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      yield* appendRaw(store, "a", [{ data: "old-1", metadata: stampOf(1) }])
      yield* Effect.orDie(store.setStreamMetadata("a", -1, Buffer.from(`{"$tb":1}`)))
      const { output } = yield* startWriter(store, specOf({ version: { projectionId: 7, epoch: 3, version: 3 } }))
      output.enqueue(causeOf(1), [emit("a", "new-1")])
      yield* output.flush
      expect(yield* dataOf(store, "a")).toEqual(["new-1"])
      expect((yield* Effect.orDie(store.getStreamMetadata("a"))).metaLastEventNumber).toBe(0)
    })
  )

  it.scoped("a stream written by the same epoch under an older version is continued, not truncated", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      yield* appendRaw(store, "a", [{ data: "v0", metadata: stampOf(1) }])
      const updated = { projectionId: 7, epoch: 0, version: 4 }
      const { output } = yield* startWriter(store, specOf({ version: updated }))
      output.enqueue(causeOf(2), [emit("a", "v4")])
      yield* output.flush
      expect(yield* dataOf(store, "a")).toEqual(["v0", "v4"])
      expect(yield* metadataOf(store, "a")).toBe("")
    })
  )

  it.scoped("a stream whose last event another projection wrote faults the run", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      yield* appendRaw(store, "a", [
        { data: "theirs", metadata: stampOf(1, { projectionId: 9, epoch: 0, version: 0 }) }
      ])
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(1), [emit("a", "ours")])
      const reason = multipleProjectionsReason("a", 9, 7)
      expect(yield* Effect.flip(output.flush)).toEqual({ _tag: "OutputFault", reason })
      expect(output.fault()?.reason).toBe(reason)
      expect(yield* dataOf(store, "a")).toEqual(["theirs"])
    })
  )

  it.scoped("a stream whose last event is not stamped by a projection faults the run", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      yield* appendRaw(store, "a", [{ data: "{}", metadata: "" }])
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(1), [emit("a", "ours")])
      expect((yield* Effect.flip(output.flush)).reason).toBe(writtenFromOutsideReason("a", 7))
    })
  )

  it.scoped("an append that finds the stream moved (written from outside) faults the run", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(1), [emit("a", "ours-1")])
      yield* output.flush
      yield* appendRaw(store, "a", [{ data: "outside", metadata: stampOf(1) }])
      output.enqueue(causeOf(2), [emit("a", "ours-2")])
      const fault = yield* Effect.flip(output.flush)
      expect(fault.reason).toBe(
        "The 'a' stream has been written to from the outside. Expected Version: 0, Current Version: 1."
      )
      expect(yield* dataOf(store, "a")).toEqual(["ours-1", "outside"])
    })
  )

  it.scoped("past the idle streams kept, a stream with nothing left to do is read again before its next write", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const { output } = yield* startWriter(store, specOf(), store, 0)
      output.enqueue(causeOf(1), [emit("a", "ours-1")])
      yield* output.flush
      // Had the stream stayed open, its expected version would now be wrong (see the test above).
      yield* appendRaw(store, "a", [{ data: "ours-too", metadata: stampOf(2) }])
      output.enqueue(causeOf(3), [emit("a", "ours-3")])
      yield* output.flush
      expect(yield* dataOf(store, "a")).toEqual(["ours-1", "ours-too", "ours-3"])
    })
  )

  it.scoped("a deleted stream faults the run", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      yield* appendRaw(store, "a", [{ data: "{}", metadata: stampOf(1) }])
      yield* Effect.orDie(store.deleteStream("a", -2, true))
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(2), [emit("a", "ours")])
      expect((yield* Effect.flip(output.flush)).reason).toBe("Stream : a is deleted. Cannot emit events to it")
    })
  )

  it.scoped("writes caused at or before the stream's last stamped position of this epoch are skipped", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const first = yield* startWriter(store)
      for (let n = 1; n <= 3; n++) first.output.enqueue(causeOf(n), [emit("a", `a${n}`), emit("b", `b${n}`)])
      yield* first.output.flush
      yield* closeWriter(first.scope)
      // A restart from a checkpoint at position 1: items 2 and 3 come again, then new ones.
      const second = yield* startWriter(store)
      for (let n = 2; n <= 5; n++) second.output.enqueue(causeOf(n), [emit("a", `a${n}`)])
      second.output.enqueue(causeOf(6), [emit("b", "b6")])
      yield* second.output.flush
      expect(yield* dataOf(store, "a")).toEqual(["a1", "a2", "a3", "a4", "a5"])
      expect(yield* dataOf(store, "b")).toEqual(["b1", "b2", "b3", "b6"])
      expect(second.output.pendingEvents()).toBe(0)
    })
  )

  it.scoped("causes only move forward", () =>
    Effect.gen(function* () {
      const store = yield* openStore
      const { output } = yield* startWriter(store)
      output.enqueue(causeOf(2), [])
      expect(Either.isLeft(Either.try(() => output.enqueue(causeOf(2), [emit("a", "{}")])))).toBe(true)
      expect(Either.isLeft(Either.try(() => output.enqueue(causeOf(1), [])))).toBe(true)
      output.enqueue(causeOf(3), [emit("a", "{}")])
      yield* output.flush
      expect(yield* dataOf(store, "a")).toEqual(["{}"])
    })
  )
})
