// The projections workload's checkers (simulation/src/projections/) on hand-made histories: what `$ce-…`,
// `$et-…`, the user projections' state and their emitted links must be, and that each rule fails on a
// duplicate, a missing link, a wrong order, a wrong target and an invented link.
import { describe, expect, it } from "vitest"
import { DeletedStreamNumber, LongMaxValueText } from "@vellum/storage"
import {
  categoryOf,
  checkLinkStream,
  checkLinkStreams,
  expectedCategoryLinks,
  expectedEventTypeLinks,
  type ExpectedLink,
  type LinkCheckContext,
  type ScannedRecord,
  type StoredLink
} from "../src/projections/projectionsChecks.js"
import { checkCounts, expectedCopyLinks, expectedCounts } from "../src/projections/userProjections.js"

const bytes = (s: string) => Buffer.from(s)
const event = (
  logPosition: number,
  stream: string,
  eventNumber: number,
  eventType = "E",
  data = "{}"
): ScannedRecord => ({
  stream,
  eventNumber,
  eventType,
  data: bytes(data),
  isJson: true,
  logPosition
})
const linkRecord = (logPosition: number, stream: string, eventNumber: number, target: string): ScannedRecord => ({
  stream,
  eventNumber,
  eventType: "$>",
  data: bytes(target),
  isJson: false,
  logPosition
})

// A history: two categories, a link into another category, a soft and a hard delete, a `$` stream.
const history: ReadonlyArray<ScannedRecord> = [
  event(100, "order-1", 0, "Placed"),
  event(200, "cart-1", 0, "Added"),
  event(300, "order-1", 1, "Shipped"),
  event(400, "$settings", 0, "Settings"),
  linkRecord(500, "cart-2", 0, "1@order-1"),
  event(600, "$$cart-1", 0, "$metadata", `{"$tb":${LongMaxValueText}}`),
  event(700, "order-2", 0, "Placed"),
  event(800, "order-2", DeletedStreamNumber, "$streamDeleted", ""),
  event(900, "nocategory", 0, "Placed")
]

/** The links a correct projection writes for `expected`: causing position as `$p`, `$o` and `$deleted`. */
const linksFor = (expected: ReadonlyArray<ExpectedLink>): Array<StoredLink> =>
  expected.map((e) => ({
    eventType: "$>",
    data: e.target,
    metadata: JSON.stringify({
      $v: "1:0:0:4",
      $c: e.position,
      $p: e.position,
      ...(e.original === undefined ? {} : { $o: e.original }),
      ...(e.deleted ? { $deleted: -1 } : {})
    })
  }))

const positions = new Set(history.map((r) => r.logPosition))
const noScavenge: LinkCheckContext = { inLog: (p) => positions.has(p), scavengedBelow: -1 }

