// `/stats`: every group and field with its type, rates between samples,
// grouping and sub-path selection, ?group=false / ?metadata=true, well-formed XML carrying the same values,
// and the one-second memoization.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, TestClock } from "effect"
import { XMLParser, XMLValidator } from "fast-xml-parser"
import { EventStore, type EventStoreService } from "@vellum/storage"
import { processSnapshot, storageStats } from "./nodeFixtures.js"
import {
  GROUPING_REQUIRED,
  NodeInfo,
  NodeMetrics,
  NodeServices,
  NodeStats,
  ProcessStats,
  WRITER_QUEUE,
  buildStats,
  flatGroup,
  groupStats,
  selectGroup,
  singleNodeIdentity,
  statMeta,
  statsJson,
  statsReply,
  statsXml,
  type FlatStats,
  type HttpTraffic,
  type ProcessSnapshot
} from "../src/endpoints/index.js"

const T0 = Date.UTC(2025, 2, 28, 16, 0, 0, 0)

const snapshot = (over: Partial<ProcessSnapshot> = {}): ProcessSnapshot => processSnapshot(T0, over)

const storage = storageStats

const traffic: HttpTraffic = { requests: 10, receivedBytes: 2000, sentBytes: 10_000, openConnections: 3 }

const identity = singleNodeIdentity({
  version: "0.1.0",
  instanceId: "11111111-2222-4333-8444-555555555555",
  httpEndpoint: { host: "127.0.0.1", port: 2113 }
})

const first = buildStats({
  nowMillis: T0 + 10_000,
  process: snapshot(),
  storage: storage(),
  traffic,
  previous: undefined
})
const grouped = JSON.parse(statsJson(groupStats(first.stats), false))

type Kind = "string" | "integer" | "number"
/** All values are numbers unless noted. */
const SeedFields: ReadonlyArray<readonly [string, Record<string, Kind>]> = [
  [
    "proc",
    {
      startTime: "string",
      id: "integer",
      mem: "integer",
      cpu: "number",
      cpuScaled: "number",
      threadsCount: "integer",
      contentionsRate: "number",
      thrownExceptionsRate: "number"
    }
  ],
  [
    "proc.gc",
    {
      allocationSpeed: "number",
      gen0ItemsCount: "number",
      gen0Size: "number",
      gen1ItemsCount: "number",
      gen1Size: "number",
      gen2ItemsCount: "number",
      gen2Size: "number",
      largeHeapSize: "number",
      timeInGc: "number",
      totalBytesInHeaps: "number"
    }
  ],
  ["proc.diskIo", { readBytes: "number", writtenBytes: "number", readOps: "number", writeOps: "number" }],
  [
    "proc.tcp",
    {
      connections: "integer",
      receivingSpeed: "string",
      sendingSpeed: "number",
      inSend: "number",
      measureTime: "number",
      pendingReceived: "number",
      pendingSend: "number",
      receivedBytesSinceLastRun: "number",
      receivedBytesTotal: "number",
      sentBytesSinceLastRun: "number",
      sentBytesTotal: "number"
    }
  ],
  ["sys", { cpu: "number", freeMem: "number" }],
  ["sys.drive./", { availableBytes: "number", totalBytes: "number", usage: "number", usedBytes: "number" }],
  ["es", { checksum: "number", checksumNonFlushed: "number" }],
  [
    `es.queue.${WRITER_QUEUE}`,
    {
      queueName: "string",
      groupName: "string",
      avgItemsPerSecond: "integer",
      avgProcessingTime: "number",
      currentIdleTime: "string",
      currentItemProcessingTime: "string",
      idleTimePercent: "number",
      length: "integer",
      lengthCurrentTryPeak: "number",
      lengthLifetimePeak: "number",
      totalItemsProcessed: "number",
      inProgressMessage: "string",
      lastProcessedMessage: "string"
    }
  ],
  [
    "es.writer",
    {
      lastFlushSize: "number",
      lastFlushDelayMs: "number",
      meanFlushSize: "number",
      meanFlushDelayMs: "number",
      maxFlushSize: "number",
      maxFlushDelayMs: "number",
      queuedFlushMessages: "integer"
    }
  ],
  [
    "es.readIndex",
    {
      cachedRecord: "number",
      notCachedRecord: "number",
      cachedStreamInfo: "number",
      notCachedStreamInfo: "number",
      cachedTransInfo: "number",
      notCachedTransInfo: "number",
      hashCollisions: "number"
    }
  ]
]

