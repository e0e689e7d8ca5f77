import { EventFlags, RecordKind, type EventRecord } from "@vellum/storage"
import { XMLParser, XMLValidator } from "fast-xml-parser"
import { describe, expect, it } from "vitest"
import {
  DescriptionDocumentReason,
  notFoundBody,
  renderDescriptionDocument,
  renderSingleEvent,
  type EmbedLevel
} from "../src/atom/index.js"

const Base = "https://host:2113"
const Id = "6b3f1a2e-0c4d-4e5f-8a9b-0c1d2e3f4a5b"

/** Event 3 of `orders-1`, a JSON event with data {"a":"1"}, unless overridden. */
const Stored: EventRecord = {
  kind: RecordKind.Event,
  logPosition: 300,
  flags: EventFlags.Json,
  eventNumber: 3,
  createdMicros: Date.UTC(2025, 2, 1, 10, 0, 0) * 1000 + 123456,
  eventId: Id,
  stream: "orders-1",
  eventType: "OrderPlaced",
  data: Buffer.from('{"a":"1"}'),
  metadata: Buffer.alloc(0)
}
const withData = (data: string | Buffer, json = true, metadata = ""): EventRecord => ({
  ...Stored,
  flags: json ? EventFlags.Json : 0,
  data: Buffer.isBuffer(data) ? data : Buffer.from(data),
  metadata: Buffer.from(metadata)
})

/** A document as text (entry documents come as the bytes of the reply). */
const text = (body: string | Uint8Array | undefined): string =>
  typeof body === "string" ? body : Buffer.from(body ?? []).toString("utf8")

const render = (contentType: string, event: EventRecord = Stored, embed: EmbedLevel = "None") =>
  renderSingleEvent({ baseUrl: Base, event: { event, link: undefined }, embed, contentType })

describe("single event documents", () => {
  it("atom+json: the entry with content at every embed level", () => {
    for (const type of ["application/vnd.kurrent.atom+json", "application/vnd.eventstore.atom+json"]) {
      const entry = JSON.parse(render(type) as string)
      expect(entry.title).toBe("3@orders-1")
      expect(entry.content).toEqual({
        eventStreamId: "orders-1",
        eventNumber: 3,
        eventType: "OrderPlaced",
        eventId: Id,
        data: { a: "1" },
        metadata: ""
      })
    }
    const rich = JSON.parse(render("application/vnd.kurrent.atom+json", Stored, "Body") as string)
    expect(rich.data).toBe('{"a":"1"}')
    expect(rich.content.data).toEqual({ a: "1" })
    expect(JSON.parse(render("application/vnd.kurrent.atom+json", withData("x", false)) as string).content).toBeNull()
  })

  it("atom+json is indented from column 0", () => {
    expect(text(render("application/vnd.kurrent.atom+json")).startsWith('{\n  "title": "3@orders-1",\n  "id":')).toBe(
      true
    )
  })

  it("a resolved link: the entry points at the target without content; data forms show the target's data", () => {
    const link: EventRecord = {
      ...Stored,
      stream: "by-type",
      eventNumber: 9,
      eventType: "$>",
      flags: 0,
      data: Buffer.from("3@orders-1")
    }
    const entry = JSON.parse(
      renderSingleEvent({
        baseUrl: Base,
        event: { event: Stored, link },
        embed: "None",
        contentType: "application/vnd.kurrent.atom+json"
      }) as string
    )
    expect(entry).toMatchObject({ title: "3@orders-1", summary: "$>", content: null })
    expect(
      renderSingleEvent({
        baseUrl: Base,
        event: { event: Stored, link },
        embed: "None",
        contentType: "application/json"
      })
    ).toBe('{\n  "a": "1"\n}')
  })

  it("a link whose target is gone has nothing to show", () => {
    const link: EventRecord = { ...Stored, eventType: "$>", flags: 0, data: Buffer.from("0@gone") }
    expect(
      renderSingleEvent({
        baseUrl: Base,
        event: { event: undefined, link },
        embed: "None",
        contentType: "application/json"
      })
    ).toBeUndefined()
  })

  it("atom+xml: an atom-prefixed entry with content in no namespace", () => {
    const body = text(render("application/atom+xml"))
    expect(
      body.startsWith(
        '<?xml version="1.0" encoding="utf-8"?><atom:entry xmlns:atom="http://www.w3.org/2005/Atom"><atom:title>3@orders-1</atom:title>'
      )
    ).toBe(true)
    expect(XMLValidator.validate(body)).toBe(true)
    const entry = new XMLParser().parse(body)["atom:entry"]
    expect(entry["atom:summary"]).toBe("OrderPlaced")
    expect(entry["atom:author"]["atom:name"]).toBe("Kurrent")
    expect(entry["atom:content"]).toEqual({
      eventStreamId: "orders-1",
      eventNumber: 3,
      eventType: "OrderPlaced",
      eventId: Id,
      data: { a: 1 },
      metadata: ""
    })
    expect(body).toContain('<atom:link href="https://host:2113/streams/orders-1/3" rel="edit" />')
  })

  it("unknown types get the route default, Atom XML", () => {
    expect(text(render("application/x-unknown")).startsWith("<?xml")).toBe(true)
  })

  it("application/json: only the data — parsed JSON, or a JSON string for other events", () => {
    expect(render("application/json")).toBe('{\n  "a": "1"\n}')
    expect(render("application/json", withData("[1, 2]"))).toBe("[\n  1,\n  2\n]")
    expect(render("application/json", withData('hello "you"', false))).toBe('"hello \\"you\\""')
    expect(render("application/json", withData('{"a":1}', false))).toBe('"{\\"a\\":1}"')
    expect(render("application/json", withData(""))).toBe('""')
  })

  it("text/xml and application/xml: the data under <data>, no declaration", () => {
    expect(render("text/xml")).toBe("<data><a>1</a></data>")
    expect(render("application/xml", withData('{"a":{"b":[1,2]}}'))).toBe("<data><a><b>1</b><b>2</b></a></data>")
    expect(render("text/xml", withData(""))).toBe("<data />")
    expect(render("text/xml", withData("x<y", false))).toBe("<data>x&lt;y</data>")
  })

  it("event+json: {eventStreamId, eventNumber, eventType, eventId, data, metadata}", () => {
    const expected = `{\n  "eventStreamId": "orders-1",\n  "eventNumber": 3,\n  "eventType": "OrderPlaced",\n  "eventId": "${Id}",\n  "data": {\n    "a": "1"\n  },\n  "metadata": {\n    "m": true\n  }\n}`
    expect(render("application/vnd.kurrent.event+json", withData('{"a":"1"}', true, '{"m":true}'))).toBe(expected)
    expect(render("application/vnd.eventstore.event+json", withData('{"a":"1"}', true, '{"m":true}'))).toBe(expected)
    expect(
      JSON.parse(render("application/vnd.kurrent.event+json", withData('{"a":1}', false, "m")) as string)
    ).toMatchObject({ data: '{"a":1}', metadata: "m" })
  })

  it("event+xml: the same object under <event>", () => {
    expect(render("application/vnd.eventstore.event+xml")).toBe(
      `<event><eventStreamId>orders-1</eventStreamId><eventNumber>3</eventNumber><eventType>OrderPlaced</eventType><eventId>${Id}</eventId><data><a>1</a></data><metadata /></event>`
    )
  })

  it("application/octet-stream: the stored bytes exactly", () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe])
    expect(Buffer.from(render("application/octet-stream", withData(bytes, false)) as Uint8Array).equals(bytes)).toBe(
      true
    )
  })

  it("text/html: the JSON entry at embed TryHarder", () => {
    const entry = JSON.parse(render("text/html", withData('{"t":1}', false)) as string)
    expect(entry).toMatchObject({
      isJson: true,
      data: '{\n  "t": 1\n}',
      positionEventNumber: 3,
      positionStreamId: "orders-1"
    })
  })

  it("404/410 bodies: {} for JSON types, empty otherwise", () => {
    expect(notFoundBody("application/json")).toBe("{}")
    expect(notFoundBody("application/vnd.kurrent.atom+json")).toBe("{}")
    expect(notFoundBody("application/vnd.eventstore.event+json")).toBe("{}")
    expect(notFoundBody("application/atom+xml")).toBe("")
    expect(notFoundBody("text/xml")).toBe("")
    expect(notFoundBody("application/octet-stream")).toBe("")
  })
})

