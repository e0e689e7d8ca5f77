import { Either } from "effect"
import { describe, expect, it } from "vitest"
import type { JsonValue } from "@vellum/http"
import { defaultGroupSettings, type GroupSettings } from "../src/config/GroupSettings.js"
import {
  parseJsonGroupSettings,
  parseXmlGroupSettings,
  type InvalidGroupSettings
} from "../src/config/parseGroupSettings.js"
import { renderGroupSettings } from "../src/config/renderGroupSettings.js"

// A tiny JSON-to-tree converter for the tests (the HTTP layer's lenient reader produces the same shape).
const tree = (value: unknown): JsonValue => {
  if (value === null) return { kind: "null" }
  if (typeof value === "boolean") return { kind: "boolean", value }
  if (typeof value === "number") return { kind: "number", text: String(value) }
  if (typeof value === "string") return { kind: "string", value }
  if (Array.isArray(value)) return { kind: "array", items: value.map(tree) }
  return { kind: "object", members: Object.entries(value as object).map(([k, v]) => [k, tree(v)] as const) }
}
/** A body with one number written exactly as given (past what a JavaScript number holds). */
const withNumber = (name: string, text: string): JsonValue => ({
  kind: "object",
  members: [[name, { kind: "number", text }]]
})

const ok = (result: Either.Either<GroupSettings, InvalidGroupSettings>): GroupSettings => {
  if (Either.isLeft(result)) throw new Error(`refused: ${result.left.reason}`)
  return result.right
}
const refused = (result: Either.Either<GroupSettings, InvalidGroupSettings>) => {
  if (Either.isRight(result)) throw new Error("accepted")
  return { answer: result.left.answer, reason: result.left.reason }
}
const json = (value: unknown) => parseJsonGroupSettings(tree(value))

