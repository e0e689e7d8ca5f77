// The simulator's scavenging checkers: what the model lets a scavenge remove, how reads of such events are
// compared, and the `$all` pass checks.
import { describe, expect, it } from "vitest"
import type { EventRecord } from "@vellum/storage"
import { AllScan } from "../src/allChecks.js"
import { StoreModel, type ProposedModelEvent } from "../src/model.js"
import { compareEventRead, compareStreamRead } from "../src/readChecks.js"
import type { ObservedEvent, ObservedStreamRead } from "../src/simStore.js"

let ids = 0
const proposed = (data: string, eventType = "E"): ProposedModelEvent => ({
  eventId: `id-${++ids}`,
  eventType,
  isJson: true,
  data: Buffer.from(data),
  metadata: new Uint8Array(0)
})

const append = (model: StoreModel, stream: string, data = "{}") =>
  model.applyAppend(
    stream,
    { _tag: "Ok", current: model.eventsOf(stream).length - 1, softDeleted: false },
    [proposed(data)],
    0
  )

const setMetadata = (model: StoreModel, stream: string, json: string) =>
  model.applyAppend(
    `$$${stream}`,
    { _tag: "Ok", current: model.eventsOf(`$$${stream}`).length - 1, softDeleted: false },
    [proposed(json, "$metadata")],
    0
  )

const discardable = (model: StoreModel, stream: string) =>
  model
    .eventsOf(stream)
    .filter((e) => model.isDiscardable(e))
    .map((e) => e.eventNumber)

const observed = (model: StoreModel, stream: string, numbers: ReadonlyArray<number>): Array<ObservedEvent> =>
  numbers.map((n) => {
    const e = model.eventsOf(stream)[n]!
    return { eventNumber: n, eventId: e.eventId!, eventType: e.eventType, data: e.data }
  })

describe("the model under scavenging", () => {
  it("lets a scavenge remove only what reads hid at some state since scavenging began", () => {
    const model = new StoreModel()
    for (let i = 0; i < 5; i++) append(model, "s")
    setMetadata(model, "s", '{"$tb":2}')
    setMetadata(model, "s", '{"owner":"x"}')
    // Hidden (by $tb) only before any scavenge could run: nothing may go.
    model.beginScavenging()
    expect(discardable(model, "s")).toEqual([])
    setMetadata(model, "s", '{"$maxCount":2}')
    expect(discardable(model, "s")).toEqual([0, 1, 2])
    // Relaxed again: reads show 0..4, yet 0..2 may already be gone.
    setMetadata(model, "s", '{"owner":"y"}')
    expect(model.readForward("s", 0, 10)._tag).toBe("Success")
    expect(discardable(model, "s")).toEqual([0, 1, 2])
    // The metastream keeps only its last event ($maxCount 1).
    expect(discardable(model, "$$s")).toEqual([0, 1, 2])
  })

  it("a hard delete makes every event discardable, never the tombstone", () => {
    const model = new StoreModel()
    model.beginScavenging()
    append(model, "h")
    append(model, "h")
    const { written } = model.hardDelete("h", 1, 0)
    expect(discardable(model, "h")).toEqual([0, 1])
    expect(model.isDiscardable(written[0]!)).toBe(false)
  })

  it("an explicit-version retry may find its stored events removed (idempotent or wrong version)", () => {
    const model = new StoreModel()
    model.beginScavenging()
    const batch = proposed("{}")
    model.applyAppend("r", { _tag: "Ok", current: -1, softDeleted: false }, [batch], 0)
    append(model, "r")
    append(model, "r")
    setMetadata(model, "r", '{"$maxCount":1}')
    const tags = model
      .possibleDecisions("r", -1, [batch.eventId])
      .map((p) => p.decision._tag)
      .sort()
    expect(tags).toEqual(["Idempotent", "WrongExpectedVersion"])
  })
})

