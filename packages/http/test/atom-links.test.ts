import type { ResolvedEvent } from "@vellum/storage"
import { describe, expect, it } from "vitest"
import {
  StartPosition,
  allFeedLinks,
  formatAllPosition,
  streamFeedLinks,
  type AllFeedContext,
  type StreamFeedContext
} from "../src/atom/index.js"

const Base = "https://host:2113"
const S = `${Base}/streams/orders-1`

/** Link math depends on how many entries a page has, not what they are. */
const entries = (n: number): ReadonlyArray<ResolvedEvent> =>
  Array.from({ length: n }, () => ({ event: undefined, link: undefined }))

const stream = (
  direction: "forward" | "backward",
  from: number,
  count: number,
  last: number,
  returned: number,
  isEndOfStream: boolean
): StreamFeedContext => ({
  baseUrl: Base,
  stream: "orders-1",
  direction,
  from,
  count,
  embed: "None",
  contentType: "application/json",
  page: { events: entries(returned), lastEventNumber: last, isEndOfStream }
})

const rels = (links: ReadonlyArray<{ relation: string; uri: string }>) =>
  Object.fromEntries(links.map((l) => [l.relation, l.uri]))
const order = (links: ReadonlyArray<{ relation: string }>) => links.map((l) => l.relation)

describe("stream backward page links", () => {
  it("head of 25 events, page 20 (the reference's tested example)", () => {
    const links = streamFeedLinks(stream("backward", -1, 20, 24, 20, false))
    expect(order(links)).toEqual(["self", "first", "last", "next", "previous", "metadata"])
    expect(rels(links)).toEqual({
      self: S,
      first: `${S}/head/backward/20`,
      last: `${S}/0/forward/20`,
      next: `${S}/4/backward/20`,
      previous: `${S}/25/forward/20`,
      metadata: `${S}/metadata`
    })
  })

  it("the oldest page has no last/next", () => {
    const links = streamFeedLinks(stream("backward", 4, 20, 24, 5, true))
    expect(order(links)).toEqual(["self", "first", "previous", "metadata"])
    expect(rels(links)["previous"]).toBe(`${S}/5/forward/20`)
  })

  it("a page starting past the end points `previous` just after the last event", () => {
    expect(rels(streamFeedLinks(stream("backward", 100, 20, 24, 0, false)))["previous"]).toBe(`${S}/25/forward/20`)
    expect(rels(streamFeedLinks(stream("backward", 100, 20, 24, 0, false)))["next"]).toBe(`${S}/80/backward/20`)
  })

  it("escapes the stream name in every link", () => {
    const links = streamFeedLinks({ ...stream("backward", -1, 20, 0, 1, true), stream: "a@b/c" })
    for (const link of links) expect(link.uri.startsWith(`${Base}/streams/a%40b%2Fc`)).toBe(true)
  })
})

describe("stream forward page links", () => {
  it("from 0: no last/next, previous to the page after", () => {
    const links = streamFeedLinks(stream("forward", 0, 20, 24, 20, false))
    expect(order(links)).toEqual(["self", "first", "previous", "metadata"])
    expect(rels(links)["previous"]).toBe(`${S}/20/forward/20`)
  })

  it("a middle page has last and next (from − 1, backward)", () => {
    const links = streamFeedLinks(stream("forward", 5, 10, 24, 10, false))
    expect(order(links)).toEqual(["self", "first", "last", "next", "previous", "metadata"])
    expect(rels(links)).toMatchObject({
      last: `${S}/0/forward/10`,
      next: `${S}/4/backward/10`,
      previous: `${S}/15/forward/10`
    })
  })

  it("the page reaching the end: previous just after the last event", () => {
    expect(rels(streamFeedLinks(stream("forward", 20, 20, 24, 5, true)))["previous"]).toBe(`${S}/25/forward/20`)
  })

  it("the head's previous page (empty, at the end) has no previous link", () => {
    const links = streamFeedLinks(stream("forward", 25, 20, 24, 0, true))
    expect(order(links)).toEqual(["self", "first", "last", "next", "metadata"])
    expect(rels(links)["next"]).toBe(`${S}/24/backward/20`)
  })

  it("an empty page that is not at the end (below a $tb bound) still links previous", () => {
    expect(order(streamFeedLinks(stream("forward", 0, 5, 24, 0, false)))).toContain("previous")
  })

  it("metastreams keep their metadata link", () => {
    const links = streamFeedLinks({ ...stream("forward", 0, 20, 0, 1, true), stream: "$$orders-1" })
    expect(rels(links)["metadata"]).toBe(`${Base}/streams/%24%24orders-1/metadata`)
  })
})

const all = (
  direction: "forward" | "backward",
  from: number,
  returned: number,
  nextPosition: number,
  isEnd: boolean,
  filtered = false
): AllFeedContext => ({
  baseUrl: Base,
  direction,
  from,
  count: 20,
  embed: "None",
  filtered,
  page: { events: entries(returned), nextPosition, isEnd }
})
const A = `${Base}/streams/%24all`

describe("$all page links", () => {
  it("backward, not at the start of the log", () => {
    const links = allFeedLinks(all("backward", 5000, 20, 1200, false))
    expect(order(links)).toEqual(["self", "first", "last", "next", "previous", "metadata"])
    expect(rels(links)).toEqual({
      self: A,
      first: `${A}/head/backward/20`,
      last: `${A}/${StartPosition}/forward/20`,
      next: `${A}/${formatAllPosition(1200)}/backward/20`,
      previous: `${A}/${formatAllPosition(5000)}/forward/20`,
      metadata: `${A}/metadata`
    })
  })

  it("backward reaching the start: no last/next", () => {
    expect(order(allFeedLinks(all("backward", 5000, 3, 0, true)))).toEqual(["self", "first", "previous", "metadata"])
  })

  it("forward from the start: no last/next; previous resumes after the page", () => {
    const links = allFeedLinks(all("forward", 0, 20, 2400, false))
    expect(order(links)).toEqual(["self", "first", "previous", "metadata"])
    expect(rels(links)["previous"]).toBe(`${A}/${formatAllPosition(2400)}/forward/20`)
  })

  it("forward from elsewhere: last, and next going back from the page's start", () => {
    const links = allFeedLinks(all("forward", 2400, 1, 2500, true))
    expect(rels(links)).toMatchObject({
      last: `${A}/${StartPosition}/forward/20`,
      next: `${A}/${formatAllPosition(2400)}/backward/20`
    })
    expect(order(links)).toContain("previous")
  })

  it("forward at the end of the log with nothing new: no previous", () => {
    expect(order(allFeedLinks(all("forward", 2500, 0, 2500, true)))).toEqual([
      "self",
      "first",
      "last",
      "next",
      "metadata"
    ])
  })

  it("filtered feeds use their own URL, drop the filter query and have no metadata link", () => {
    const links = allFeedLinks(all("backward", 5000, 20, 1200, false, true))
    expect(order(links)).toEqual(["self", "first", "last", "next", "previous"])
    expect(rels(links)["self"]).toBe(`${A}/filtered`)
    expect(rels(links)["next"]).toBe(`${A}/filtered/${formatAllPosition(1200)}/backward/20`)
  })
})
