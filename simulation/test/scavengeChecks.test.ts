// The simulator's scavenging checkers: what the model lets a scavenge remove (hidden at a scavenge point,
// under the stream's state at that point), how reads of such events are
// compared, and the `$all` pass checks.
import { describe, expect, it } from "vitest"
import type { EventRecord } from "@vellum/storage"
import { AllScan } from "../src/allChecks.js"
import { EventTimes } from "../src/expiry.js"
import { StoreModel, type ProposedModelEvent } from "../src/model.js"
import { ScavengePoints } from "../src/scavengePoints.js"
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

/** A model whose scavenge rule is the learned-points one, with a clock for the writes (world ms). */
const timed = () => {
  const model = new StoreModel()
  const times = new EventTimes()
  const points = new ScavengePoints(model, times)
  model.discardRule = points
  /** A write sent at `sentMs` and acknowledged at `ackMs`. */
  const at = <A>(sentMs: number, write: () => A, ackMs = sentMs): A => {
    const op = {}
    times.sent(op, sentMs)
    const before = model.log.length
    const result = write()
    times.written(op, model.log.slice(before), ackMs)
    return result
  }
  /** A point the node wrote at `effectiveNowMs` (at log position `position`), seen now. */
  const point = (effectiveNowMs: number, position = 1_000_000) =>
    points.learn({ position, effectiveNowMicros: effectiveNowMs * 1000, seenSeq: times.nextSeq() })
  return { model, times, points, at, point }
}

describe("the model under scavenging", () => {
  it("lets nothing go before the node wrote a scavenge point", () => {
    const { model, at } = timed()
    for (let i = 0; i < 5; i++) at(1000, () => append(model, "s"))
    at(1000, () => setMetadata(model, "s", '{"$maxCount":1}'))
    model.beginScavenging()
    expect(discardable(model, "s")).toEqual([])
  })

  it("judges $maxCount from the stream's last event before the point, not its current one", () => {
    const { model, at, point } = timed()
    for (let i = 0; i < 5; i++) at(1000, () => append(model, "s"))
    at(1000, () => setMetadata(model, "s", '{"$maxCount":2}'))
    point(2000)
    for (let i = 0; i < 3; i++) at(3000, () => append(model, "s"))
    expect(discardable(model, "s")).toEqual([0, 1, 2])
    // Metadata written after the point does not count for it.
    at(3000, () => setMetadata(model, "s", '{"$maxCount":1}'))
    expect(discardable(model, "s")).toEqual([0, 1, 2])
    // Relaxed again: reads show everything, yet 0..2 may already be gone.
    at(3000, () => setMetadata(model, "s", '{"owner":"y"}'))
    expect(discardable(model, "s")).toEqual([0, 1, 2])
    // The metastream keeps only its last event before the point.
    expect(discardable(model, "$$s")).toEqual([])
    point(4000, 2_000_000)
    expect(discardable(model, "$$s")).toEqual([0, 1])
  })

  it("judges $maxAge at the point's EffectiveNow, whatever the clock says later", () => {
    const { model, at, point } = timed()
    at(1000, () => append(model, "a"))
    at(1500, () => setMetadata(model, "a", '{"$maxAge":2}'))
    at(3000, () => append(model, "a"))
    at(3500, () => append(model, "a"))
    // At 4.5 s only the event created at 1 s is older than 2 s (created < now − maxAge).
    point(4500)
    expect(discardable(model, "a")).toEqual([0])
    // A later point judges at its own EffectiveNow.
    point(5600, 2_000_000)
    expect(discardable(model, "a")).toEqual([0, 1, 2])
  })

  it("treats an event in flight at the point as possibly before it, until its position says otherwise", () => {
    const { model, at, point, points } = timed()
    for (let i = 0; i < 3; i++) at(1000, () => append(model, "f"))
    at(1000, () => setMetadata(model, "f", '{"$maxCount":1}'))
    const [inFlight] = at(1500, () => append(model, "f"), 2500)
    point(2000)
    expect(discardable(model, "f")).toEqual([0, 1, 2])
    points.learnPosition(inFlight!, 1_500_000)
    expect(discardable(model, "f")).toEqual([0, 1])
  })

  it("a hard delete before the point makes every event discardable, never the tombstone", () => {
    const { model, at, point } = timed()
    at(1000, () => append(model, "h"))
    at(1000, () => append(model, "h"))
    const { written } = at(1000, () => model.hardDelete("h", 1, 0))
    point(2000)
    expect(discardable(model, "h")).toEqual([0, 1])
    expect(model.isDiscardable(written[0]!)).toBe(false)
  })

  it("an explicit-version retry may find its stored events removed (idempotent or wrong version)", () => {
    const { model, at, point } = timed()
    const batch = proposed("{}")
    at(1000, () => model.applyAppend("r", { _tag: "Ok", current: -1, softDeleted: false }, [batch], 0))
    at(1000, () => append(model, "r"))
    at(1000, () => append(model, "r"))
    at(1000, () => setMetadata(model, "r", '{"$maxCount":1}'))
    point(2000)
    const tags = model
      .possibleDecisions("r", -1, [batch.eventId])
      .map((p) => p.decision._tag)
      .sort()
    expect(tags).toEqual(["Idempotent", "WrongExpectedVersion"])
  })
})

describe("reads of events a scavenge may have removed", () => {
  const { model, at, point } = timed()
  for (let i = 0; i < 6; i++) at(1000, () => append(model, "s"))
  at(1000, () => setMetadata(model, "s", '{"$maxCount":3}'))
  point(2000)
  at(3000, () => setMetadata(model, "s", "{}"))
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
    const { model, at, point } = timed()
    at(1000, () => append(model, "s"))
    at(1000, () => append(model, "s"))
    at(1000, () => setMetadata(model, "s", '{"$maxCount":1}'))
    point(2000)
    const scan = new AllScan(false)
    const last = model.eventsOf("s")[1]!
    scan.event({ ...record("s", 1, 50), eventId: last.eventId! })
    expect(scan.missingFrom(model, model.eventsOf("s"))).toBeUndefined()
    expect(new AllScan(false).missingFrom(model, model.eventsOf("s"))).toMatch(/lacks s#1/)
  })
})
