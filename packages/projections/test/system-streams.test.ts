import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { readsEvent, streamByCategory, streams } from "../src/index.js"
import { aLink, aMetadataEvent, aTombstone, anEvent, faultOf, handlerOf, show } from "./systemEvents.js"

describe("$stream_by_category", () => {
  const handle = handlerOf(streamByCategory)

  it("is created with `first\\r\\n-` and reads $all with links", () => {
    expect([streamByCategory.defaultQuery, streamByCategory.includeLinks]).toEqual(["first\r\n-", true])
  })

  it("names a categorised stream in $category-{category} at its first event only, as a non-JSON $@", () => {
    expect(handle(anEvent("account-1", 0)).map(show)).toEqual(["$category-account $@ account-1 {}"])
    expect(handle(anEvent("account-1", 1))).toEqual([])
    expect(handle(aLink("orders-7", 0, "3@account-1")).map(show)).toEqual(["$category-orders $@ orders-7 {}"])
  })

  it("ignores streams without a category, `$` streams and deletions", () => {
    expect(handle(anEvent("stream", 0))).toEqual([])
    expect(handle(aMetadataEvent("account-1", 0, "{}"))).toEqual([])
    expect(handle(aTombstone("account-1"))).toEqual([])
  })

  it("splits by the configured rule", () => {
    expect(handlerOf(streamByCategory, "last\n-")(anEvent("shopping-cart-1", 0)).map(show)).toEqual([
      "$category-shopping-cart $@ shopping-cart-1 {}"
    ])
  })
})

describe("$streams", () => {
  const handle = handlerOf(streams)

  it("is created empty and reads $all with links", () => {
    expect([streams.defaultQuery, streams.includeLinks]).toEqual(["", true])
  })

  it("links each stream at its first event into $streams, metastreams of non-`$` streams too", () => {
    expect(handle(anEvent("stream", 0)).map(show)).toEqual(["$streams $> 0@stream {}"])
    expect(handle(aLink("some-links", 0, "4@stream")).map(show)).toEqual(["$streams $> 0@some-links {}"])
    const meta = aMetadataEvent("stream", 0, '{"$maxCount":3}')
    expect(readsEvent(meta, true)).toBe(true)
    expect(handle(meta).map(show)).toEqual(["$streams $> 0@$$stream {}"])
    expect(handle(anEvent("stream", 1))).toEqual([])
  })

  it("is not fed `$` streams nor metastreams of `$` streams", () => {
    expect(readsEvent(anEvent("$ce-account", 0), true)).toBe(false)
    expect(readsEvent(aMetadataEvent("$ce-account", 0, "{}"), true)).toBe(false)
  })

  it("refuses any source with the reference's message", () => {
    expect(faultOf(streams, " \r\n")).toBe("configured")
    expect(faultOf(streams, "x")).toBe(
      "SystemProjectionConfigInvalid $streams: Cannot initialize categorize stream projection handler.  No source is allowed."
    )
  })

  it("links exactly the streams it is fed, once each, in the order they first appear", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b-1", "$x", "$$a", "$$$x", "c"), { maxLength: 30 }), (names) => {
        const next = new Map<string, number>()
        const events = names.map((stream) => {
          const n = next.get(stream) ?? 0
          next.set(stream, n + 1)
          return anEvent(stream, n)
        })
        const fed = events.filter((e) => readsEvent(e, true))
        const expected = [...new Set(names)].filter((s) => s === "$$a" || !s.startsWith("$")).map((s) => `0@${s}`)
        expect(fed.flatMap(handle).map((w) => w.data)).toEqual(expected)
      })
    )
  })
})