/** Walks a dotted path whose parts may themselves contain no dots except the drive name `/`. */
const at = (doc: Record<string, unknown>, path: string): Record<string, unknown> =>
  path.split(".").reduce<Record<string, unknown>>((node, part) => node[part] as Record<string, unknown>, doc)

describe("stats document", () => {
  it.each(SeedFields)("group %s has every field with its type", (path, fields) => {
    const group = at(grouped, path)
    expect(group, path).toBeTypeOf("object")
    for (const [name, kind] of Object.entries(fields)) {
      const value = group[name]
      if (kind === "string") expect(value, `${path}.${name}`).toBeTypeOf("string")
      else {
        expect(value, `${path}.${name}`).toBeTypeOf("number")
        expect(Number.isFinite(value), `${path}.${name} finite`).toBe(true)
        if (kind === "integer") expect(Number.isInteger(value), `${path}.${name} integer`).toBe(true)
      }
    }
  })

  it("has the top-level groups proc, sys and es only", () => {
    expect(Object.keys(grouped)).toEqual(["proc", "sys", "es"])
  })

  it("carries identity, memory and storage figures as given", () => {
    expect(grouped.proc.startTime).toBe("2025-03-28T16:00:00.0000000Z")
    expect(grouped.proc.id).toBe(4242)
    expect(grouped.proc.mem).toBe(50_000_000)
    expect(grouped.proc.threadsCount).toBe(11)
    expect(grouped.proc.gc).toMatchObject({
      gen0ItemsCount: 7,
      gen0Size: 1_000,
      gen1ItemsCount: 2,
      gen2ItemsCount: 1,
      gen2Size: 20_000,
      largeHeapSize: 3_000,
      totalBytesInHeaps: 24_000,
      fragmentation: 25
    })
    expect(grouped.proc.diskIo).toEqual({ readBytes: 4096, writtenBytes: 8192, readOps: 3, writeOps: 5 })
    expect(grouped.sys).toMatchObject({
      freeMem: 1_000,
      totalMem: 4_000,
      loadavg: { "1m": 0.5, "5m": 0.25, "15m": 0.13 }
    })
    expect(grouped.sys.drive["/"]).toEqual({ availableBytes: 25, totalBytes: 100, usage: 75, usedBytes: 75 })
    expect(grouped.es.checksum).toBe(4096)
    expect(grouped.es.checksumNonFlushed).toBe(5000)
    expect(grouped.es.writer).toEqual({
      lastFlushSize: 1024,
      lastFlushDelayMs: 1.5,
      meanFlushSize: 500,
      meanFlushDelayMs: 2,
      maxFlushSize: 4096,
      maxFlushDelayMs: 9,
      queuedFlushMessages: 0
    })
    expect(grouped.es.readIndex.cachedRecord).toBe(40)
    expect(grouped.es.readIndex.notCachedRecord).toBe(2)
    expect(grouped.proc.tcp).toMatchObject({ connections: 3, receivedBytesTotal: 2000, sentBytesTotal: 10_000 })
  })

  it("first sample: rates since process start", () => {
    // 5 s of CPU in 10 s on 2 cores: 50% of one core, 25% of the machine.
    expect(grouped.proc.cpu).toBe(50)
    expect(grouped.proc.cpuScaled).toBe(25)
    expect(grouped.sys.cpu).toBe(25)
    expect(grouped.proc.gc.allocationSpeed).toBe(100_000)
    expect(grouped.proc.gc.timeInGc).toBe(1)
    const q = grouped.es.queue[WRITER_QUEUE]
    expect(q).toMatchObject({
      queueName: WRITER_QUEUE,
      groupName: "",
      avgItemsPerSecond: 50,
      avgProcessingTime: 0.4,
      length: 0,
      totalItemsProcessed: 500
    })
    expect(q.idleTimePercent).toBe(98)
    expect(q.inProgressMessage).toBe("<none>")
    expect(q.lastProcessedMessage).toBe("WriteCommand")
    expect(q.currentIdleTime).toBe("0:00:00:00.0000000")
    expect(grouped.proc.tcp.receivingSpeed).toBe("200")
    expect(grouped.proc.tcp.sendingSpeed).toBe(1000)
    expect(grouped.proc.tcp.measureTime).toBe(10_000)
  })

  it("next sample: rates against the previous one", () => {
    const second = buildStats({
      nowMillis: T0 + 20_000,
      process: snapshot({
        cpuMicros: 15_000_000,
        gc: { minorCount: 9, incrementalCount: 2, majorCount: 1, pauseMicros: 600_000, allocatedBytes: 3_000_000 }
      }),
      storage: storage({ commands: 600, totalFlushDelayMs: 300, queued: 4 }),
      traffic: { ...traffic, receivedBytes: 2500 },
      previous: first.sample
    })
    const doc = JSON.parse(statsJson(groupStats(second.stats), false))
    expect(doc.proc.cpu).toBe(100)
    expect(doc.proc.cpuScaled).toBe(50)
    expect(doc.proc.gc.allocationSpeed).toBe(200_000)
    expect(doc.proc.gc.timeInGc).toBe(5)
    const q = doc.es.queue[WRITER_QUEUE]
    expect(q.avgItemsPerSecond).toBe(10)
    expect(q.avgProcessingTime).toBe(1)
    expect(q.length).toBe(4)
    expect(q.lengthLifetimePeak).toBe(4)
    expect(q.inProgressMessage).toBe("WriteCommand")
    expect(q.currentItemProcessingTime).toBe("0:00:00:00.0000000")
    expect(doc.proc.tcp.receivedBytesSinceLastRun).toBe(500)
    expect(doc.proc.tcp.receivingSpeed).toBe("50")

    // The queue drains: its lifetime peak stays, idle time counts from the last sample that saw work.
    const third = buildStats({
      nowMillis: T0 + 25_000,
      process: snapshot(),
      storage: storage({ commands: 600, queued: 0 }),
      traffic,
      previous: second.sample
    })
    const q3 = JSON.parse(statsJson(groupStats(third.stats), false)).es.queue[WRITER_QUEUE]
    expect(q3.lengthLifetimePeak).toBe(4)
    expect(q3.length).toBe(0)
    expect(q3.currentIdleTime).toBe("0:00:00:05.0000000")
  })

  it("leaves the drive out when it is unknown (in-memory database)", () => {
    const noDrive = buildStats({
      nowMillis: T0 + 1,
      process: snapshot({ drive: undefined }),
      storage: storage(),
      traffic,
      previous: undefined
    })
    expect(JSON.parse(statsJson(groupStats(noDrive.stats), false)).sys.drive).toBeUndefined()
  })
})

