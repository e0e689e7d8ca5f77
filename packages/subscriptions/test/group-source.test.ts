import { describe, expect, it } from "vitest"
import { ev, evs, ids, makeGroup, ofTag } from "./groupFixtures.js"

describe("a group taking events from its source", () => {
  it("reads in batches of readBatchSize from its start, one read at a time", () => {
    const group = makeGroup({ readBatchSize: 3, bufferSize: 10 }, { _tag: "At", position: 5 })
    expect(group.start(0)).toEqual([{ _tag: "Read", from: { _tag: "At", position: 5 }, count: 3 }])
    expect(ofTag(group.tick(1), "Read")).toEqual([])
    expect(group.stats().status).toEqual(["Behind", "OutstandingPageRequest"])
    const next = group.readCompleted({ events: evs(5, 7), endOfStream: false }, 1)
    expect(next).toEqual([{ _tag: "Read", from: { _tag: "After", position: 7 }, count: 3 }])
  })

  it("after a checkpoint, resumes with the event after it", () => {
    const group = makeGroup({}, { _tag: "After", position: 4 })
    expect(group.start(0)).toEqual([{ _tag: "Read", from: { _tag: "After", position: 4 }, count: 20 }])
    group.readCompleted({ events: evs(4, 6), endOfStream: true }, 0)
    expect(ids(group.pull(10, 0).messages)).toEqual(["e5", "e6"])
  })

  it("stops reading while the buffer lacks room for more than a batch, and reads again once it has", () => {
    const group = makeGroup({ readBatchSize: 2, bufferSize: 5 })
    group.start(0)
    expect(ofTag(group.readCompleted({ events: evs(0, 1), endOfStream: false }, 0), "Read")).toHaveLength(1)
    expect(ofTag(group.readCompleted({ events: evs(2, 3), endOfStream: false }, 0), "Read")).toEqual([])
    expect(group.stats().readBufferCount).toBe(4)
    expect(ofTag(group.tick(0), "Read")).toEqual([])
    const { effects } = group.pull(2, 0)
    expect(ofTag(effects, "Read")).toEqual([{ _tag: "Read", from: { _tag: "After", position: 3 }, count: 2 }])
  })

  it("goes live when a read reaches the end with nothing appended meanwhile", () => {
    const group = makeGroup()
    group.start(0)
    group.readCompleted({ events: evs(0, 1), endOfStream: true }, 0)
    expect(group.stats().status).toEqual(["Live"])
    group.appended(ev(2), 0)
    expect(ids(group.pull(10, 0).messages)).toEqual(["e0", "e1", "e2"])
  })

  it("switches to live when a read reaches the events appended while catching up: no gap, no duplicate", () => {
    const group = makeGroup({ readBatchSize: 3 })
    group.start(0)
    for (const n of [4, 5, 6]) group.appended(ev(n), 0)
    expect(group.stats().liveBufferCount).toBe(3)
    group.readCompleted({ events: evs(0, 2), endOfStream: false }, 0)
    expect(group.stats().status).toEqual(["Behind", "OutstandingPageRequest"])
    group.readCompleted({ events: evs(3, 5), endOfStream: false }, 0)
    expect(group.stats()).toMatchObject({ status: ["Live"], liveBufferCount: 0 })
    group.appended(ev(5), 0)
    group.appended(ev(7), 0)
    expect(ids(group.pull(20, 0).messages)).toEqual(evs(0, 7).map((e) => e.id))
  })

  it("reads on when the end it reached is older than events appended since", () => {
    const group = makeGroup()
    group.start(0)
    group.appended(ev(2), 0)
    const effects = group.readCompleted({ events: evs(0, 1), endOfStream: true }, 0)
    expect(ofTag(effects, "Read")).toEqual([{ _tag: "Read", from: { _tag: "After", position: 1 }, count: 20 }])
    group.readCompleted({ events: [ev(2)], endOfStream: true }, 0)
    expect(ids(group.pull(5, 0).messages)).toEqual(["e0", "e1", "e2"])
    expect(group.stats().status).toEqual(["Live"])
  })

  it("keeps only liveBufferSize appended events while behind; reading fills the rest", () => {
    const group = makeGroup({ liveBufferSize: 2 })
    group.start(0)
    for (const n of [0, 1, 2, 3]) group.appended(ev(n), 0)
    expect(group.stats().liveBufferCount).toBe(2)
    group.readCompleted({ events: evs(0, 2), endOfStream: false }, 0)
    expect(ids(group.pull(10, 0).messages)).toEqual(["e0", "e1", "e2", "e3"])
  })

  it("falls behind when live events overflow the buffer, then reads them back without a gap", () => {
    const group = makeGroup({ bufferSize: 3, readBatchSize: 1 })
    group.start(0)
    group.readCompleted({ events: [], endOfStream: true }, 0)
    for (const n of [0, 1, 2, 3, 4]) group.appended(ev(n), 0)
    expect(group.stats()).toMatchObject({ status: ["Behind"], readBufferCount: 3, liveBufferCount: 2 })
    const pulled = group.pull(3, 0)
    const got = ids(pulled.messages)
    const reads = ofTag(pulled.effects, "Read")
    expect(reads).toEqual([{ _tag: "Read", from: { _tag: "After", position: 2 }, count: 1 }])
    group.readCompleted({ events: [ev(3)], endOfStream: false }, 0)
    got.push(...ids(group.pull(10, 0).messages))
    expect(got).toEqual(["e0", "e1", "e2", "e3", "e4"])
    expect(group.stats().status).toEqual(["Live"])
  })

  it("a live start takes only what is appended from then on", () => {
    const group = makeGroup({}, { _tag: "Live" })
    expect(group.start(0)).toEqual([])
    group.appended(ev(9), 0)
    group.readCompleted({ events: evs(0, 9), endOfStream: true }, 0)
    expect(ids(group.pull(10, 0).messages)).toEqual(["e9"])
  })

  it("ignores a read answered after the group went live", () => {
    const group = makeGroup()
    group.start(0)
    group.readCompleted({ events: [ev(0)], endOfStream: true }, 0)
    group.readCompleted({ events: evs(0, 3), endOfStream: false }, 0)
    expect(ids(group.pull(10, 0).messages)).toEqual(["e0"])
  })
})
