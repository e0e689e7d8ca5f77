import { DeletedStreamNumber, EventFlags, RecordKind, type EventRecord, type ResolvedEvent } from "@vellum/storage"
import { XMLParser, XMLValidator } from "fast-xml-parser"
import { describe, expect, it } from "vitest"
import {
  NoEventsDate,
  contentTypeHash,
  feedSyntaxFor,
  formatAllPosition,
  renderAllFeed,
  renderStreamFeed,
  type EmbedLevel,
  type StreamFeedContext
} from "../src/atom/index.js"

const Base = "https://host:2113"
const T0 = Date.UTC(2025, 2, 1, 10, 0, 0) * 1000 + 123456
const Id = "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4"

const record = (
  eventNumber: number,
  options: { stream?: string; type?: string; data?: string; metadata?: string; json?: boolean; micros?: number } = {}
): EventRecord => ({
  kind: RecordKind.Event,
  logPosition: eventNumber * 100,
  flags: options.json === false ? 0 : EventFlags.Json,
  eventNumber,
  createdMicros: options.micros ?? T0 + eventNumber * 1_000_000,
  eventId: Id,
  stream: options.stream ?? "orders-1",
  eventType: options.type ?? "OrderPlaced",
  data: Buffer.from(options.data ?? '{"a":"1"}'),
  metadata: Buffer.from(options.metadata ?? "")
})
const plain = (event: EventRecord): ResolvedEvent => ({ event, link: undefined })

const backwardHead = (
  events: ReadonlyArray<ResolvedEvent>,
  embed: EmbedLevel = "None",
  last = events.length - 1
): StreamFeedContext => ({
  baseUrl: Base,
  stream: "orders-1",
  direction: "backward",
  from: -1,
  count: 20,
  embed,
  contentType: "application/json",
  page: { events, lastEventNumber: last, isEndOfStream: true }
})

type Json = any
const feedJson = (ctx: StreamFeedContext): Json => JSON.parse(renderStreamFeed(ctx, "json"))
const entryOf = (event: ResolvedEvent, embed: EmbedLevel): Json => feedJson(backwardHead([event], embed, 5)).entries[0]

const BaseKeys = ["title", "id", "updated", "author", "summary", "retryCount", "content", "links"]
const RichKeys = [
  "eventId",
  "eventType",
  "eventNumber",
  "data",
  "metaData",
  "linkMetaData",
  "streamId",
  "isJson",
  "isMetaData",
  "isLinkMetaData",
  "isRedacted",
  "positionEventNumber",
  "positionStreamId"
]

