import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ConsumerStrategies, defaultGroupSettings, type GroupSettings } from "../src/config/GroupSettings.js"
import {
  checkpointStreamMetadata,
  decodeCheckpoint,
  decodeStreamCheckpoint,
  encodeCheckpoint,
  encodeStreamCheckpoint
} from "../src/persisted/checkpoint.js"
import { dotNetDate } from "../src/persisted/dotNetJson.js"
import {
  decodeGroupDefinitions,
  definitionsStreamMetadata,
  encodeGroupDefinitions,
  type GroupDefinitions
} from "../src/persisted/groupDefinitions.js"
import {
  decodeParkedMetadata,
  encodeParkedMessage,
  linkData,
  parkedStreamMetadata,
  parseLinkData
} from "../src/persisted/parkedMessages.js"
import {
  checkpointStream,
  definitionsEventType,
  definitionsStream,
  groupKey,
  parkedStream
} from "../src/persisted/streamNames.js"

const decoded = (data: string) => {
  const result = decodeGroupDefinitions(data)
  if (Either.isLeft(result)) throw new Error(result.left)
  return result.right
}

describe("stream names", () => {
  it("name a group's streams after its key", () => {
    expect(groupKey("orders", "g1")).toBe("orders::g1")
    expect(checkpointStream("orders", "g1")).toBe("$persistentsubscription-orders::g1-checkpoint")
    expect(parkedStream("orders", "g1")).toBe("$persistentsubscription-orders::g1-parked")
    expect(definitionsStream).toBe("$persistentSubscriptionConfig")
    expect(definitionsEventType).toBe("$PersistentConfig")
  })
})

