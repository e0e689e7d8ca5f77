import { describe, expect, it } from "vitest"
import {
  ImmutableCacheControl,
  NoCacheControl,
  allFeedCache,
  cacheHeaders,
  contentTypeHash,
  ifNoneMatchPosition,
  positionETag,
  singleEventCache,
  streamFeedCache
} from "../src/atom/index.js"

const Json = "application/vnd.kurrent.atom+json"
const Xml = "application/atom+xml"

describe("ETags", () => {
  it("are `<position>;<hash of the media type>`, stable and different per type", () => {
    expect(contentTypeHash(Json)).toBe(contentTypeHash(Json))
    expect(contentTypeHash(Json)).not.toBe(contentTypeHash(Xml))
    expect(Number.isInteger(contentTypeHash(Json))).toBe(true)
    expect(Math.abs(contentTypeHash(Json))).toBeLessThanOrEqual(2 ** 31)
    expect(positionETag(24, Json)).toBe(`24;${contentTypeHash(Json)}`)
  })

  it("If-None-Match gives back the position only for an ETag of the same type", () => {
    const tag = positionETag(24, Json)
    expect(ifNoneMatchPosition(`"${tag}"`, Json)).toBe(24)
    expect(ifNoneMatchPosition(tag, Json)).toBe(24)
    expect(ifNoneMatchPosition(`"${tag}"`, Xml)).toBeUndefined()
    expect(ifNoneMatchPosition(undefined, Json)).toBeUndefined()
    expect(ifNoneMatchPosition(`"24;${contentTypeHash(Json)};x"`, Json)).toBeUndefined()
    expect(ifNoneMatchPosition(`"x;${contentTypeHash(Json)}"`, Json)).toBeUndefined()
    expect(ifNoneMatchPosition(`"24"`, Json)).toBeUndefined()
    expect(ifNoneMatchPosition(`"-1;${contentTypeHash(Json)}"`, Json)).toBe(-1)
  })
})

describe("which reads are immutable", () => {
  it("backward stream pages: not the head and not starting past the last event", () => {
    expect(streamFeedCache("backward", 10, 20, 24)).toEqual({ immutable: true, eTagPosition: undefined })
    expect(streamFeedCache("backward", 24, 20, 24).immutable).toBe(true)
    expect(streamFeedCache("backward", -1, 20, 24)).toEqual({ immutable: false, eTagPosition: 24 })
    expect(streamFeedCache("backward", 25, 20, 24)).toEqual({ immutable: false, eTagPosition: 24 })
  })

  it("forward stream pages once full", () => {
    expect(streamFeedCache("forward", 0, 20, 24).immutable).toBe(true)
    expect(streamFeedCache("forward", 5, 20, 24).immutable).toBe(true)
    expect(streamFeedCache("forward", 6, 20, 24)).toEqual({ immutable: false, eTagPosition: 24 })
    expect(streamFeedCache("forward", 25, 20, 24)).toEqual({ immutable: false, eTagPosition: 24 })
  })

  it("$all pages: backward unless head or past the end, forward when full", () => {
    expect(allFeedCache("backward", false, 500, 3, 20, 1000).immutable).toBe(true)
    expect(allFeedCache("backward", false, 1000, 3, 20, 1000).immutable).toBe(true)
    expect(allFeedCache("backward", true, 1000, 3, 20, 1000)).toEqual({ immutable: false, eTagPosition: 1000 })
    expect(allFeedCache("backward", false, 1001, 0, 20, 1000)).toEqual({ immutable: false, eTagPosition: 1000 })
    expect(allFeedCache("forward", false, 0, 20, 20, 1000).immutable).toBe(true)
    expect(allFeedCache("forward", false, 0, 19, 20, 1000)).toEqual({ immutable: false, eTagPosition: 1000 })
  })

  it("single events: by number always, head never (ETag of the record read)", () => {
    expect(singleEventCache(false, 3)).toEqual({ immutable: true, eTagPosition: undefined })
    expect(singleEventCache(true, 3)).toEqual({ immutable: false, eTagPosition: 3 })
    expect(singleEventCache(true, undefined)).toEqual({ immutable: false, eTagPosition: undefined })
  })
})

describe("cache headers", () => {
  it("immutable: a year, private, no ETag", () => {
    expect(cacheHeaders({ immutable: true, eTagPosition: undefined }, { contentType: Json })).toEqual({
      "Cache-Control": "max-age=31536000, private",
      Vary: "Accept"
    })
    expect(ImmutableCacheControl).toBe("max-age=31536000, private")
  })

  it("otherwise no-cache with the quoted ETag, or the stream's $cacheControl", () => {
    const decision = { immutable: false, eTagPosition: 24 }
    expect(cacheHeaders(decision, { contentType: Json })).toEqual({
      "Cache-Control": "max-age=0, no-cache, must-revalidate",
      Vary: "Accept",
      ETag: `"24;${contentTypeHash(Json)}"`
    })
    expect(cacheHeaders(decision, { contentType: Json, cacheControlSeconds: 30 })["Cache-Control"]).toBe(
      "max-age=30, private"
    )
    expect(cacheHeaders({ immutable: false, eTagPosition: undefined }, { contentType: Json })["ETag"]).toBeUndefined()
  })

  it("DisableHttpCaching forces no-cache everywhere", () => {
    expect(
      cacheHeaders({ immutable: true, eTagPosition: undefined }, { contentType: Json, disableHttpCaching: true })[
        "Cache-Control"
      ]
    ).toBe(NoCacheControl)
    expect(
      cacheHeaders(
        { immutable: false, eTagPosition: 1 },
        { contentType: Json, cacheControlSeconds: 30, disableHttpCaching: true }
      )["Cache-Control"]
    ).toBe(NoCacheControl)
  })
})