describe("Atom JSON stream feed", () => {
  it("matches the reference document for a head page, byte for byte", () => {
    const body = renderStreamFeed(backwardHead([plain(record(0))]), "json")
    const hash = contentTypeHash("application/json")
    expect(body).toBe(`{
  "title": "Event stream 'orders-1'",
  "id": "${Base}/streams/orders-1",
  "updated": "2025-03-01T10:00:00.123456Z",
  "streamId": "orders-1",
  "author": {
    "name": "Kurrent"
  },
  "headOfStream": true,
  "selfUrl": "${Base}/streams/orders-1",
  "eTag": "0;${hash}",
  "links": [
    {
      "uri": "${Base}/streams/orders-1",
      "relation": "self",
      "type": null
    },
    {
      "uri": "${Base}/streams/orders-1/head/backward/20",
      "relation": "first",
      "type": null
    },
    {
      "uri": "${Base}/streams/orders-1/1/forward/20",
      "relation": "previous",
      "type": null
    },
    {
      "uri": "${Base}/streams/orders-1/metadata",
      "relation": "metadata",
      "type": null
    }
  ],
  "entries": [
    {
      "title": "0@orders-1",
      "id": "${Base}/streams/orders-1/0",
      "updated": "2025-03-01T10:00:00.123456Z",
      "author": {
        "name": "Kurrent"
      },
      "summary": "OrderPlaced",
      "retryCount": null,
      "content": null,
      "links": [
        {
          "uri": "${Base}/streams/orders-1/0",
          "relation": "edit",
          "type": null
        },
        {
          "uri": "${Base}/streams/orders-1/0",
          "relation": "alternate",
          "type": null
        }
      ]
    }
  ]
}`)
  })

  it("a non-head backward page: headOfStream false, selfUrl set, no eTag", () => {
    const feed = feedJson({
      ...backwardHead([plain(record(3)), plain(record(2))]),
      from: 3,
      page: { events: [plain(record(3)), plain(record(2))], lastEventNumber: 9, isEndOfStream: false }
    })
    expect(feed.headOfStream).toBe(false)
    expect(feed.selfUrl).toBe(`${Base}/streams/orders-1`)
    expect(feed.eTag).toBeNull()
    expect(feed.updated).toBe("2025-03-01T10:00:03.123456Z")
  })

  it("forward pages: dated by their oldest event, entries newest first, headOfStream at the end", () => {
    const events = [plain(record(5)), plain(record(6)), plain(record(7))]
    const ctx: StreamFeedContext = {
      ...backwardHead(events),
      direction: "forward",
      from: 5,
      count: 3,
      page: { events, lastEventNumber: 7, isEndOfStream: true }
    }
    const feed = feedJson(ctx)
    expect(feed.updated).toBe("2025-03-01T10:00:05.123456Z")
    expect(feed.entries.map((e: Json) => e.title)).toEqual(["7@orders-1", "6@orders-1", "5@orders-1"])
    expect(feed.headOfStream).toBe(true)
    expect(feed.selfUrl).toBeNull()
    expect(feed.eTag).toBeNull()
    expect(feed.id).toBe(`${Base}/streams/orders-1`)
    expect(feedJson({ ...ctx, page: { ...ctx.page, lastEventNumber: 9, isEndOfStream: false } }).headOfStream).toBe(
      false
    )
  })

  it("empty pages: no-events date and an empty entries array", () => {
    const body = renderStreamFeed(
      {
        ...backwardHead([]),
        direction: "forward",
        from: 25,
        page: { events: [], lastEventNumber: 24, isEndOfStream: true }
      },
      "json"
    )
    expect(body).toContain('"entries": []\n}')
    expect(JSON.parse(body).updated).toBe(NoEventsDate)
  })

  it("is dated DateTime.MinValue when the first entry is a link whose target is gone", () => {
    const link = record(4, { type: "$>", data: "0@gone", json: false })
    expect(feedJson(backwardHead([{ event: undefined, link }, plain(record(3))])).updated).toBe(NoEventsDate)
  })

  it("uses the raw stream id in title/streamId and the escaped one in URLs", () => {
    const feed = feedJson({ ...backwardHead([plain(record(0, { stream: "a b@c" }))]), stream: "a b@c" })
    expect(feed.title).toBe("Event stream 'a b@c'")
    expect(feed.streamId).toBe("a b@c")
    expect(feed.id).toBe(`${Base}/streams/a%20b%40c`)
    expect(feed.entries[0].id).toBe(`${Base}/streams/a%20b%40c/0`)
  })
})