describe("group definitions", () => {
  const definitions = (entries: GroupDefinitions["entries"]): GroupDefinitions => ({
    version: "2",
    updated: dotNetDate(Date.UTC(2026, 10, 27, 16, 40, 1, 250)),
    updatedBy: "admin",
    entries
  })

  it("are written in the reference's shape: its names, its order, defaults left out", () => {
    const event = encodeGroupDefinitions(
      definitions([
        {
          stream: "orders",
          group: "g1",
          filter: undefined,
          settings: { ...defaultGroupSettings, resolveLinkTos: true, startFrom: 0, messageTimeoutMilliseconds: 0 }
        }
      ])
    )
    expect(event.eventType).toBe("$PersistentConfig")
    expect(event.isJson).toBe(true)
    expect(event.data).toBe(
      [
        "{",
        '  "version": "2",',
        '  "updated": "2026-11-27T16:40:01.25+00:00",',
        '  "updatedBy": "admin",',
        '  "entries": [',
        "    {",
        '      "stream": "orders",',
        '      "group": "g1",',
        '      "resolveLinkTos": true,',
        '      "startPosition": "0",',
        '      "liveBufferSize": 500,',
        '      "historyBufferSize": 500,',
        '      "maxRetryCount": 10,',
        '      "readBatchSize": 20,',
        '      "checkPointAfter": 1000,',
        '      "minCheckPointCount": 10,',
        '      "maxCheckPointCount": 500,',
        '      "maxSubscriberCount": 10,',
        '      "namedConsumerStrategy": "RoundRobin"',
        "    }",
        "  ]",
        "}"
      ].join("\n")
    )
    expect(definitionsStreamMetadata).toBe('{"$maxCount":2}')
  })

  it("write an empty set as an empty array", () => {
    expect(encodeGroupDefinitions(definitions([])).data).toContain('"entries": []')
  })

  it("store a group on $all the reference's way: the lowest long, the position text and the filter", () => {
    const event = encodeGroupDefinitions(
      definitions([
        {
          stream: "$all",
          group: "audit",
          filter: { context: "eventtype", type: "prefix", data: "order-,invoice-", isAllStream: true },
          settings: { ...defaultGroupSettings, startPosition: "C:1024/P:1024" }
        }
      ])
    )
    expect(event.data).toContain(
      [
        '      "filter": {',
        '        "context": "eventtype",',
        '        "type": "prefix",',
        '        "data": "order-,invoice-",',
        '        "isAllStream": true',
        "      },"
      ].join("\n")
    )
    expect(event.data).toContain('"startFrom": -9223372036854775808,')
    expect(event.data).toContain('"startPosition": "C:1024/P:1024",')
    const back = decoded(event.data).definitions.entries[0]!
    expect(back.filter).toEqual({ context: "eventtype", type: "prefix", data: "order-,invoice-", isAllStream: true })
    expect(back.settings.startPosition).toBe("C:1024/P:1024")
  })

  const settingsArbitrary: fc.Arbitrary<GroupSettings> = fc.record({
    resolveLinkTos: fc.boolean(),
    startFrom: fc.integer({ min: -1, max: 1_000_000 }),
    startPosition: fc.constant(undefined),
    messageTimeoutMilliseconds: fc.nat(),
    extraStatistics: fc.boolean(),
    maxRetryCount: fc.nat(),
    liveBufferSize: fc.nat(),
    bufferSize: fc.nat(),
    readBatchSize: fc.nat(),
    preferRoundRobin: fc.boolean(),
    checkPointAfterMilliseconds: fc.nat(),
    minCheckPointCount: fc.nat(),
    maxCheckPointCount: fc.nat(),
    maxSubscriberCount: fc.nat(),
    namedConsumerStrategy: fc.constantFrom(...ConsumerStrategies)
  })

  it("read back what they wrote, zeros and falses included", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ stream: fc.string({ minLength: 1 }), group: fc.string(), settings: settingsArbitrary })),
        fc.option(fc.string(), { nil: undefined }),
        (entries, updatedBy) => {
          const stored = definitions(
            entries.filter((e) => e.stream !== "$all").map((e) => ({ ...e, filter: undefined }))
          )
          const written = { ...stored, updatedBy }
          const back = decoded(encodeGroupDefinitions(written).data)
          expect(back.skipped).toEqual([])
          expect(back.definitions).toEqual(written)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("read a record the reference wrote, names in any case, the start from startPosition or else startFrom", () => {
    const record = JSON.stringify({
      Version: "2",
      Updated: "2026-11-27T16:40:01.1234567+01:00",
      UpdatedBy: "ops",
      Entries: [
        {
          Stream: "a",
          Group: "g",
          StartFrom: 4,
          StartPosition: "9",
          HistoryBufferSize: 30,
          ReadBatchSize: 5,
          NamedConsumerStrategy: "RoundRobin"
        },
        { stream: "b", group: "h", startFrom: 7, namedConsumerStrategy: "Pinned" }
      ]
    })
    const [first, second] = decoded(record).definitions.entries
    expect(first!.settings).toMatchObject({
      startFrom: 9,
      bufferSize: 30,
      readBatchSize: 5,
      messageTimeoutMilliseconds: 0
    })
    expect(first!.settings.namedConsumerStrategy).toBe("RoundRobin")
    expect(second!.settings.startFrom).toBe(7)
    expect(second!.settings.namedConsumerStrategy).toBe("Pinned")
    expect(decoded(record).definitions.updatedBy).toBe("ops")
  })

  it("upgrade a version 1 record: an empty strategy comes from preferRoundRobin", () => {
    const record = JSON.stringify({
      version: "1",
      entries: [
        { stream: "a", group: "rr", preferRoundRobin: true },
        { stream: "a", group: "single" },
        { stream: "a", group: "named", namedConsumerStrategy: "Pinned" }
      ]
    })
    const back = decoded(record).definitions
    expect(back.version).toBe("2")
    expect(back.entries.map((e) => e.settings.namedConsumerStrategy)).toEqual([
      "RoundRobin",
      "DispatchToSingle",
      "Pinned"
    ])
  })

  it("skip an entry with an unknown strategy or a bad start, and keep the others", () => {
    const record = JSON.stringify({
      version: "2",
      entries: [
        { stream: "a", group: "bad", namedConsumerStrategy: "Fastest" },
        { stream: "a", group: "empty" },
        { stream: "a", group: "start", startPosition: "C:1/P:1", namedConsumerStrategy: "RoundRobin" },
        { stream: "a", group: "good", namedConsumerStrategy: "RoundRobin" }
      ]
    })
    const back = decoded(record)
    expect(back.definitions.entries.map((e) => e.group)).toEqual(["good"])
    expect(back.skipped).toEqual([
      "group a::bad: unknown consumer strategy 'Fastest'",
      "group a::empty: unknown consumer strategy ''",
      "group a::start: bad start 'C:1/P:1'"
    ])
  })

  it("refuse a record that is not JSON or has no version", () => {
    expect(decodeGroupDefinitions("not json")).toEqual(Either.left("the definitions record is not a JSON object"))
    expect(decodeGroupDefinitions("[]")).toEqual(Either.left("the definitions record is not a JSON object"))
    expect(decodeGroupDefinitions('{"entries":[]}')).toEqual(Either.left("the definitions record has no version"))
  })
})

