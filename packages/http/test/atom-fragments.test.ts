/**
 * Entries kept in parts with their records (atom/fragments.ts) give the bytes a whole render gives: for
 * any record (names, types and payloads with quotes, control characters, lone surrogates and the mark
 * character itself), any base URL (escapable characters included), every form (JSON or XML, every embed
 * level, feed entry or single-event document), links resolved, unresolved or hidden, and the same record
 * rendered again for another base or another reader; as text and as the bytes of a reply.
 */
import { EventFlags, RecordKind, type EventRecord, type ResolvedEvent } from "@vellum/storage"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { renderStreamFeed, streamFeedBytes, type EmbedLevel, type StreamFeedContext } from "../src/atom/index.js"
import {
  entryJson,
  entryXml,
  renderEntryJson,
  renderEntryXml,
  writeEntryJson,
  writeEntryXml
} from "../src/atom/entry.js"
import { Utf8Out } from "../src/atom/utf8Out.js"
import { BASE_MARK, isPlainBase } from "../src/atom/fragments.js"

const Levels: ReadonlyArray<EmbedLevel> = ["None", "Content", "Rich", "Body", "PrettyBody", "TryHarder"]

const nasty = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom('"q"', "a\\b", "x&y<z>", "\u0001\r\n", "\ud800", "\udc00x", BASE_MARK, "é中😀", "\u2028\u0085")
)

const payload = fc.oneof(
  nasty,
  fc.json({ maxDepth: 2 }),
  fc.constantFrom('{"a":"1","b":[1,2.50,{"c":null}]}', "null", "[]", "  {'x': 1} ", '{"m":"' + BASE_MARK + '"}')
)

const record = (stream: fc.Arbitrary<string>, position: number, type = nasty): fc.Arbitrary<EventRecord> =>
  fc
    .record({
      stream,
      eventType: type,
      eventNumber: fc.integer({ min: 0, max: 2 ** 40 }),
      micros: fc.integer({ min: 0, max: 2 ** 52 }),
      json: fc.boolean(),
      data: payload,
      metadata: fc.oneof(fc.constant(""), payload)
    })
    .map((r): EventRecord => ({
      kind: RecordKind.Event,
      logPosition: position,
      flags: r.json ? EventFlags.Json : 0,
      eventNumber: r.eventNumber,
      createdMicros: r.micros,
      eventId: "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4",
      stream: r.stream,
      eventType: r.eventType,
      data: Buffer.from(r.data),
      metadata: Buffer.from(r.metadata)
    }))

/** A link record whose data names its target (`n@stream`), sometimes with a number that is not one. */
const linkTo = (target: EventRecord, number: string | undefined): EventRecord => ({
  kind: RecordKind.Event,
  logPosition: 9_000,
  flags: 0,
  eventNumber: 3,
  createdMicros: 1_700_000_000_000_000,
  eventId: "0bf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4",
  stream: "$ce-orders",
  eventType: "$>",
  data: Buffer.from((number ?? String(target.eventNumber)) + "@" + target.stream),
  metadata: Buffer.from('{"$o":"x"}')
})

const resolvedEvent = fc.oneof(
  record(nasty, 100).map((event): ResolvedEvent => ({ event, link: undefined })),
  fc
    .tuple(record(nasty, 200), fc.option(nasty, { nil: undefined }), fc.boolean())
    .map(([event, number, shown]): ResolvedEvent => ({ event: shown ? event : undefined, link: linkTo(event, number) }))
)

const base = fc.oneof(
  fc.constantFrom("http://127.0.0.1:2113", "https://host:2113/prefix", "http://h"),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 })
)

/** Every form the feeds and single-event documents use. */
const forms = Levels.flatMap((embed) => [
  { embed, single: false },
  { embed, single: true }
])

/** An entry written between two texts, as the bytes of a reply. */
const bytesOf = (write: (out: Utf8Out) => void): Buffer => {
  const out = new Utf8Out()
  out.text("[")
  write(out)
  out.text("]")
  return out.toBuffer()
}