describe("$all feeds", () => {
  const events = [plain(record(0, { stream: "a" })), plain(record(1, { stream: "b" }))]
  it("forward: titled All events, no streamId, dated by the newest event, newest first", () => {
    const feed = JSON.parse(
      renderAllFeed(
        {
          baseUrl: Base,
          direction: "forward",
          from: 0,
          count: 20,
          embed: "None",
          page: { events, nextPosition: 200, isEnd: true }
        },
        "json"
      )
    )
    expect(feed).toMatchObject({
      title: "All events",
      id: `${Base}/streams/%24all`,
      streamId: null,
      headOfStream: false,
      selfUrl: null,
      eTag: null
    })
    expect(feed.updated).toBe("2025-03-01T10:00:01.123456Z")
    expect(feed.entries.map((e: Json) => e.title)).toEqual(["1@b", "0@a"])
    expect(feed.links.find((l: Json) => l.relation === "previous").uri).toBe(
      `${Base}/streams/%24all/${formatAllPosition(200)}/forward/20`
    )
  })

  it("backward: dated by the first (newest) event; filtered feeds have their own id", () => {
    const newestFirst = [events[1]!, events[0]!]
    const feed = JSON.parse(
      renderAllFeed(
        {
          baseUrl: Base,
          direction: "backward",
          from: 300,
          count: 20,
          embed: "None",
          filtered: true,
          page: { events: newestFirst, nextPosition: 0, isEnd: true }
        },
        "json"
      )
    )
    expect(feed.updated).toBe("2025-03-01T10:00:01.123456Z")
    expect(feed.id).toBe(`${Base}/streams/%24all/filtered`)
    expect(feed.entries.map((e: Json) => e.title)).toEqual(["1@b", "0@a"])
  })
})

describe("a tombstone in $all (long.MaxValue on the wire)", () => {
  it("shows its event number as 9223372036854775807 in the title, id, rich fields, content and XML", () => {
    const tombstone = plain({
      ...record(0, { stream: "hard", type: "$streamDeleted", data: "" }),
      eventNumber: DeletedStreamNumber,
      flags: EventFlags.Json | EventFlags.Tombstone
    })
    const context = {
      baseUrl: Base,
      direction: "backward" as const,
      from: 300,
      count: 20,
      page: { events: [tombstone], nextPosition: 0, isEnd: true }
    }
    const json = renderAllFeed({ ...context, embed: "Body" }, "json")
    expect(json).toContain(`"title": "9223372036854775807@hard"`)
    expect(json).toContain(`"id": "${Base}/streams/hard/9223372036854775807"`)
    expect(json).toContain(`"eventNumber": 9223372036854775807,`)
    expect(json).toContain(`"positionEventNumber": 9223372036854775807,`)
    expect(json).not.toContain(String(DeletedStreamNumber))
    const xml = renderAllFeed({ ...context, embed: "Content" }, "xml")
    expect(xml).toContain("9223372036854775807@hard")
    expect(xml).not.toContain(String(DeletedStreamNumber))
  })
})

