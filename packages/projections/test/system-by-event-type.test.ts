import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { byEventType, byEventTypeCheckpoint, readsEvent } from "../src/index.js"
import { aLink, aMetadataEvent, aTombstone, anEvent, faultOf, handlerOf, show } from "./systemEvents.js"

const handle = handlerOf(byEventType)

describe("$by_event_type", () => {
  it("is created empty and reads $all without links", () => {
    expect([byEventType.defaultQuery, byEventType.includeLinks]).toEqual(["", false])
    expect(readsEvent(aLink("a-1", 0, "0@b"), false)).toBe(false)
    expect(readsEvent(anEvent("a-1", 0), false)).toBe(true)
  })

  it("links each event into $et-{eventType}", () => {
    expect(handle(anEvent("stream", 4, { eventType: "OrderPlaced" })).map(show)).toEqual([
      "$et-OrderPlaced $> 4@stream {}"
    ])
  })

  it("skips links", () => {
    expect(handle(aLink("stream", 0, "1@other"))).toEqual([])
  })

  it("links a hard or soft delete into $et-$deleted, pointing into the deleted stream, marked $deleted", () => {
    expect(handle(aTombstone("stream")).map(show)).toEqual([
      '$et-$deleted $> 9223372036854775807@stream {"$deleted":-1}'
    ])
    expect(handle(aMetadataEvent("stream", 3, '{"$tb":9223372036854775807}')).map(show)).toEqual([
      '$et-$deleted $> 3@stream {"$deleted":-1}'
    ])
  })

  it("links other metadata events to themselves in the metastream", () => {
    expect(handle(aMetadataEvent("stream", 2, '{"$maxCount":3}')).map(show)).toEqual(["$et-$metadata $> 2@$$stream {}"])
  })

  it("refuses any source with `Empty source expected`", () => {
    expect(faultOf(byEventType, "\t\r\n ")).toBe("configured")
    expect(faultOf(byEventType, "first\r\n-")).toBe(
      "SystemProjectionConfigInvalid $by_event_type: Empty source expected"
    )
  })

  it("writes its progress as JSON $Checkpoint events into $et", () => {
    expect(byEventTypeCheckpoint('{"$c":10,"$p":10}')).toEqual({
      stream: "$et",
      eventType: "$Checkpoint",
      data: '{"$c":10,"$p":10}',
      isJson: true
    })
  })

  it("emits exactly one link per non-link event, into the stream of its type, in input order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("a", "b-1", "$$b-1"), fc.constantFrom("x", "y", "$>", "$z")), {
          maxLength: 30
        }),
        (records) => {
          const events = records.map(([stream, eventType], n) => anEvent(stream, n, { eventType }))
          const fed = events.filter((e) => readsEvent(e, false))
          const expected = fed.map((e) => `$et-${e.eventType} ${e.eventNumber}@${e.stream}`)
          expect(fed.flatMap(handle).map((w) => `${w.stream} ${w.data}`)).toEqual(expected)
        }
      )
    )
  })
})