const expectSameAsWhole = (resolved: ResolvedEvent, baseUrl: string) => {
  for (const { embed, single } of forms) {
    const depth = single ? 0 : 2
    const prefix = single ? "atom:" : ""
    expect(bytesOf((out) => writeEntryJson(out, resolved, baseUrl, embed, single, depth))).toEqual(
      Buffer.from("[" + renderEntryJson(resolved, baseUrl, embed, single, depth) + "]")
    )
    expect(bytesOf((out) => writeEntryXml(out, resolved, baseUrl, embed, single, prefix))).toEqual(
      Buffer.from("[" + renderEntryXml(resolved, baseUrl, embed, single, prefix) + "]")
    )
    expect(entryJson(resolved, baseUrl, embed, single, single ? 0 : 2)).toBe(
      renderEntryJson(resolved, baseUrl, embed, single, single ? 0 : 2)
    )
    expect(entryXml(resolved, baseUrl, embed, single, single ? "atom:" : "")).toBe(
      renderEntryXml(resolved, baseUrl, embed, single, single ? "atom:" : "")
    )
  }
}

describe("entries kept in parts with their records", () => {
  it("give the bytes of a whole render, for any record and base, rendered again for another base", () => {
    fc.assert(
      fc.property(resolvedEvent, base, base, (resolved, first, second) => {
        expectSameAsWhole(resolved, first)
        // The second render of each form comes from the kept parts (when the base allows).
        expectSameAsWhole(resolved, second)
        expectSameAsWhole(resolved, first)
      }),
      { numRuns: 100 }
    )
  })

  it("a link record shown to one reader and hidden from the next renders what each may see", () => {
    fc.assert(
      fc.property(record(nasty, 300), base, (target, baseUrl) => {
        const link = linkTo(target, undefined)
        const shown: ResolvedEvent = { event: target, link }
        const hidden: ResolvedEvent = { event: undefined, link }
        expectSameAsWhole(shown, baseUrl)
        expectSameAsWhole(hidden, baseUrl)
        expectSameAsWhole(shown, baseUrl)
      }),
      { numRuns: 40 }
    )
  })

  it("a base is plain only if neither JSON nor XML escapes any of its characters", () => {
    for (const plain of ["http://127.0.0.1:2113", "https://h:1/a b/~!$'()*+,;=%20"])
      expect(isPlainBase(plain)).toBe(true)
    for (const escaped of [
      'http://h"',
      "http://h\\",
      "http://h&",
      "http://h<",
      "http://h>",
      "http://é",
      "\u0007",
      "h\u007f"
    ])
      expect(isPlainBase(escaped)).toBe(false)
  })

  it("a whole page rendered for two hosts, in both syntaxes, is the page rendered for each from fresh records", () => {
    const events = Array.from({ length: 20 }, (_, i): ResolvedEvent => ({
      event: {
        kind: RecordKind.Event,
        logPosition: i * 300,
        flags: EventFlags.Json,
        eventNumber: 19 - i,
        createdMicros: 1_700_000_000_000_000 + i,
        eventId: "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4",
        stream: "orders-1",
        eventType: "OrderPlaced",
        data: Buffer.from(`{"order":${i},"lines":[{"sku":"a\\"b","qty":2.50}]}`),
        metadata: Buffer.from(i % 2 === 0 ? "" : '{"by":"me"}')
      },
      link: undefined
    }))
    const fresh = (): Array<ResolvedEvent> =>
      events.map((e) => ({ event: { ...e.event!, data: Buffer.from(e.event!.data) }, link: undefined }))
    const page = (baseUrl: string, embed: EmbedLevel, list: ReadonlyArray<ResolvedEvent>): StreamFeedContext => ({
      baseUrl,
      stream: "orders-1",
      direction: "backward",
      from: -1,
      count: 20,
      embed,
      contentType: "application/vnd.eventstore.atom+json",
      page: { events: list, lastEventNumber: 19, isEndOfStream: false }
    })
    for (const embed of Levels)
      for (const syntax of ["json", "xml"] as const) {
        const a = renderStreamFeed(page("http://a:2113", embed, events), syntax)
        const b = renderStreamFeed(page("https://b.example/x", embed, events), syntax)
        expect(b).not.toBe(a)
        expect(a).toBe(renderStreamFeed(page("http://a:2113", embed, fresh()), syntax))
        expect(b).toBe(renderStreamFeed(page("https://b.example/x", embed, fresh()), syntax))
        expect(streamFeedBytes(page("https://b.example/x", embed, events), syntax)).toEqual(Buffer.from(b))
      }
  })
})
