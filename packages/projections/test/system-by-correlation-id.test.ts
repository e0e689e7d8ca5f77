import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { byCorrelationId, eventTimestamp } from "../src/index.js"
import { aLink, anEvent, faultOf, handlerOf, show, withMetadata } from "./systemEvents.js"

const handle = handlerOf(byCorrelationId)
const at = 1_700_000_000_123_456 // 2023-11-14T22:13:20.123456Z

describe("$by_correlation_id", () => {
  it("is created with the $correlationId property and reads $all without links", () => {
    expect(byCorrelationId.defaultQuery).toBe('{"correlationIdProperty":"$correlationId"}')
    expect(byCorrelationId.includeLinks).toBe(false)
  })

  it("links an event with a correlation id into $bc-{id}, with its time to the microsecond", () => {
    const event = withMetadata(anEvent("cat1-stream1", 10, { createdMicros: at }), '{"$correlationId":"testing1"}')
    expect(handle(event).map(show)).toEqual([
      '$bc-testing1 $> 10@cat1-stream1 {"$eventTimestamp":"2023-11-14T22:13:20.123456Z"}'
    ])
  })

  it("gives a link its own target, and the link's id and metadata under $link", () => {
    const link = {
      ...aLink("cat2-stream2", 20, "10@cat1-stream1", '{"$correlationId":"testing2", "$whatever":"hello"}')
    }
    const [write] = handle({ ...link, createdMicros: at })
    expect(write.stream).toBe("$bc-testing2")
    expect(write.data).toBe("10@cat1-stream1")
    expect(write.extraMetadata).toEqual([
      ["$eventTimestamp", '"2023-11-14T22:13:20.123456Z"'],
      [
        "$link",
        `{\n  "eventId": "${link.eventId}",\n  "metadata": {\n    "$correlationId": "testing2",\n    "$whatever": "hello"\n  }\n}`
      ]
    ])
  })

  it("skips events whose metadata is not a JSON object or has no string correlation id", () => {
    for (const metadata of ["", "non_json_metadata", "{}", "[]", '{"$correlationId":null}', '{"$correlationId":{}}'])
      expect(handle(withMetadata(anEvent("s", 0), metadata))).toEqual([])
    expect(handle(withMetadata(anEvent("s", 0), '{"other":"x"}'))).toEqual([])
  })

  it("uses the configured property", () => {
    const custom = handlerOf(byCorrelationId, '{"correlationIdProperty":"$myCorrelationId"}')
    expect(custom(withMetadata(anEvent("s", 1), '{"$myCorrelationId":"testing1"}')).map((w) => w.stream)).toEqual([
      "$bc-testing1"
    ])
    expect(custom(withMetadata(anEvent("s", 1), '{"$correlationId":"testing1"}'))).toEqual([])
    expect(handlerOf(byCorrelationId, " ")(withMetadata(anEvent("s", 1), '{"$correlationId":"c"}'))).toHaveLength(1)
  })

  it("refuses a config that is not JSON with a string correlationIdProperty", () => {
    const fault =
      "SystemProjectionConfigInvalid $by_correlation_id: Could not parse projection source. Please make sure the source is a valid JSON string with a property: 'correlationIdProperty' having a string value"
    for (const query of ['{"thisisnotvalid":"$myCorrelationId"}', "not json", '{"correlationIdProperty":3}', '["x"]'])
      expect(faultOf(byCorrelationId, query)).toBe(fault)
  })

  it("writes timestamps in UTC with six fractional digits", () => {
    expect(eventTimestamp(0)).toBe("1970-01-01T00:00:00.000000Z")
    expect(eventTimestamp(1_000_001)).toBe("1970-01-01T00:00:01.000001Z")
    expect(eventTimestamp(-1)).toBe("1969-12-31T23:59:59.999999Z")
  })

  it("links each event with a string correlation id once, into $bc-{id}, in input order", () => {
    const metadata = fc.oneof(
      fc.string().map((id) => JSON.stringify({ $correlationId: id })),
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc.string()
    )
    fc.assert(
      fc.property(fc.array(metadata, { maxLength: 20 }), (metadatas) => {
        const events = metadatas.map((m, n) => withMetadata(anEvent("s", n), m))
        const expected = events.flatMap((e) => {
          let parsed: unknown
          try {
            parsed = JSON.parse(Buffer.from(e.metadata).toString("utf8"))
          } catch {
            return []
          }
          const id =
            typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
              ? Object.getOwnPropertyDescriptor(parsed, "$correlationId")?.value
              : undefined
          return typeof id === "string" ? [`$bc-${id} ${e.eventNumber}@s`] : []
        })
        expect(events.flatMap(handle).map((w) => `${w.stream} ${w.data}`)).toEqual(expected)
      })
    )
  })
})