describe("reads of events a scavenge may have removed", () => {
  const model = new StoreModel()
  for (let i = 0; i < 6; i++) append(model, "s")
  model.beginScavenging()
  setMetadata(model, "s", '{"$maxCount":3}')
  setMetadata(model, "s", "{}")
  const request = { stream: "s", direction: "forward", from: 0, count: 10 } as const
  const page = (numbers: ReadonlyArray<number>): ObservedStreamRead => ({
    _tag: "Success",
    events: observed(model, "s", numbers),
    paging: { via: "store", nextEventNumber: 6, lastEventNumber: 5, isEndOfStream: true }
  })

  it("may lack any of them", () => {
    expect(compareStreamRead(model, request, page([0, 1, 2, 3, 4, 5]), model.readForward("s", 0, 10))).toBeUndefined()
    expect(compareStreamRead(model, request, page([1, 3, 4, 5]), model.readForward("s", 0, 10))).toBeUndefined()
    expect(compareEventRead(model, { _tag: "NotFound" }, model.readEvent("s", 1))).toBeUndefined()
  })

  it("never lacks an event no scavenge may remove, nor shows one out of order", () => {
    expect(compareStreamRead(model, request, page([0, 1, 2, 4, 5]), model.readForward("s", 0, 10))).toMatch(
      /s#3 is missing/
    )
    expect(compareStreamRead(model, request, page([1, 0, 3, 4, 5]), model.readForward("s", 0, 10))).toMatch(
      /s#3 is missing/
    )
    expect(compareStreamRead(model, request, page([0, 1, 2, 3, 4, 5, 5]), model.readForward("s", 0, 10))).toMatch(
      /#5 is shown out of place/
    )
    expect(compareEventRead(model, { _tag: "NotFound" }, model.readEvent("s", 4))).toMatch(/NotFound/)
  })
})

describe("a pass over $all", () => {
  const record = (
    stream: string,
    eventNumber: number,
    logPosition: number,
    payload?: { c: number; s: number; i: number; n: number }
  ): EventRecord => ({
    kind: 1,
    logPosition,
    flags: 0,
    eventNumber,
    createdMicros: 0,
    eventId: `${stream}-${eventNumber}-${logPosition}`,
    stream,
    eventType: payload === undefined ? "other" : "E",
    data: Buffer.from(JSON.stringify(payload ?? {})),
    metadata: Buffer.alloc(0)
  })
  const run = (strict: boolean, records: ReadonlyArray<EventRecord>) => {
    const scan = new AllScan(strict)
    for (const r of records) {
      const problem = scan.event(r)
      if (problem !== undefined) return problem
    }
    return scan.end()
  }

  it("never shows a record twice or out of order", () => {
    expect(run(false, [record("a", 0, 10), record("a", 1, 10)])).toMatch(/goes back/)
    expect(run(false, [record("a", 1, 10), record("a", 0, 20)])).toMatch(/a#0 after #1/)
    expect(run(false, [record("a", 0, 10), record("b", 0, 20), record("a", 0, 30)])).toMatch(/a#0 twice/)
  })

  it("keeps what survives of an append contiguous; a retried append's copy is another write", () => {
    const p = (i: number) => ({ c: 1, s: 7, i, n: 3 })
    expect(run(false, [record("a", 1, 10, p(1)), record("a", 2, 20, p(2))])).toBeUndefined()
    expect(run(true, [record("a", 1, 10, p(1)), record("a", 2, 20, p(2))])).toMatch(/starts at its event 1/)
    expect(run(false, [record("a", 0, 10, p(0)), record("x", 0, 20), record("a", 2, 30, p(2))])).toMatch(/resumes/)
    expect(
      run(false, [record("a", 0, 10, p(0)), record("x", 0, 20), record("a", 3, 30, p(0)), record("a", 4, 40, p(1))])
    ).toBeUndefined()
  })

  it("lacks only events a scavenge may remove", () => {
    const model = new StoreModel()
    model.beginScavenging()
    append(model, "s")
    append(model, "s")
    setMetadata(model, "s", '{"$maxCount":1}')
    const scan = new AllScan(false)
    const last = model.eventsOf("s")[1]!
    scan.event({ ...record("s", 1, 50), eventId: last.eventId! })
    expect(scan.missingFrom(model, model.eventsOf("s"))).toBeUndefined()
    expect(new AllScan(false).missingFrom(model, model.eventsOf("s"))).toMatch(/lacks s#1/)
  })
})
