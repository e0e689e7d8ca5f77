import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { byCategory, readsEvent } from "../src/index.js"
import { aLink, aMetadataEvent, aTombstone, anEvent, handlerOf, show } from "./systemEvents.js"

const handle = handlerOf(byCategory)

describe("$by_category", () => {
  it("is created with `first\\r\\n-` and reads $all with links", () => {
    expect(byCategory.defaultQuery).toBe("first\r\n-")
    expect(byCategory.includeLinks).toBe(true)
  })

  it("links an event of a categorised stream into $ce-{category}, with $o = its stream", () => {
    expect(handle(anEvent("cat1-stream1", 10)).map(show)).toEqual(['$ce-cat1 $> 10@cat1-stream1 {"$o":"cat1-stream1"}'])
  })

  it("splits by the configured rule", () => {
    const last = handlerOf(byCategory, "last\r\n-")
    expect(last(anEvent("shopping-cart-1", 0)).map(show)).toEqual([
      '$ce-shopping-cart $> 0@shopping-cart-1 {"$o":"shopping-cart-1"}'
    ])
  })

  it("recategorises a link: its own target, into the category of the stream it lies in", () => {
    expect(handle(aLink("cat2-stream2", 20, "10@cat1-stream1")).map(show)).toEqual([
      '$ce-cat2 $> 10@cat1-stream1 {"$o":"cat2-stream2"}'
    ])
  })

  it("ignores streams without a category and `$` streams", () => {
    expect(handle(anEvent("stream", 0))).toEqual([])
    expect(handle(anEvent("$ce-cat1", 0))).toEqual([])
    expect(handle(aMetadataEvent("cat3-stream3", 20, "{}"))).toEqual([])
  })

  it("links a hard delete (tombstone) into the deleted stream's category, marked $deleted", () => {
    expect(handle(aTombstone("cat5-stream5")).map(show)).toEqual([
      '$ce-cat5 $> 9223372036854775807@cat5-stream5 {"$o":"cat5-stream5","$deleted":-1}'
    ])
  })

  it("links a soft delete ($tb = long.MaxValue in $$stream) into the deleted stream's category", () => {
    expect(handle(aMetadataEvent("cat4-stream4", 20, '{ "$tb": 9223372036854775807 }')).map(show)).toEqual([
      '$ce-cat4 $> 20@$$cat4-stream4 {"$o":"cat4-stream4","$deleted":-1}'
    ])
    // A truncation that is not a delete is just metadata of a `$` stream.
    expect(handle(aMetadataEvent("cat4-stream4", 21, '{ "$tb": 5 }'))).toEqual([])
  })

  it("emits one link per categorised non-`$` event it is fed, into $ce-{category}, in input order", () => {
    const streamId = fc.oneof(
      fc.stringMatching(/^[a-c$]{0,2}-?[a-c]{0,2}(-[a-c]{1,2})?$/),
      fc.constantFrom("a-1", "$ce-a", "$$a-1", "-x", "plain")
    )
    fc.assert(
      fc.property(fc.array(fc.tuple(streamId, fc.nat(5)), { maxLength: 30 }), (records) => {
        const events = records.map(([stream, n]) => anEvent(stream, n)).filter((e) => readsEvent(e, true))
        const writes = events.flatMap(handle)
        const expected = events
          .filter((e) => !e.stream.startsWith("$") && e.stream.indexOf("-") > 0)
          .map((e) => `$ce-${e.stream.slice(0, e.stream.indexOf("-"))} $> ${e.eventNumber}@${e.stream}`)
        expect(writes.map((w) => `${w.stream} ${w.eventType} ${w.data}`)).toEqual(expected)
      })
    )
  })
})