describe("embed levels", () => {
  const jsonEvent = plain(record(3, { data: '{"a":"1"}', metadata: '{"m":2}' }))
  const textEvent = plain(record(3, { data: '{"t":1}', json: false }))

  it("None: base fields only, no content", () => {
    const entry = entryOf(jsonEvent, "None")
    expect(Object.keys(entry)).toEqual(BaseKeys)
    expect(entry).toMatchObject({
      title: "3@orders-1",
      summary: "OrderPlaced",
      retryCount: null,
      content: null,
      author: { name: "Kurrent" }
    })
    expect(entry.links).toEqual([
      { uri: `${Base}/streams/orders-1/3`, relation: "edit", type: null },
      { uri: `${Base}/streams/orders-1/3`, relation: "alternate", type: null }
    ])
  })

  it("Content: the content object for JSON events, parsed data and metadata", () => {
    expect(entryOf(jsonEvent, "Content").content).toEqual({
      eventStreamId: "orders-1",
      eventNumber: 3,
      eventType: "OrderPlaced",
      eventId: Id,
      data: { a: "1" },
      metadata: { m: 2 }
    })
    expect(entryOf(plain(record(1)), "Content").content.metadata).toBe("")
    expect(entryOf(textEvent, "Content").content).toBeNull()
  })

  it("Rich: rich fields first, in order, without bodies", () => {
    const entry = entryOf(jsonEvent, "Rich")
    expect(Object.keys(entry)).toEqual([...RichKeys, ...BaseKeys])
    expect(entry).toMatchObject({
      eventId: Id,
      eventType: "OrderPlaced",
      eventNumber: 3,
      data: null,
      metaData: null,
      linkMetaData: null,
      streamId: "orders-1",
      isJson: true,
      isMetaData: false,
      isLinkMetaData: false,
      isRedacted: false,
      positionEventNumber: 3,
      positionStreamId: "orders-1",
      content: null
    })
  })

  it("Body: data and metaData as stored text (strings, not objects)", () => {
    const entry = entryOf(jsonEvent, "Body")
    expect(entry.data).toBe('{"a":"1"}')
    expect(entry.metaData).toBe('{"m":2}')
    expect(entry.isMetaData).toBe(true)
    expect(entryOf(plain(record(1)), "Body")).toMatchObject({ metaData: null, isMetaData: false })
    expect(entryOf(textEvent, "Body")).toMatchObject({ data: null, isJson: false })
  })

  it("PrettyBody: JSON objects re-indented, arrays and non-JSON events left alone", () => {
    const entry = entryOf(jsonEvent, "PrettyBody")
    expect(entry.data).toBe('{\n  "a": "1"\n}')
    expect(entry.metaData).toBe('{\n  "m": 2\n}')
    expect(entryOf(plain(record(1, { data: "[1,2]", metadata: "plain" })), "PrettyBody")).toMatchObject({
      data: "[1,2]",
      metaData: "plain"
    })
    expect(entryOf(textEvent, "PrettyBody").data).toBeNull()
  })

  it("TryHarder: non-JSON data that is a JSON object is re-indented and flagged JSON", () => {
    expect(entryOf(textEvent, "TryHarder")).toMatchObject({ data: '{\n  "t": 1\n}', isJson: true })
    expect(entryOf(plain(record(1, { data: "just text", json: false })), "TryHarder")).toMatchObject({
      data: "just text",
      isJson: false
    })
    expect(entryOf(jsonEvent, "TryHarder").data).toBe('{\n  "a": "1"\n}')
  })

  it("TryHarder: empty or non-object data of a non-JSON event is not flagged JSON", () => {
    expect(entryOf(plain(record(1, { data: "", json: false })), "TryHarder")).toMatchObject({ data: "", isJson: false })
    expect(entryOf(plain(record(1, { data: "[1,2]", json: false })), "TryHarder")).toMatchObject({
      data: "[1,2]",
      isJson: false
    })
    expect(entryOf(plain(record(1, { data: "{not json", json: false })), "TryHarder")).toMatchObject({
      data: "{not json",
      isJson: false
    })
  })
})

describe("link entries", () => {
  const target = record(0, { stream: "orders-1", metadata: "" })
  const link = record(7, {
    stream: "by-type",
    type: "$>",
    data: "0@orders-1",
    json: false,
    metadata: '{"l":1}',
    micros: T0 + 9_000_000
  })

  it("resolved: points at the target, dated by the link, summary $>, position of the link", () => {
    const entry = entryOf({ event: target, link }, "Body")
    expect(entry).toMatchObject({
      title: "0@orders-1",
      id: `${Base}/streams/orders-1/0`,
      summary: "$>",
      updated: "2025-03-01T10:00:09.123456Z",
      eventNumber: 0,
      streamId: "orders-1",
      positionEventNumber: 7,
      positionStreamId: "by-type",
      data: '{"a":"1"}',
      linkMetaData: '{"l":1}',
      isLinkMetaData: true
    })
    expect(entryOf({ event: target, link: { ...link, metadata: Buffer.alloc(0) } }, "Body")).toMatchObject({
      linkMetaData: "",
      isLinkMetaData: false
    })
    expect(entryOf({ event: target, link }, "PrettyBody").linkMetaData).toBe('{\n  "l": 1\n}')
  })

  it("never carries content", () => {
    expect(entryOf({ event: target, link }, "Content").content).toBeNull()
  })

  it("target gone: still points at the target named by the link, without rich fields", () => {
    const entry = entryOf({ event: undefined, link: { ...link, data: Buffer.from("12@gone-stream") } }, "TryHarder")
    expect(Object.keys(entry)).toEqual(BaseKeys)
    expect(entry).toMatchObject({ title: "12@gone-stream", id: `${Base}/streams/gone-stream/12`, summary: "$>" })
  })

  it("not resolved: an ordinary event of the linking stream", () => {
    const entry = entryOf({ event: link, link: undefined }, "TryHarder")
    expect(entry).toMatchObject({
      title: "7@by-type",
      summary: "$>",
      data: "0@orders-1",
      isJson: false,
      positionStreamId: "by-type"
    })
  })
})