describe("the settings of a create/update body", () => {
  it("takes every default from an empty or unparsable body", () => {
    expect(ok(parseJsonGroupSettings(undefined))).toEqual(defaultGroupSettings)
    expect(ok(json({}))).toEqual(defaultGroupSettings)
    expect(ok(json([1, 2]))).toEqual(defaultGroupSettings)
    expect(ok(json("text"))).toEqual(defaultGroupSettings)
    expect(ok(json(null))).toEqual(defaultGroupSettings)
  })

  it("reads every setting, names matched ignoring case", () => {
    const settings = ok(
      json({
        ResolveLinkTos: true,
        STARTFROM: 7,
        messagetimeoutmilliseconds: 2500,
        extraStatistics: true,
        MaxRetryCount: 3,
        liveBufferSize: 40,
        BUFFERSIZE: 60,
        readBatchSize: 5,
        checkPointAfterMilliseconds: 300,
        minCheckPointCount: 2,
        maxCheckPointCount: 9,
        maxSubscriberCount: 4,
        NamedConsumerStrategy: "Pinned"
      })
    )
    expect(settings).toEqual({
      resolveLinkTos: true,
      startFrom: 7,
      startPosition: undefined,
      messageTimeoutMilliseconds: 2500,
      extraStatistics: true,
      maxRetryCount: 3,
      liveBufferSize: 40,
      bufferSize: 60,
      readBatchSize: 5,
      preferRoundRobin: false,
      checkPointAfterMilliseconds: 300,
      minCheckPointCount: 2,
      maxCheckPointCount: 9,
      maxSubscriberCount: 4,
      namedConsumerStrategy: "Pinned"
    })
  })

  it("converts as .NET binds: numbers and booleans given as strings, a JSON null leaves the default", () => {
    const settings = ok(json({ bufferSize: " 80 ", resolveLinkTos: "TRUE", extraStatistics: 1, maxRetryCount: null }))
    expect(settings.bufferSize).toBe(80)
    expect(settings.resolveLinkTos).toBe(true)
    expect(settings.extraStatistics).toBe(true)
    expect(settings.maxRetryCount).toBe(10)
    expect(refused(json({ namedConsumerStrategy: true })).reason).toBe("Consumer strategy true does not exist.")
    expect(refused(json({ namedConsumerStrategy: 7 })).reason).toBe("Consumer strategy 7 does not exist.")
  })

  it("treats a body with a value of the wrong type as no body: every default", () => {
    expect(ok(json({ bufferSize: 1, maxRetryCount: "many" }))).toEqual(defaultGroupSettings)
    expect(ok(json({ bufferSize: 1, readBatchSize: 1.5 }))).toEqual(defaultGroupSettings)
    expect(ok(json({ bufferSize: 1, liveBufferSize: 3_000_000_000 }))).toEqual(defaultGroupSettings)
    expect(ok(json({ bufferSize: 1, resolveLinkTos: { a: 1 } }))).toEqual(defaultGroupSettings)
    expect(ok(json({ bufferSize: 1, namedConsumerStrategy: [] }))).toEqual(defaultGroupSettings)
  })

  it("keeps a message timeout of 0", () => {
    expect(ok(json({ messageTimeoutMilliseconds: 0 })).messageTimeoutMilliseconds).toBe(0)
  })

  describe("start", () => {
    it("starts at the beginning by default and at the end with -1", () => {
      expect(ok(json({})).startFrom).toBe(0)
      expect(ok(json({ startFrom: -1 })).startFrom).toBe(-1)
    })
    it("refuses a start before -1 (the service's Fail)", () => {
      expect(refused(json({ startFrom: -2 }))).toEqual({
        answer: "Fail",
        reason: "Invalid Start From position: event number must be greater than or equal to -1."
      })
    })
    it("lets startPosition, parsed as a long, override startFrom", () => {
      const settings = ok(json({ startFrom: 3, startPosition: " 12 " }))
      expect(settings.startFrom).toBe(12)
      expect(settings.startPosition).toBe(" 12 ")
      expect(ok(json({ startPosition: 5 })).startFrom).toBe(5)
      expect(refused(json({ startFrom: 3, startPosition: "-5" })).answer).toBe("Fail")
    })
    it("answers 400 with a reason for an unparsable startPosition", () => {
      expect(refused(json({ startPosition: "C:1/P:1" }))).toEqual({
        answer: "BadRequest",
        reason: "Start Position 'C:1/P:1' must be a whole number (a long)"
      })
      expect(refused(json({ startPosition: "99999999999999999999" })).answer).toBe("BadRequest")
    })
    it("answers 400 for a start past what a JavaScript number holds exactly", () => {
      expect(refused(parseJsonGroupSettings(withNumber("startFrom", "9007199254740993")))).toEqual({
        answer: "BadRequest",
        reason: "Start From position (9007199254740993) must be at most 9007199254740991"
      })
      expect(ok(parseJsonGroupSettings(withNumber("startFrom", "9007199254740991"))).startFrom).toBe(
        Number.MAX_SAFE_INTEGER
      )
    })
  })

  describe("consumer strategy", () => {
    it("accepts the four strategies by their exact names", () => {
      for (const name of ["RoundRobin", "DispatchToSingle", "Pinned", "PinnedByCorrelation"] as const) {
        expect(ok(json({ namedConsumerStrategy: name })).namedConsumerStrategy).toBe(name)
      }
    })
    it("refuses any other name, case included, as the service's Fail", () => {
      expect(refused(json({ namedConsumerStrategy: "Fastest" }))).toEqual({
        answer: "Fail",
        reason: "Consumer strategy Fastest does not exist."
      })
      expect(refused(json({ namedConsumerStrategy: "roundrobin" })).reason).toBe(
        "Consumer strategy roundrobin does not exist."
      )
    })
    it("checks the strategy before the start", () => {
      expect(refused(json({ namedConsumerStrategy: "X", startFrom: -5 })).reason).toBe(
        "Consumer strategy X does not exist."
      )
    })
    it("uses preferRoundRobin only when the strategy is explicitly empty", () => {
      expect(ok(json({ namedConsumerStrategy: "", preferRoundRobin: true })).namedConsumerStrategy).toBe("RoundRobin")
      expect(ok(json({ namedConsumerStrategy: "", preferRoundRobin: false })).namedConsumerStrategy).toBe(
        "DispatchToSingle"
      )
      expect(ok(json({ namedConsumerStrategy: "" })).namedConsumerStrategy).toBe("DispatchToSingle")
      expect(ok(json({ preferRoundRobin: false })).namedConsumerStrategy).toBe("RoundRobin")
      expect(ok(json({ namedConsumerStrategy: "Pinned", preferRoundRobin: true })).namedConsumerStrategy).toBe("Pinned")
      // A JSON null is ignored as for every property: the default strategy stays.
      expect(ok(json({ namedConsumerStrategy: null, preferRoundRobin: false })).namedConsumerStrategy).toBe(
        "RoundRobin"
      )
    })
  })

  describe("buffer validation, in the reference's order", () => {
    it("says each message", () => {
      expect(refused(json({ bufferSize: 0 }))).toEqual({
        answer: "BadRequest",
        reason: "Buffer Size (0) must be positive"
      })
      expect(refused(json({ liveBufferSize: -3 })).reason).toBe("Live Buffer Size (-3) must be positive")
      expect(refused(json({ readBatchSize: 0 })).reason).toBe("Read Batch Size (0) must be positive")
      expect(refused(json({ bufferSize: 20, readBatchSize: 20 })).reason).toBe(
        "BufferSize (20) must be larger than ReadBatchSize (20)"
      )
      expect(refused(json({ bufferSize: 10 })).reason).toBe("BufferSize (10) must be larger than ReadBatchSize (20)")
    })
    it("reports the first failing check", () => {
      const all = { bufferSize: 0, liveBufferSize: 0, readBatchSize: 0 }
      expect(refused(json(all)).reason).toBe("Buffer Size (0) must be positive")
      expect(refused(json({ ...all, bufferSize: 5 })).reason).toBe("Live Buffer Size (0) must be positive")
      expect(refused(json({ ...all, bufferSize: 5, liveBufferSize: 5 })).reason).toBe(
        "Read Batch Size (0) must be positive"
      )
    })
    it("checks buffers before the strategy and the start", () => {
      expect(refused(json({ bufferSize: 0, namedConsumerStrategy: "X", startFrom: -9 })).reason).toBe(
        "Buffer Size (0) must be positive"
      )
      expect(refused(json({ bufferSize: 0, startPosition: "junk" })).reason).toBe("Buffer Size (0) must be positive")
    })
  })

  describe("XML bodies (the .NET serializer's form)", () => {
    const xml = (inner: string) =>
      `<?xml version="1.0" encoding="utf-8"?>\n<SubscriptionConfigData xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">${inner}</SubscriptionConfigData>`

    it("reads elements named exactly, their text converted", () => {
      const settings = ok(
        parseXmlGroupSettings(
          xml(
            "<ResolveLinktos>true</ResolveLinktos><StartFrom>-1</StartFrom><BufferSize> 64 </BufferSize>" +
              "<ExtraStatistics>1</ExtraStatistics><NamedConsumerStrategy>DispatchToSingle</NamedConsumerStrategy>"
          )
        )
      )
      expect(settings).toMatchObject({
        resolveLinkTos: true,
        startFrom: -1,
        bufferSize: 64,
        extraStatistics: true,
        namedConsumerStrategy: "DispatchToSingle"
      })
    })
    it("ignores elements in another case (XML names are exact)", () => {
      expect(ok(parseXmlGroupSettings(xml("<bufferSize>0</bufferSize>"))).bufferSize).toBe(500)
    })
    it("validates as JSON does", () => {
      expect(refused(parseXmlGroupSettings(xml("<ReadBatchSize>0</ReadBatchSize>"))).reason).toBe(
        "Read Batch Size (0) must be positive"
      )
    })
    it("applies preferRoundRobin to an empty strategy element", () => {
      const body = xml("<PreferRoundRobin>false</PreferRoundRobin><NamedConsumerStrategy />")
      expect(ok(parseXmlGroupSettings(body)).namedConsumerStrategy).toBe("DispatchToSingle")
    })
    it("takes every default from an empty, malformed, wrongly rooted or wrongly typed body", () => {
      expect(ok(parseXmlGroupSettings(""))).toEqual(defaultGroupSettings)
      expect(ok(parseXmlGroupSettings("<SubscriptionConfigData><BufferSize>1"))).toEqual(defaultGroupSettings)
      expect(ok(parseXmlGroupSettings("<Config><BufferSize>1</BufferSize></Config>"))).toEqual(defaultGroupSettings)
      expect(ok(parseXmlGroupSettings(xml("<BufferSize>1</BufferSize><ResolveLinktos>yes</ResolveLinktos>")))).toEqual(
        defaultGroupSettings
      )
      expect(ok(parseXmlGroupSettings(xml("<BufferSize><a>1</a></BufferSize>")))).toEqual(defaultGroupSettings)
    })
  })
})