describe("grouping and selection", () => {
  const flat: FlatStats = [
    ["a-b-c", 1],
    ["a-b-d", "x"],
    ["a-e", null],
    ["f", true],
    ["A-g", 2],
    ["a-b", 3]
  ]

  it("splits keys on - into nested groups, in insertion order, group names case-insensitive", () => {
    expect(JSON.parse(statsJson(groupStats(flat), false))).toEqual({
      a: { b: { c: 1, d: "x" }, e: null, g: 2 },
      f: true
    })
    expect(statsJson(groupStats(flat), false)).toBe(
      `{\n  "a": {\n    "b": {\n      "c": 1,\n      "d": "x"\n    },\n    "e": null,\n    "g": 2\n  },\n  "f": true\n}`
    )
  })

  it("selects groups case-insensitively; a value or a missing name selects nothing", () => {
    const tree = groupStats(flat)
    expect(JSON.parse(statsJson(selectGroup(tree, ["A", "B"])!, false))).toEqual({ c: 1, d: "x" })
    expect(selectGroup(tree, ["a", "e"])).toBeUndefined()
    expect(selectGroup(tree, ["a", "b", "c"])).toBeUndefined()
    expect(selectGroup(tree, ["nope"])).toBeUndefined()
    expect(selectGroup(tree, ["a", ""])).toBeUndefined()
  })

  it("flat keeps the keys as they are", () => {
    expect(JSON.parse(statsJson(flatGroup(flat), false))["a-b-c"]).toBe(1)
  })

  it("non-finite numbers never reach the output", () => {
    expect(
      JSON.parse(
        statsJson(
          groupStats([
            ["x", Number.NaN],
            ["y", Infinity]
          ]),
          false
        )
      )
    ).toEqual({ x: 0, y: 0 })
  })
})

