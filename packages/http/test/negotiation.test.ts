/**
 * Content negotiation, request-target decoding and route matching as
 * pure functions.
 */
import { describe, it, assert } from "vitest"
import { parseAccept, selectRequestType, selectResponseType } from "../src/index.js"
import { acceptsAnything } from "../src/mediaType.js"
import { decodeSegment, parseTarget } from "../src/requestTarget.js"
import { makeRouter } from "../src/router.js"
import { Effect } from "effect"
import type { RouteDef } from "../src/index.js"
import { AtomCodecs, FeedCodecs, SingleEventCodecs } from "../src/streams/mediaTypes.js"

const chosen = (codecs: ReadonlyArray<string>, accept: string | undefined, format: string | null = null) => {
  const choice = selectResponseType(codecs, format, accept)
  return choice._tag === "Chosen" ? choice.type : choice._tag
}

describe("response codec selection", () => {
  const table: ReadonlyArray<[string | undefined, ReadonlyArray<string>, string]> = [
    [undefined, FeedCodecs, "application/vnd.kurrent.streamdesc+json"],
    ["", FeedCodecs, "application/vnd.kurrent.streamdesc+json"],
    ["*/*", FeedCodecs, "application/vnd.kurrent.streamdesc+json"],
    ["*/*", SingleEventCodecs, "application/atom+xml"],
    ["application/json", FeedCodecs, "application/json"],
    ["APPLICATION/JSON", FeedCodecs, "application/json"],
    ["application/json, text/plain, */*", FeedCodecs, "application/json"],
    ["text/*", FeedCodecs, "text/xml"],
    ["application/*", FeedCodecs, "application/vnd.kurrent.streamdesc+json"],
    ["text/xml;q=0.5, application/vnd.eventstore.atom+json", FeedCodecs, "application/vnd.eventstore.atom+json"],
    ["text/xml;q=0.5, application/json;q=0.9", FeedCodecs, "application/json"],
    // q=0 is not excluded, it sorts last.
    ["application/json;q=0", FeedCodecs, "application/json"],
    ["image/png;q=1, application/json;q=0", FeedCodecs, "application/json"],
    // Equal q keeps the header's order.
    ["text/xml, application/json", FeedCodecs, "text/xml"],
    ["application/octet-stream", SingleEventCodecs, "application/octet-stream"],
    ["application/octet-stream", FeedCodecs, "NotAcceptable"],
    ["image/png", FeedCodecs, "NotAcceptable"],
    ["garbage", FeedCodecs, "NotAcceptable"],
    ["text/html", FeedCodecs, "text/html"]
  ]
  for (const [accept, codecs, expected] of table) {
    it(`Accept ${JSON.stringify(accept)} → ${expected}`, () => assert.strictEqual(chosen(codecs, accept), expected))
  }

  it("?format= overrides Accept, is case-insensitive, and unknown values are their own outcome", () => {
    assert.strictEqual(chosen(FeedCodecs, "application/json", "xml"), "text/xml")
    assert.strictEqual(chosen(FeedCodecs, undefined, "ATOM"), "application/atom+xml")
    assert.strictEqual(chosen(FeedCodecs, undefined, "atomxj"), "application/vnd.kurrent.atom+json")
    assert.strictEqual(chosen(FeedCodecs, undefined, "text"), "NotAcceptable")
    assert.strictEqual(chosen(FeedCodecs, undefined, "atomsvc"), "NotAcceptable")
    assert.strictEqual(chosen(FeedCodecs, undefined, "yaml"), "UnknownFormat")
    assert.strictEqual(chosen(FeedCodecs, "text/xml", ""), "text/xml")
  })

  it("parseAccept sorts stably by q and drops ranges without a slash", () => {
    assert.deepStrictEqual(
      parseAccept("a/b;q=0.1, c/d, nonsense, e/f;q=0.5, g/h").map((r) => r.range),
      ["c/d", "g/h", "e/f", "a/b"]
    )
  })

  it("the description-document rule: no Accept, or the literal any-type range", () => {
    assert.isTrue(acceptsAnything(undefined))
    assert.isTrue(acceptsAnything("application/json, */*"))
    assert.isFalse(acceptsAnything("application/vnd.kurrent.streamdesc+json"))
    assert.isFalse(acceptsAnything("*/*;q=0.8"))
  })
})