describe("what $by_category must write", () => {
  const expected = expectedCategoryLinks(history)

  it("one link per categorised record, in $all order: a link recategorised, deletions by the deleted stream", () => {
    expect([...expected.keys()].sort()).toEqual(["$ce-cart", "$ce-order"])
    expect(expected.get("$ce-order")!.map((e) => [e.position, e.target, e.original, e.deleted])).toEqual([
      [100, "0@order-1", "order-1", false],
      [300, "1@order-1", "order-1", false],
      [700, "0@order-2", "order-2", false],
      [800, `${LongMaxValueText}@order-2`, "order-2", true]
    ])
    expect(expected.get("$ce-cart")!.map((e) => [e.position, e.target, e.original, e.deleted])).toEqual([
      [200, "0@cart-1", "cart-1", false],
      [500, "1@order-1", "cart-2", false],
      [600, "0@$$cart-1", "cart-1", true]
    ])
  })

  it("categories: before the first dash, none at index 0, none for $ streams", () => {
    expect(categoryOf("shop-cart-1")).toBe("shop")
    expect(categoryOf("-x")).toBeUndefined()
    expect(categoryOf("plain")).toBeUndefined()
    expect(categoryOf("$ce-x")).toBeUndefined()
  })

  it("the links a correct projection writes pass", () => {
    const actual = new Map([...expected].map(([s, e]) => [s, linksFor(e)]))
    const report = checkLinkStreams(expected, actual, noScavenge)
    expect(report.problems).toEqual([])
    expect(report.checked).toBe(7)
  })

  it("fails on a duplicate (a record linked again after a restart)", () => {
    const links = linksFor(expected.get("$ce-order")!)
    const report = checkLinkStream("$ce-order", expected.get("$ce-order")!, [...links, links[1]!], noScavenge)
    expect(report.problems.join("\n")).toMatch(/\$ce-order#4 links the record at 300 again .*duplicate/)
  })

  it("fails on a missing link", () => {
    const links = linksFor(expected.get("$ce-order")!)
    const report = checkLinkStream("$ce-order", expected.get("$ce-order")!, [links[0]!, ...links.slice(2)], noScavenge)
    expect(report.problems).toEqual(["$ce-order lacks a link for the record at 300 (1@order-1)"])
  })

  it("fails on a wrong order", () => {
    const links = linksFor(expected.get("$ce-order")!)
    const swapped = [links[1]!, links[0]!, ...links.slice(2)]
    const report = checkLinkStream("$ce-order", expected.get("$ce-order")!, swapped, noScavenge)
    expect(report.problems).toEqual(["$ce-order#1 links the record at 100 after the one at 300: not in $all order"])
  })

  it("fails on a wrong target, a wrong $o, a missing $deleted, a link in the wrong stream", () => {
    const cart = linksFor(expected.get("$ce-cart")!)
    const wrong: Array<StoredLink> = [
      { ...cart[0]!, data: "0@cart-9" },
      { ...cart[1]!, metadata: JSON.stringify({ $p: 500, $o: "order-1" }) },
      { ...cart[2]!, metadata: JSON.stringify({ $p: 600, $o: "cart-1" }) },
      linksFor(expected.get("$ce-order")!)[2]!
    ]
    const report = checkLinkStream("$ce-cart", expected.get("$ce-cart")!, wrong, noScavenge)
    expect(report.problems).toEqual([
      "$ce-cart#0 points at 0@cart-9, the record at 200 is 0@cart-1",
      '$ce-cart#1 has $o "order-1", expected cart-2',
      "$ce-cart#2 lacks $deleted (record at 600)",
      "$ce-cart#3 links the record at 700, which does not belong here"
    ])
  })

  it("a link to a record no longer in the log: allowed below the last scavenge point, invented above it", () => {
    const links = [...linksFor(expected.get("$ce-cart")!)]
    const gone: StoredLink = { eventType: "$>", data: "5@cart-1", metadata: JSON.stringify({ $p: 650, $o: "cart-1" }) }
    const withGone = [...links.slice(0, 3), gone]
    expect(checkLinkStream("$ce-cart", expected.get("$ce-cart")!, withGone, noScavenge).problems).toEqual([
      "$ce-cart#3 links a record at 650 that is not in the log (and no scavenge reached there)"
    ])
    const scavenged = checkLinkStream("$ce-cart", expected.get("$ce-cart")!, withGone, {
      ...noScavenge,
      scavengedBelow: 700
    })
    expect(scavenged.problems).toEqual([])
    expect(scavenged.scavenged).toBe(1)
  })

  it("fails on a link stream nobody should have written, and on a link naming no position", () => {
    const stray = new Map([["$ce-ghost", linksFor(expected.get("$ce-order")!).slice(0, 1)]])
    expect(checkLinkStreams(new Map(), stray, noScavenge).problems).toEqual([
      "$ce-ghost#0 links the record at 100, which does not belong here"
    ])
    const bare: StoredLink = { eventType: "$>", data: "0@order-1", metadata: "{}" }
    expect(checkLinkStream("$ce-order", [], [bare], noScavenge).problems).toEqual([
      "$ce-order#0: metadata names no position: {}"
    ])
  })
})

describe("what $by_event_type must write", () => {
  const expected = expectedEventTypeLinks(history)

  it("one link per record by type, links left out, deletions into $et-$deleted pointing into the deleted stream", () => {
    expect([...expected.keys()].sort()).toEqual(["$et-$deleted", "$et-Added", "$et-Placed", "$et-Shipped"])
    expect(expected.get("$et-Placed")!.map((e) => e.target)).toEqual(["0@order-1", "0@order-2", "0@nocategory"])
    expect(expected.get("$et-$deleted")!.map((e) => [e.target, e.deleted])).toEqual([
      ["0@cart-1", true],
      [`${LongMaxValueText}@order-2`, true]
    ])
  })

  it("fails on a duplicate across a restart and on a wrong order", () => {
    const placed = linksFor(expected.get("$et-Placed")!)
    const twice = checkLinkStream("$et-Placed", expected.get("$et-Placed")!, [...placed, placed[2]!], noScavenge)
    expect(twice.problems).toHaveLength(1)
    const reversed = checkLinkStream("$et-Placed", expected.get("$et-Placed")!, [...placed].reverse(), noScavenge)
    expect(reversed.problems).toHaveLength(2)
  })
})

describe("the user projections", () => {
  const withBadJson = [
    ...history,
    event(1000, "order-3", 0, "Placed", "not json"),
    event(1100, "order-3", 1, "Placed", "")
  ]

  it("counts: events of non-$ streams, $ types left out, JSON-flagged events with bad data dropped", () => {
    expect(expectedCounts(withBadJson)).toEqual({
      events: 5,
      byCategory: { order: 3, cart: 1, "-": 1 },
      byType: { Placed: 3, Shipped: 1, Added: 1 }
    })
  })

  it("a state equal to the log's count passes; one counting an event twice or missing one fails", () => {
    const log = expectedCounts(withBadJson)
    expect(checkCounts(JSON.stringify(log), log, false)).toEqual([])
    const twice = {
      ...log,
      events: 6,
      byType: { ...log.byType, Placed: 4 },
      byCategory: { ...log.byCategory, order: 4 }
    }
    expect(checkCounts(JSON.stringify(twice), log, false)).toEqual([
      "sim-counts counts 6 events, the log holds 5",
      "sim-counts counts 4 events of category order, the log holds 3",
      "sim-counts counts 4 events of type Placed, the log holds 3"
    ])
    const missing = {
      ...log,
      events: 4,
      byType: { ...log.byType, Added: 0 },
      byCategory: { ...log.byCategory, cart: 0 }
    }
    expect(checkCounts(JSON.stringify(missing), log, false)).toHaveLength(3)
    expect(checkCounts("", log, false)).toEqual(["sim-counts's state is not JSON: "])
  })

  it("an empty state (the handler never ran) is right only while the log holds nothing to count", () => {
    const none = expectedCounts([])
    expect(checkCounts("", none, false)).toEqual([])
    expect(checkCounts("", none, true)).toEqual([])
    expect(checkCounts("", expectedCounts(withBadJson), true)).toEqual(["sim-counts's state is not JSON: "])
  })

  it("after a scavenge the state may count more than the log holds, never less", () => {
    const log = expectedCounts(withBadJson)
    expect(checkCounts(JSON.stringify({ ...log, events: 9 }), log, true)).toEqual([])
    expect(checkCounts(JSON.stringify({ ...log, events: 4 }), log, true)).toEqual([
      "sim-counts counts 4 events, the log holds 5"
    ])
  })

  it("copies: one link per handled event of a categorised stream, checked by the link-stream rules", () => {
    const expected = expectedCopyLinks(history)
    expect([...expected.keys()].sort()).toEqual(["copies-cart", "copies-order"])
    expect(expected.get("copies-order")!.map((e) => e.target)).toEqual(["0@order-1", "1@order-1", "0@order-2"])
    const links = linksFor(expected.get("copies-order")!)
    expect(checkLinkStream("copies-order", expected.get("copies-order")!, links, noScavenge).problems).toEqual([])
    expect(
      checkLinkStream("copies-order", expected.get("copies-order")!, [...links, links[0]!], noScavenge).problems
    ).toEqual(["copies-order#3 links the record at 100 again (first copies-order#0): a duplicate"])
  })
})