const xmlParser = new XMLParser({ parseTagValue: false, ignoreAttributes: true })

/** Every leaf of the JSON form has the same text in the XML form (names encoded the same way). */
const sameLeaves = (json: Record<string, unknown>, xml: Record<string, unknown>, path: string) => {
  for (const [key, value] of Object.entries(json)) {
    const xmlKey =
      key === "/"
        ? "_x002F_"
        : /^\d/.test(key)
          ? `_x00${key.charCodeAt(0).toString(16).toUpperCase()}_${key.slice(1)}`
          : key
    const other = xml[xmlKey]
    if (value !== null && typeof value === "object")
      sameLeaves(value as Record<string, unknown>, other as Record<string, unknown>, `${path}.${key}`)
    else expect(other, `${path}.${key}`).toBe(value === null ? "" : String(value))
  }
}

describe("XML form", () => {
  it("is well-formed, rooted at <Stats>, and carries the same values as the JSON", () => {
    const xml = statsXml(groupStats(first.stats), false)
    expect(XMLValidator.validate(xml)).toBe(true)
    const doc = xmlParser.parse(xml) as { Stats: Record<string, unknown> }
    sameLeaves(grouped, doc.Stats, "Stats")
    expect(xml).toContain("<drive><_x002F_><availableBytes>25</availableBytes>")
  })

  it("a key with a letter XML names cannot hold (µ) stays well-formed", () => {
    expect(XMLValidator.validate(statsXml(groupStats([["proc-µs", 1]]), false))).toBe(true)
  })

  it("metadata=true nests value, category, title and drawChart", () => {
    const xml = statsXml(groupStats([["proc-mem", statMeta(7, "Process", "Process Virtual Memory")]]), true)
    expect(XMLValidator.validate(xml)).toBe(true)
    expect(xmlParser.parse(xml).Stats.proc.mem).toEqual({
      value: "7",
      category: "Process",
      title: "Process Virtual Memory",
      drawChart: "true"
    })
  })
})

const body = (r: { body?: string | Uint8Array }) => (typeof r.body === "string" ? r.body : "")
const query = (text = "") => new URLSearchParams(text)