describe("request codec selection", () => {
  it("exact, case-sensitive type; UTF-8 charset only; never for octet-stream; missing → none", () => {
    assert.strictEqual(selectRequestType(AtomCodecs, "application/json"), "application/json")
    assert.strictEqual(selectRequestType(AtomCodecs, "application/json; charset=UTF-8"), "application/json")
    assert.strictEqual(selectRequestType(AtomCodecs, "Application/Json"), undefined)
    assert.strictEqual(selectRequestType(AtomCodecs, "application/json; charset=latin1"), undefined)
    assert.strictEqual(selectRequestType(AtomCodecs, "application/octet-stream"), "application/octet-stream")
    assert.strictEqual(selectRequestType(AtomCodecs, "application/octet-stream; charset=utf-8"), undefined)
    assert.strictEqual(selectRequestType(AtomCodecs, undefined), undefined)
    assert.strictEqual(selectRequestType(AtomCodecs, "json"), undefined)
    assert.strictEqual(selectRequestType(AtomCodecs, "image/png"), undefined)
  })
})

describe("request targets", () => {
  const segmentsOf = (url: string) => {
    const target = parseTarget(url)
    return target._tag === "Target" ? target.segments : target.reason
  }

  it("decodes each segment separately, refusing escapes that do not decode", () => {
    assert.deepStrictEqual(segmentsOf("/streams/a%2Fb/%24all"), ["streams", "a/b", "$all"])
    assert.deepStrictEqual(segmentsOf("/streams/x/"), ["streams", "x", ""])
    assert.strictEqual(decodeSegment("100%"), undefined)
    assert.strictEqual(decodeSegment("%zz%41"), undefined)
    assert.strictEqual(decodeSegment("%E2%82%AC"), "€")
    assert.strictEqual(decodeSegment("%FF%FE"), undefined)
    assert.strictEqual(decodeSegment("a+b"), "a+b")
  })

  it("splits the query and accepts absolute-form targets", () => {
    const target = parseTarget("http://host:2113/streams/s?embed=body#frag")
    assert.strictEqual(target._tag === "Target" ? target.rawPath : undefined, "/streams/s")
    assert.strictEqual(target._tag === "Target" ? target.query.get("embed") : undefined, "body")
    assert.strictEqual(parseTarget("*")._tag, "Invalid")
  })
})

describe("route matching", () => {
  const route = (method: RouteDef["method"], path: string): RouteDef => ({
    method,
    path,
    access: "anonymous",
    responseCodecs: [],
    handle: () => Effect.succeed({ status: 200, headers: {} })
  })
  const router = makeRouter([
    route("GET", "/streams/{stream}/{event}"),
    route("GET", "/streams/{stream}/metadata"),
    route("POST", "/streams/{stream}/metadata"),
    route("GET", "/streams/$all"),
    route("GET", "/streams/{stream}"),
    route("POST", "/streams/{stream}"),
    route("GET", "/stats/{*path}")
  ])
  const bound = (method: string, segments: ReadonlyArray<string>) => {
    const match = router.match(segments)
    if (match._tag === "NotFound") return "NotFound"
    const b = match.forMethod(method)
    return b === undefined ? "405" : `${b.route.path} ${JSON.stringify(b.params)}`
  }

  it("literal segments beat placeholders, per method", () => {
    assert.strictEqual(bound("GET", ["streams", "s", "metadata"]), '/streams/{stream}/metadata {"stream":"s"}')
    assert.strictEqual(bound("GET", ["streams", "s", "7"]), '/streams/{stream}/{event} {"stream":"s","event":"7"}')
    assert.strictEqual(bound("GET", ["streams", "$all"]), "/streams/$all {}")
    assert.strictEqual(bound("POST", ["streams", "$all"]), '/streams/{stream} {"stream":"$all"}')
    assert.strictEqual(bound("DELETE", ["streams", "s"]), "405")
    assert.strictEqual(bound("GET", ["streams", ""]), "NotFound")
    assert.strictEqual(bound("GET", ["nothing"]), "NotFound")
  })

  it("greedy placeholders take one or more trailing segments", () => {
    assert.strictEqual(bound("GET", ["stats", "proc", "mem"]), '/stats/{*path} {"path":"proc/mem"}')
    assert.strictEqual(bound("GET", ["stats", ""]), '/stats/{*path} {"path":""}')
    assert.strictEqual(bound("GET", ["stats"]), "NotFound")
  })

  it("allowed methods are those of every matching template", () => {
    const match = router.match(["streams", "s", "metadata"])
    assert.strictEqual(match._tag, "Found")
    if (match._tag === "Found") assert.deepStrictEqual(match.allowed, ["GET", "POST"])
  })
})
