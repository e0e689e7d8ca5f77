// The model's answers to retries that overlap an earlier append wholly or in part, under each expected
// version, and what a restart leaves the event-id cache when an id was written twice.
import { describe, expect, it } from "vitest"
import {
  ExpectedAny,
  ExpectedNoStream,
  ExpectedStreamExists,
  StoreModel,
  decideCommit,
  type Decision,
  type ProposedModelEvent
} from "../src/model.js"

const event = (eventId: string, data = "{}"): ProposedModelEvent => ({
  eventId,
  eventType: "E",
  isJson: true,
  data: Buffer.from(data),
  metadata: new Uint8Array(0)
})

/** Writes the ids to `stream` as one Ok append. */
const write = (model: StoreModel, stream: string, ids: ReadonlyArray<string>, data = "{}") =>
  model.applyAppend(
    stream,
    { _tag: "Ok", current: model.eventsOf(stream).length - 1, softDeleted: model.isSoftDeleted(stream) },
    ids.map((id) => event(id, data)),
    0
  )

const decide = (model: StoreModel, expected: number, ids: ReadonlyArray<string>, stream = "s"): Decision =>
  decideCommit(model.view(), stream, expected, ids)

const idempotent = (first: number, last: number): Decision => ({ _tag: "Idempotent", first, last })
const wev = (current: number): Decision => ({ _tag: "WrongExpectedVersion", current })
const ok = (current: number, softDeleted = false): Decision => ({ _tag: "Ok", current, softDeleted })

/** s holds a, b, c, d at 0..3; o holds z at 0. */
const fourEvents = () => {
  const model = new StoreModel(10_000)
  write(model, "s", ["a", "b", "c", "d"])
  write(model, "o", ["z"])
  return model
}

describe("retries under Any and StreamExists: the event-id cache decides", () => {
  for (const expected of [ExpectedAny, ExpectedStreamExists]) {
    it(`every id cached for the stream: the original numbers, first and last as sent (${expected})`, () => {
      const model = fourEvents()
      expect(decide(model, expected, ["a", "b", "c", "d"])).toEqual(idempotent(0, 3))
      expect(decide(model, expected, ["a", "b"])).toEqual(idempotent(0, 1))
      expect(decide(model, expected, ["c", "d"])).toEqual(idempotent(2, 3))
      expect(decide(model, expected, ["b", "c"])).toEqual(idempotent(1, 2))
      expect(decide(model, expected, ["c", "d", "a"])).toEqual(idempotent(2, 0))
    })

    it(`the first id cached and a later one not: corrupted idempotency, a wrong version (${expected})`, () => {
      const model = fourEvents()
      expect(decide(model, expected, ["a", "b", "c", "d", "new"])).toEqual(wev(3))
      expect(decide(model, expected, ["a", "new", "d"])).toEqual(wev(3))
      // An id cached for another stream counts as not cached.
      expect(decide(model, expected, ["a", "z"])).toEqual(wev(3))
    })

    it(`the first id not cached for the stream: written, whatever the later ids (${expected})`, () => {
      const model = fourEvents()
      expect(decide(model, expected, ["new", "a", "b"])).toEqual(ok(3))
      expect(decide(model, expected, ["z", "a"])).toEqual(ok(3))
    })
  }
})

describe("retries under an explicit version: the stored events after it decide", () => {
  it("ids matching the events stored from N+1: the original numbers", () => {
    const model = fourEvents()
    expect(decide(model, ExpectedNoStream, ["a", "b"])).toEqual(idempotent(0, 1))
    expect(decide(model, 1, ["c", "d"])).toEqual(idempotent(2, 3))
    expect(decide(model, 0, ["b", "c"])).toEqual(idempotent(1, 2))
  })

  it("the first id not stored at N+1: a wrong version, whatever the later ids", () => {
    const model = fourEvents()
    expect(decide(model, ExpectedNoStream, ["b", "c"])).toEqual(wev(3))
    expect(decide(model, 0, ["new", "c"])).toEqual(wev(3))
    expect(decide(model, 0, ["c", "b"])).toEqual(wev(3))
  })

  it("the first id stored at N+1, a later one not or past the end: corrupted idempotency, a wrong version", () => {
    const model = fourEvents()
    expect(decide(model, ExpectedNoStream, ["a", "new", "c"])).toEqual(wev(3))
    expect(decide(model, 1, ["c", "d", "new"])).toEqual(wev(3))
  })

  it("the current version writes the ids again; a later one is a wrong version", () => {
    const model = fourEvents()
    expect(decide(model, 3, ["a", "b"])).toEqual(ok(3))
    expect(decide(model, 4, ["a"])).toEqual(wev(3))
  })

  it("NoStream on a soft-deleted stream recreates it when the first id is not stored first", () => {
    const model = fourEvents()
    model.softDelete("s", ExpectedAny, 0)
    expect(decide(model, ExpectedNoStream, ["new", "a"])).toEqual(ok(3, true))
    expect(decide(model, ExpectedNoStream, ["b"])).toEqual(ok(3, true))
    expect(decide(model, ExpectedNoStream, ["a", "new"])).toEqual(wev(3))
    expect(decide(model, ExpectedNoStream, ["a", "b"])).toEqual(idempotent(0, 1))
  })
})

describe("an id written twice, over a restart", () => {
  it("while no scavenge may have removed the newest copy, a retry is answered as the newest", () => {
    const model = fourEvents()
    write(model, "s", ["new", "a"])
    expect(decide(model, ExpectedAny, ["a"])).toEqual(idempotent(5, 5))
    model.restart()
    expect(model.possibleDecisions("s", ExpectedAny, ["a"]).map((p) => p.decision)).toEqual([idempotent(5, 5)])
  })

  it("once the newest copy may be gone, the cache may hold the older copy instead", () => {
    const model = fourEvents()
    write(model, "s", ["new", "a"])
    model.beginScavenging()
    write(model, "$$s", ["m1"], '{"$maxCount":1}')
    // 0..4 may be removed; the newest copy of a (5) survives: nothing changes.
    model.restart()
    expect(model.possibleDecisions("s", ExpectedAny, ["a"]).map((p) => p.decision)).toEqual([idempotent(5, 5)])
    write(model, "s", ["x", "y"])
    // Now 5 may be gone too: the refill found 5, or 0, or (were both gone) neither.
    model.restart()
    const decisions = model.possibleDecisions("s", ExpectedAny, ["a"]).map((p) => p.decision)
    expect(decisions).toContainEqual(idempotent(5, 5))
    expect(decisions).toContainEqual(idempotent(0, 0))
    expect(decisions).toContainEqual(ok(7))
  })
})
