// `$maxAge` in the model: which pages a read may give, judged at any time between its send and its answer,
// with each event's creation known only between its write's send and its acknowledgement.
import { describe, expect, it } from "vitest"
import { EventTimes, expiredPrefix, possibleEventReads, possibleReads } from "../src/expiry.js"
import { StoreModel, parseModelMetadata } from "../src/model.js"

const setup = () => {
  const model = new StoreModel()
  const times = new EventTimes()
  let n = 0
  const write = (stream: string, sentMs: number, ackMs = sentMs, data = "{}") => {
    const op = {}
    times.sent(op, sentMs)
    const before = model.log.length
    model.applyAppend(
      stream,
      { _tag: "Ok", current: model.eventsOf(stream).length - 1, softDeleted: false },
      [{ eventId: `id-${++n}`, eventType: "E", isJson: true, data: Buffer.from(data), metadata: new Uint8Array(0) }],
      0
    )
    times.written(op, model.log.slice(before), ackMs)
  }
  // Events created at 1 s, 2 s, 3 s, 4 s; $maxAge 2 s.
  for (const t of [1000, 2000, 3000, 4000]) write("s", t)
  write("$$s", 4000, 4000, '{"$maxAge":2}')
  return { model, times, write }
}

const numbers = (page: ReturnType<typeof possibleReads>[number]) =>
  page._tag === "Success" ? page.events.map((e) => e.eventNumber) : page._tag

describe("$maxAge in the model", () => {
  it("parses $maxAge in whole seconds and ignores zero or less", () => {
    expect(parseModelMetadata(true, Buffer.from('{"$maxAge":7}')).maxAge).toBe(7)
    expect(parseModelMetadata(true, Buffer.from('{"$maxAge":0}')).maxAge).toBeUndefined()
    expect(parseModelMetadata(true, Buffer.from('{"$maxAge":1.5}'))).toEqual({})
  })

  it("hides events created before the read's time minus maxAge (strictly before)", () => {
    const { model, times } = setup()
    // At 5 s the events of 1 s and 2 s are older than 2 s; the one of 3 s is exactly 2 s old: still live.
    expect(expiredPrefix(model, times, "s", 5000, 5000)).toEqual([2, 2])
    const [page] = possibleReads(model, times, { stream: "s", direction: "forward", from: 0, count: 10 }, 5000, 5000)
    expect(numbers(page!)).toEqual([2, 3])
  })

  it("offers every expired prefix a read spanning the boundary may see", () => {
    const { model, times } = setup()
    const pages = possibleReads(model, times, { stream: "s", direction: "forward", from: 0, count: 10 }, 4500, 5500)
    expect(pages.map(numbers)).toEqual([[2, 3], [3]])
    expect(possibleEventReads(model, times, "s", 2, 4500, 5500).map((r) => r._tag)).toEqual(["Success", "NotFound"])
  })

  it("widens the boundary by the write's bracket between send and acknowledgement", () => {
    const { model, times, write } = setup()
    write("u", 1000, 3000)
    write("$$u", 3000, 3000, '{"$maxAge":1}')
    expect(expiredPrefix(model, times, "u", 3000, 3000)).toEqual([0, 1])
    expect(expiredPrefix(model, times, "u", 4001, 4001)).toEqual([1, 1])
  })

  it("pages forward to the first live event when a window has only expired ones", () => {
    const { model, times } = setup()
    const [page] = possibleReads(model, times, { stream: "s", direction: "forward", from: 0, count: 2 }, 5000, 5000)
    expect(page).toMatchObject({ events: [], nextEventNumber: 2, isEndOfStream: false })
    const [gone] = possibleReads(model, times, { stream: "s", direction: "forward", from: 0, count: 2 }, 9000, 9000)
    expect(gone).toMatchObject({ events: [], nextEventNumber: 4, isEndOfStream: true })
  })

  it("ends a backward read at a window that held expired events", () => {
    const { model, times } = setup()
    const [page] = possibleReads(model, times, { stream: "s", direction: "backward", from: 3, count: 3 }, 5000, 5000)
    expect(page).toMatchObject({ nextEventNumber: -1, isEndOfStream: true })
    expect(numbers(page!)).toEqual([3, 2])
    const [live] = possibleReads(model, times, { stream: "s", direction: "backward", from: 3, count: 2 }, 5000, 5000)
    expect(live).toMatchObject({ nextEventNumber: 1, isEndOfStream: false })
  })

  it("pages forward past live events a scavenge may have removed, up to the first that must be there", () => {
    const { model, times } = setup()
    // Event 2 may be gone (a scavenge point's state hid it); event 3 may not.
    model.discardRule = { isDiscardable: (e) => e.stream === "s" && e.eventNumber === 2, gone: () => {} }
    const pages = possibleReads(model, times, { stream: "s", direction: "forward", from: 0, count: 2 }, 5000, 5000)
    expect(pages.map((p) => (p._tag === "Success" ? p.nextEventNumber : p._tag))).toEqual([2, 3])
  })
})