describe("statsReply", () => {
  it("whole document, JSON, cacheable for a second", () => {
    const r = statsReply("application/json", first.stats, [], query())
    expect(r.status).toBe(200)
    expect(r.headers).toMatchObject({
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "max-age=1, public",
      Vary: "Accept"
    })
    expect(JSON.parse(body(r))).toEqual(grouped)
  })

  it("a sub-path selects a nested group (any case)", () => {
    expect(JSON.parse(body(statsReply("application/json", first.stats, ["proc", "gc"], query())))).toEqual(
      grouped.proc.gc
    )
    expect(JSON.parse(body(statsReply("application/json", first.stats, ["ES", "Queue"], query())))).toEqual(
      grouped.es.queue
    )
    const xml = statsReply("text/xml", first.stats, ["proc", "diskIo"], query())
    expect(xml.headers["Content-Type"]).toBe("text/xml; charset=utf-8")
    expect(xmlParser.parse(body(xml)).Stats).toEqual({
      readBytes: "4096",
      writtenBytes: "8192",
      readOps: "3",
      writeOps: "5"
    })
  })

  it("404 with an empty body for a missing path or a single value", () => {
    for (const path of [["nope"], ["proc", "mem"], ["proc", "gc", "nothing"]]) {
      const r = statsReply("application/json", first.stats, path, query())
      expect(r.status, path.join("/")).toBe(404)
      expect(r.body).toBeUndefined()
    }
  })

  it("?group=false gives flat keys; with a sub-path it is a 400", () => {
    const flat = JSON.parse(body(statsReply("application/json", first.stats, [], query("group=false"))))
    expect(flat["proc-id"]).toBe(4242)
    expect(flat[`es-queue-${WRITER_QUEUE}-length`]).toBe(0)
    const bad = statsReply("application/json", first.stats, ["proc"], query("group=False"))
    expect(bad.status).toBe(400)
    expect(body(bad)).toBe(GROUPING_REQUIRED)
    expect(bad.headers["Content-Type"]).toBe("text/plain")
    // Unparsable flags keep their defaults, as bool.TryParse does.
    expect(statsReply("application/json", first.stats, ["proc"], query("group=no")).status).toBe(200)
  })

  it("?metadata=true wraps the stats that have metadata", () => {
    const doc = JSON.parse(body(statsReply("application/json", first.stats, ["proc"], query("metadata=true"))))
    expect(doc.mem).toEqual({
      value: 50_000_000,
      category: "Process",
      title: "Process Virtual Memory",
      drawChart: true
    })
    expect(doc.cpu.title).toBe("Process Cpu Usage")
    expect(doc.id).toBe(4242)
    expect(
      JSON.parse(body(statsReply("application/json", first.stats, ["sys"], query("metadata=true")))).cpu.category
    ).toBe("Machine")
  })

  it("flags are read as bool.TryParse reads them: NUL and .NET white space trimmed, a BOM is not", () => {
    const meta = (text: string) =>
      JSON.parse(body(statsReply("application/json", first.stats, ["proc"], query(text)))).mem
    expect(meta("metadata=true%00").value).toBe(50_000_000)
    expect(meta("metadata=%C2%85TRUE").value).toBe(50_000_000)
    expect(meta("metadata=%EF%BB%BFtrue")).toBe(50_000_000)
  })
})

describe("NodeStats", () => {
  // A store stand-in with only the figures NodeStats reads; the rest of the service is never called here.
  const store = { stats: () => storage() } as unknown as EventStoreService

  it.effect("memoizes for one second, then computes afresh with rates against the last sample", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const processLayer = Layer.succeed(ProcessStats, {
        snapshot: Effect.map(
          Ref.updateAndGet(calls, (n) => n + 1),
          (n) => snapshot({ startTimeMillis: 0, cpuMicros: n * 1_000_000 })
        )
      })
      const layer = NodeStats.layer.pipe(
        Layer.provide(
          Layer.mergeAll(
            processLayer,
            Layer.succeed(EventStore, store),
            NodeMetrics.layer,
            NodeInfo.layer(identity),
            NodeServices.singleNodeStatus(identity)
          )
        )
      )
      yield* Effect.gen(function* () {
        const stats = yield* NodeStats
        yield* TestClock.adjust(2000)
        const a = yield* stats.current
        yield* TestClock.adjust(999)
        const b = yield* stats.current
        expect(b).toBe(a)
        expect(yield* Ref.get(calls)).toBe(1)
        yield* TestClock.adjust(1)
        const c = yield* stats.current
        expect(yield* Ref.get(calls)).toBe(2)
        const cpu = (s: FlatStats) => s.find(([k]) => k === "proc-cpu")![1] as { value: number }
        // 1 s of CPU over the first 2 s, then 1 more second over the next 1 s.
        expect(cpu(a).value).toBe(50)
        expect(cpu(c).value).toBe(100)
      }).pipe(Effect.provide(layer))
    })
  )
})