describe("description document", () => {
  it("matches the reference document, with streamSubscription null when there are no groups", () => {
    expect(renderDescriptionDocument("orders-1", "application/vnd.kurrent.streamdesc+json")).toBe(`{
  "title": "Description document for 'orders-1'",
  "description": "The description document will be presented when no accept header is present or it was requested",
  "_links": {
    "self": {
      "href": "/streams/orders-1",
      "supportedContentTypes": [
        "application/vnd.kurrent.streamdesc+json"
      ]
    },
    "stream": {
      "href": "/streams/orders-1",
      "supportedContentTypes": [
        "application/atom+xml",
        "application/vnd.kurrent.atom+json",
        "application/vnd.eventstore.atom+json"
      ]
    },
    "streamSubscription": null
  }
}`)
    expect(
      JSON.parse(renderDescriptionDocument("s", "application/vnd.eventstore.streamdesc+json", []))._links
        .streamSubscription
    ).toBeNull()
    expect(DescriptionDocumentReason).toBe("Description Document")
  })

  it("lists persistent subscription groups with the competing types, relative hrefs, escaped stream", () => {
    const doc = JSON.parse(
      renderDescriptionDocument("$ce-orders", "application/vnd.eventstore.streamdesc+json", ["group1", "g2"])
    )
    expect(doc.title).toBe("Description document for '$ce-orders'")
    expect(doc._links.self).toEqual({
      href: "/streams/%24ce-orders",
      supportedContentTypes: ["application/vnd.eventstore.streamdesc+json"]
    })
    expect(doc._links.streamSubscription).toEqual(
      ["group1", "g2"].map((g) => ({
        href: `/subscriptions/%24ce-orders/${g}`,
        supportedContentTypes: [
          "application/vnd.eventstore.competingatom+xml",
          "application/vnd.kurrent.competingatom+json",
          "application/vnd.eventstore.competingatom+json"
        ]
      }))
    )
  })
})