describe("the config object of /info", () => {
  it("has every setting in the reference's order and spelling", () => {
    const rendered = renderGroupSettings(defaultGroupSettings)
    expect(Object.keys(rendered)).toEqual([
      "resolveLinktos",
      "startFrom",
      "startPosition",
      "messageTimeoutMilliseconds",
      "extraStatistics",
      "maxRetryCount",
      "liveBufferSize",
      "bufferSize",
      "readBatchSize",
      "preferRoundRobin",
      "checkPointAfterMilliseconds",
      "minCheckPointCount",
      "maxCheckPointCount",
      "maxSubscriberCount",
      "namedConsumerStrategy"
    ])
    expect(rendered).toEqual({
      resolveLinktos: false,
      startFrom: 0,
      startPosition: "0",
      messageTimeoutMilliseconds: 10000,
      extraStatistics: false,
      maxRetryCount: 10,
      liveBufferSize: 500,
      bufferSize: 500,
      readBatchSize: 20,
      preferRoundRobin: true,
      checkPointAfterMilliseconds: 1000,
      minCheckPointCount: 10,
      maxCheckPointCount: 500,
      maxSubscriberCount: 10,
      namedConsumerStrategy: "RoundRobin"
    })
  })

  it("shows the start as a number and as its text, and preferRoundRobin from the strategy", () => {
    const settings = ok(json({ startPosition: " 12", namedConsumerStrategy: "Pinned", preferRoundRobin: true }))
    const rendered = renderGroupSettings(settings)
    expect(rendered.startFrom).toBe(12)
    expect(rendered.startPosition).toBe("12")
    expect(rendered.preferRoundRobin).toBe(false)
    expect(renderGroupSettings({ ...settings, startFrom: -1 }).startPosition).toBe("-1")
  })
})
