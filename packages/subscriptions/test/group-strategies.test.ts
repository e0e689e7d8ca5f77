import { describe, expect, it } from "vitest"
import { ev, evs, ids, liveGroup, makeGroup, ofTag, type TestEvent } from "./groupFixtures.js"
import type { Group } from "../src/group/index.js"

const deliveries = (effects: Parameters<typeof ofTag>[0]) =>
  ofTag(effects, "Deliver").map((d) => [d.consumer, ids(d.messages)] as const)

const withEvents = (
  strategy: "RoundRobin" | "DispatchToSingle" | "Pinned" | "PinnedByCorrelation",
  events: ReadonlyArray<TestEvent>,
  consumers: ReadonlyArray<[string, number]>
): { group: Group<number, TestEvent>; delivered: ReturnType<typeof deliveries> } => {
  const group = makeGroup({ namedConsumerStrategy: strategy, bufferSize: 100 })
  group.start(0)
  for (const [c, max] of consumers) expect(group.connect(c, max, 0)).toEqual([])
  return { group, delivered: deliveries(group.readCompleted({ events, endOfStream: true }, 0)) }
}

describe("consumer strategies", () => {
  it("RoundRobin deals messages to waiting consumers in turn, skipping full ones", () => {
    const { delivered } = withEvents("RoundRobin", evs(0, 4), [
      ["a", 3],
      ["b", 1]
    ])
    expect(delivered).toEqual([
      ["a", ["e0", "e2", "e3"]],
      ["b", ["e1"]]
    ])
  })

  it("DispatchToSingle fills one consumer before the next", () => {
    const { delivered } = withEvents("DispatchToSingle", evs(0, 4), [
      ["a", 3],
      ["b", 5]
    ])
    expect(delivered).toEqual([
      ["a", ["e0", "e1", "e2"]],
      ["b", ["e3", "e4"]]
    ])
  })

  it("Pinned keeps a stream's messages on one consumer, and holds them while it is full", () => {
    const events = [ev(0, "x"), ev(1, "y"), ev(2, "x"), ev(3, "y"), ev(4, "x")]
    const { group, delivered } = withEvents("Pinned", events, [
      ["a", 1],
      ["b", 10]
    ])
    const owner = (id: string) => delivered.find(([, got]) => got.includes(id))?.[0]
    expect(owner("e0")).not.toBe(owner("e1"))
    const full = owner("e0") === "a" ? ["e2", "e4"] : ["e3"]
    expect(group.stats().readBufferCount).toBe(full.length)
    expect(ids(group.pull(5, 0, "b").messages)).toEqual([])
    expect(ids(group.pull(5, 0, "a").messages)).toEqual(full)
  })

  it("PinnedByCorrelation pins by correlation id, falling back to the stream", () => {
    const events = [ev(0, "x", "c1"), ev(1, "y", "c1"), ev(2, "z"), ev(3, "z")]
    const { delivered } = withEvents("PinnedByCorrelation", events, [
      ["a", 10],
      ["b", 10]
    ])
    const owner = (id: string) => delivered.find(([, got]) => got.includes(id))?.[0]
    expect(owner("e0")).toBe(owner("e1"))
    expect(owner("e2")).toBe(owner("e3"))
  })

  it("refuses consumers beyond maxSubscriberCount (0 is unlimited)", () => {
    const group = makeGroup({ maxSubscriberCount: 1 })
    expect(group.connect("a", 1, 0)).not.toBe("Full")
    expect(group.connect("b", 1, 0)).toBe("Full")
    expect(group.connect("a", 1, 0)).toBe("Full")
    group.disconnect("a", true, 0)
    expect(group.connect("b", 1, 0)).not.toBe("Full")
    const unlimited = makeGroup({ maxSubscriberCount: 0 })
    for (let i = 0; i < 20; i++) expect(unlimited.connect(`c${i}`, 1, 0)).not.toBe("Full")
  })

  it("a dropped connection's messages go back to be retried; an answered long-poll keeps them in flight", () => {
    const group = liveGroup(3)
    expect(deliveries(group.connect("conn", 2, 0) as [])).toEqual([["conn", ["e0", "e1"]]])
    expect(deliveries(group.connect("poll", 2, 0) as [])).toEqual([["poll", ["e2", "e3"]]])
    expect(group.stats().outstandingMessagesCount).toBe(4)
    group.disconnect("poll", false, 1)
    expect(group.stats()).toMatchObject({ outstandingMessagesCount: 4, retryBufferCount: 0 })
    group.disconnect("conn", true, 1)
    expect(group.stats()).toMatchObject({ outstandingMessagesCount: 2, retryBufferCount: 2 })
    expect(group.pull(5, 1).messages.map((d) => d.retryCount)).toEqual([1, 1])
    group.ack(["e1", "e3"], 2)
    expect(group.stats().outstandingMessagesCount).toBe(2)
  })

  it("a waiting consumer gets a message as soon as one arrives, and a slot back when it acks", () => {
    const group = liveGroup(-1)
    group.connect("w", 1, 0)
    expect(deliveries(group.appended(ev(0), 0))).toEqual([["w", ["e0"]]])
    expect(deliveries(group.appended(ev(1), 0))).toEqual([])
    expect(group.stats().connections).toEqual([{ id: "w", inFlight: 1, availableSlots: 0, totalItemsProcessed: 1 }])
    expect(deliveries(group.ack(["e0"], 1))).toEqual([["w", ["e1"]]])
  })
})