const isArray = (name: string): boolean => name === "entry" || name === "link"
const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@", isArray })
const elementsOnly = new XMLParser({ isArray })

describe("Atom XML feed", () => {
  it("is well-formed and carries title, id, updated, author, links and entries only", () => {
    const events = [plain(record(1)), plain(record(0, { data: '{"x":[1,2],"y":"<&>"}' }))]
    const body = renderStreamFeed(
      { ...backwardHead(events, "Body"), page: { events, lastEventNumber: 1, isEndOfStream: true } },
      "xml"
    )
    expect(body.startsWith('<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">')).toBe(
      true
    )
    expect(XMLValidator.validate(body)).toBe(true)
    const feed = xml.parse(body).feed
    expect(Object.keys(feed)).toEqual(["title", "id", "updated", "author", "link", "entry", "@xmlns"])
    expect(feed.author.name).toBe("Kurrent")
    expect(feed.link.map((l: Json) => l["@rel"])).toEqual(["self", "first", "previous", "metadata"])
    expect(feed.entry.map((e: Json) => e.title)).toEqual(["1@orders-1", "0@orders-1"])
    expect(Object.keys(feed.entry[0])).toEqual(["title", "id", "updated", "author", "summary", "link"])
  })

  it("embeds content as namespace-free XML when embed=content", () => {
    const events = [plain(record(0, { data: '{"x":[1,2],"y":"<&>"}' }))]
    const body = renderStreamFeed(backwardHead(events, "Content"), "xml")
    expect(XMLValidator.validate(body)).toBe(true)
    expect(body).toContain('<content type="application/xml"><eventStreamId xmlns="">orders-1</eventStreamId>')
    const content = elementsOnly.parse(body).feed.entry[0].content
    expect(content).toEqual({
      eventStreamId: "orders-1",
      eventNumber: 0,
      eventType: "OrderPlaced",
      eventId: Id,
      data: { x: [1, 2], y: "<&>" },
      metadata: ""
    })
  })

  it("renders $all feeds too", () => {
    const body = renderAllFeed(
      {
        baseUrl: Base,
        direction: "backward",
        from: 100,
        count: 20,
        embed: "None",
        page: { events: [plain(record(0))], nextPosition: 0, isEnd: true }
      },
      "xml"
    )
    expect(XMLValidator.validate(body)).toBe(true)
    expect(xml.parse(body).feed.title).toBe("All events")
  })
})

describe("feedSyntaxFor", () => {
  it("maps every JSON flavour to the JSON feed and every XML flavour to Atom XML", () => {
    for (const t of [
      "application/json",
      "application/vnd.kurrent.atom+json",
      "application/vnd.eventstore.atom+json",
      "application/vnd.kurrent.event+json",
      "application/vnd.eventstore.event+json",
      "application/vnd.kurrent.events+json",
      "application/vnd.eventstore.events+json"
    ])
      expect(feedSyntaxFor(t)).toBe("json")
    for (const t of [
      "application/atom+xml",
      "text/xml",
      "application/xml",
      "application/vnd.eventstore.event+xml",
      "application/vnd.eventstore.events+xml"
    ]) {
      expect(feedSyntaxFor(t)).toBe("xml")
    }
    expect(feedSyntaxFor("text/html")).toBeUndefined()
    expect(feedSyntaxFor("application/vnd.kurrent.streamdesc+json")).toBeUndefined()
  })
})