describe("dates", () => {
  it("are ISO 8601 with the offset and no trailing fraction zeros", () => {
    expect(dotNetDate(Date.UTC(2026, 0, 2, 3, 4, 5, 0))).toBe("2026-01-02T03:04:05+00:00")
    expect(dotNetDate(Date.UTC(2026, 0, 2, 3, 4, 5, 120))).toBe("2026-01-02T03:04:05.12+00:00")
    expect(dotNetDate(Date.UTC(2026, 0, 2, 3, 4, 5, 7))).toBe("2026-01-02T03:04:05.007+00:00")
  })
})

describe("checkpoints", () => {
  it("are JSON events holding the position as a JSON string", () => {
    expect(encodeStreamCheckpoint(42)).toEqual({
      eventType: "$SubscriptionCheckpoint",
      isJson: true,
      data: '"42"',
      metadata: ""
    })
    expect(encodeCheckpoint("C:10/P:8").data).toBe('"C:10/P:8"')
  })

  it("read back, under either event type the reference reads", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER }), (n) => {
        const event = encodeStreamCheckpoint(n)
        expect(decodeStreamCheckpoint(event.eventType, event.data)).toBe(n)
        expect(decodeStreamCheckpoint("SubscriptionCheckpoint", event.data)).toBe(n)
      })
    )
    expect(decodeCheckpoint("$SubscriptionCheckpoint", '"C:10/P:8"')).toBe("C:10/P:8")
  })

  it("are not read from other events or other data", () => {
    expect(decodeStreamCheckpoint("$metadata", '"42"')).toBeUndefined()
    expect(decodeStreamCheckpoint("$SubscriptionCheckpoint", "42")).toBeUndefined()
    expect(decodeStreamCheckpoint("$SubscriptionCheckpoint", '"C:10/P:8"')).toBeUndefined()
    expect(decodeStreamCheckpoint("$SubscriptionCheckpoint", "{")).toBeUndefined()
  })

  it("have stream metadata keeping two, for admins", () => {
    expect(JSON.parse(checkpointStreamMetadata)).toEqual({
      $maxCount: 2,
      $acl: { $r: "$admins", $w: "$admins", $d: "$admins", $mr: "$all", $mw: "$admins" }
    })
  })
})

describe("parked messages", () => {
  it("are links to the parked event with metadata saying when, why and where", () => {
    const event = encodeParkedMessage({
      linkData: linkData(5, "orders"),
      addedMillis: Date.UTC(2026, 10, 27, 16, 0, 0, 500),
      reason: "Max retry count reached",
      subscriptionEventNumber: 5
    })
    expect(event.eventType).toBe("$>")
    expect(event.isJson).toBe(false)
    expect(event.data).toBe("5@orders")
    expect(event.metadata).toBe(
      [
        "{",
        '  "added": "2026-11-27T16:00:00.5+00:00",',
        '  "reason": "Max retry count reached",',
        '  "subscriptionEventNumber": 5',
        "}"
      ].join("\n")
    )
  })

  it("leave out an event number of 0, as the reference does, and read it back as 0", () => {
    const event = encodeParkedMessage({ linkData: "0@s", addedMillis: 0, reason: "r", subscriptionEventNumber: 0 })
    expect(event.metadata).not.toContain("subscriptionEventNumber")
    expect(decodeParkedMetadata(event.metadata)).toEqual({
      added: "1970-01-01T00:00:00+00:00",
      reason: "r",
      subscriptionEventNumber: 0
    })
  })

  it("read back", () => {
    fc.assert(
      fc.property(fc.nat(), fc.string({ minLength: 1 }), fc.string(), fc.nat(), (n, stream, reason, number) => {
        const event = encodeParkedMessage({
          linkData: linkData(n, stream),
          addedMillis: 0,
          reason,
          subscriptionEventNumber: number
        })
        expect(parseLinkData(event.data)).toEqual({ eventNumber: n, stream })
        expect(decodeParkedMetadata(event.metadata)).toMatchObject({ reason, subscriptionEventNumber: number })
      })
    )
  })

  it("refuse link data that names no event", () => {
    expect(parseLinkData("orders")).toBeUndefined()
    expect(parseLinkData("@orders")).toBeUndefined()
    expect(parseLinkData("x@orders")).toBeUndefined()
    expect(parseLinkData("-1@orders")).toBeUndefined()
    expect(decodeParkedMetadata("oops")).toBeUndefined()
  })

  it("truncate their stream, admins only, once replayed", () => {
    expect(JSON.parse(parkedStreamMetadata(17))).toEqual({
      $tb: 17,
      $acl: { $r: "$admins", $w: "$admins", $d: "$admins", $mr: "$admins", $mw: "$admins" }
    })
  })
})
