/**
 * The scavenge history's text formats: .NET TimeSpan "c" text, the exact indented
 * JSON of every event type, the metadata and link texts, and the pure scan of `$scavenges` and run streams.
 */
import { describe, it, assert } from "vitest"
import {
  HistoryIndexScan,
  addToTotals,
  chunksCompletedPayload,
  completedPayload,
  formatTimeSpan,
  historyMetadataText,
  indentedJson,
  indexCompletedPayload,
  linkText,
  mergeCompletedPayload,
  parseTimeSpanTicks,
  runStreamOf,
  startedPayload,
  type RunTotals
} from "../src/history/index.js"

const id = "0b5f3e2a-1c4d-4e6f-8a9b-0c1d2e3f4a5b"
const node = "127.0.0.1:2113"
const run = { scavengeId: id, nodeEndpoint: node }

describe('TimeSpan text (.NET constant "c" format)', () => {
  const cases: ReadonlyArray<readonly [number, string]> = [
    [0, "00:00:00"],
    [1500, "00:00:01.5000000"],
    [26 * 3_600_000, "1.02:00:00"],
    [133_447.1234, "00:02:13.4471234"],
    [0.0001, "00:00:00.0000001"],
    [59_000, "00:00:59"],
    [3_600_000, "01:00:00"],
    [86_399_999, "23:59:59.9990000"],
    [86_400_000, "1.00:00:00"],
    [10 * 86_400_000 + 3_661_001, "10.01:01:01.0010000"],
    [-1500, "-00:00:01.5000000"],
    [-(86_400_000 + 1), "-1.00:00:00.0010000"]
  ]
  for (const [millis, text] of cases) {
    it(`${millis} ms → ${text}`, () => {
      assert.strictEqual(formatTimeSpan(millis), text)
    })
  }

  it("parses what it formats back to the same ticks", () => {
    for (const [millis, text] of cases) assert.strictEqual(parseTimeSpanTicks(text), Math.round(millis * 10_000), text)
  })

  it("parses TimeSpan.Parse's shorter forms and rejects out-of-range parts", () => {
    assert.strictEqual(parseTimeSpanTicks("1:2:3"), (3600 + 120 + 3) * 10_000_000)
    assert.strictEqual(parseTimeSpanTicks("01:02"), (3600 + 120) * 10_000_000)
    assert.strictEqual(parseTimeSpanTicks("5"), 5 * 86_400 * 10_000_000)
    assert.strictEqual(parseTimeSpanTicks("00:00:01.5"), 15_000_000)
    assert.strictEqual(parseTimeSpanTicks(" 2.00:00:00.0000001 "), 2 * 86_400 * 10_000_000 + 1)
    assert.isUndefined(parseTimeSpanTicks("24:00:00"))
    assert.isUndefined(parseTimeSpanTicks("00:60:00"))
    assert.isUndefined(parseTimeSpanTicks("00:00:01.12345678"))
    assert.isUndefined(parseTimeSpanTicks("soon"))
    assert.isUndefined(parseTimeSpanTicks(""))
  })
})

describe("history payloads: Newtonsoft indented, camelCase, spec order, nulls included", () => {
  it("$scavengeStarted", () => {
    assert.strictEqual(startedPayload(run), `{\n  "scavengeId": "${id}",\n  "nodeEndpoint": "${node}"\n}`)
  })

  it("$scavengeChunksCompleted", () => {
    const text = chunksCompletedPayload({
      ...run,
      chunkStartNumber: 2,
      chunkEndNumber: 3,
      timeTakenMillis: 1500,
      wasScavenged: true,
      spaceSaved: 4096,
      errorMessage: ""
    })
    assert.strictEqual(
      text,
      [
        "{",
        `  "scavengeId": "${id}",`,
        `  "chunkStartNumber": 2,`,
        `  "chunkEndNumber": 3,`,
        `  "timeTaken": "00:00:01.5000000",`,
        `  "wasScavenged": true,`,
        `  "spaceSaved": 4096,`,
        `  "nodeEndpoint": "${node}",`,
        `  "errorMessage": ""`,
        "}"
      ].join("\n")
    )
  })

  it("$scavengeMergeCompleted", () => {
    const text = mergeCompletedPayload({
      ...run,
      chunkStartNumber: 0,
      chunkEndNumber: 5,
      timeTakenMillis: 250,
      spaceSaved: -12,
      wasMerged: true,
      errorMessage: ""
    })
    assert.strictEqual(
      text,
      [
        "{",
        `  "scavengeId": "${id}",`,
        `  "chunkStartNumber": 0,`,
        `  "chunkEndNumber": 5,`,
        `  "timeTaken": "00:00:00.2500000",`,
        `  "spaceSaved": -12,`,
        `  "wasMerged": true,`,
        `  "nodeEndpoint": "${node}",`,
        `  "errorMessage": ""`,
        "}"
      ].join("\n")
    )
  })

  it("$scavengeIndexCompleted, including the cancelled form", () => {
    const ok = indexCompletedPayload({
      ...run,
      level: 1,
      index: 0,
      timeTakenMillis: 62_000,
      entriesDeleted: 10,
      entriesKept: 90,
      spaceSaved: 160,
      wasScavenged: true,
      errorMessage: ""
    })
    assert.strictEqual(
      ok,
      [
        "{",
        `  "scavengeId": "${id}",`,
        `  "level": 1,`,
        `  "index": 0,`,
        `  "timeTaken": "00:01:02",`,
        `  "entriesDeleted": 10,`,
        `  "entriesKept": 90,`,
        `  "spaceSaved": 160,`,
        `  "wasScavenged": true,`,
        `  "nodeEndpoint": "${node}",`,
        `  "errorMessage": ""`,
        "}"
      ].join("\n")
    )
    const cancelled = indexCompletedPayload({
      ...run,
      level: -1,
      index: -1,
      timeTakenMillis: 0,
      entriesDeleted: 0,
      entriesKept: 7,
      spaceSaved: 0,
      wasScavenged: false,
      errorMessage: "Scavenge cancelled"
    })
    assert.include(cancelled, `  "level": -1,\n  "index": -1,\n  "timeTaken": "00:00:00",`)
    assert.include(
      cancelled,
      `  "wasScavenged": false,\n  "nodeEndpoint": "${node}",\n  "errorMessage": "Scavenge cancelled"\n}`
    )
  })

  it("$scavengeCompleted with a null error and with an error text", () => {
    const success = completedPayload({
      ...run,
      result: "Success",
      error: null,
      timeTakenMillis: 133_447.1234,
      spaceSaved: 8192,
      maxChunkScavenged: 7
    })
    assert.strictEqual(
      success,
      [
        "{",
        `  "scavengeId": "${id}",`,
        `  "nodeEndpoint": "${node}",`,
        `  "result": "Success",`,
        `  "error": null,`,
        `  "timeTaken": "00:02:13.4471234",`,
        `  "spaceSaved": 8192,`,
        `  "maxChunkScavenged": 7`,
        "}"
      ].join("\n")
    )
    const errored = completedPayload({
      ...run,
      result: "Errored",
      error: 'Error while scavenging DB: disk "full".',
      timeTakenMillis: 1,
      spaceSaved: 0,
      maxChunkScavenged: 0
    })
    assert.include(errored, `  "result": "Errored",\n  "error": "Error while scavenging DB: disk \\"full\\".",\n`)
  })

  it("strings are escaped as Newtonsoft escapes them (control characters, and U+0085, U+2028, U+2029)", () => {
    assert.strictEqual(
      indentedJson({ a: "x\ny\u0001\u2028\u2029\u0085é" }),
      `{\n  "a": "x\\ny\\u0001\\u2028\\u2029\\u0085é"\n}`
    )
  })
})

describe("history metadata and links", () => {
  it("metadata is compact, $maxAge in seconds, a one-role $r as a bare string", () => {
    assert.strictEqual(
      historyMetadataText(30),
      `{"$maxAge":2592000,"$acl":{"$r":"$ops","$w":[],"$d":[],"$mr":[],"$mw":[]}}`
    )
    assert.strictEqual(
      historyMetadataText(1),
      `{"$maxAge":86400,"$acl":{"$r":"$ops","$w":[],"$d":[],"$mr":[],"$mw":[]}}`
    )
  })

  it("a link names the event number and the run's stream", () => {
    assert.strictEqual(runStreamOf(id), `$scavenges-${id}`)
    assert.strictEqual(linkText(4, id), `4@$scavenges-${id}`)
  })
})

const bytes = (text: string): Buffer => Buffer.from(text, "utf8")

describe("scan of $scavenges (newest first)", () => {
  const started = (scavengeId: string, endpoint = node) => bytes(startedPayload({ scavengeId, nodeEndpoint: endpoint }))
  const done = (scavengeId: string, endpoint = node) =>
    bytes(
      completedPayload({
        scavengeId,
        nodeEndpoint: endpoint,
        result: "Success",
        error: null,
        timeTakenMillis: 0,
        spaceSaved: 0,
        maxChunkScavenged: 0
      })
    )

  it("a start seen without its completion is interrupted; other nodes and bad payloads are ignored", () => {
    const scan = new HistoryIndexScan(node)
    scan.observe("$scavengeCompleted", done("b"))
    scan.observe("$scavengeStarted", started("c", "10.0.0.2:2113"))
    scan.observe("$scavengeStarted", bytes("not json"))
    scan.observe("$scavengeStarted", bytes(`{"nodeEndpoint":"${node}"}`))
    scan.observe("$scavengeStarted", started("b"))
    scan.observe("$scavengeStarted", started("a"))
    assert.deepStrictEqual(scan.interrupted, ["a"])
    assert.deepStrictEqual(scan.recent, ["b", "a"])
  })

  it("remembers at most 30 recent runs, the newest", () => {
    const scan = new HistoryIndexScan(node)
    for (let i = 40; i > 0; i--) scan.observe("$scavengeStarted", started(`r${i}`))
    assert.strictEqual(scan.recent.length, 30)
    assert.strictEqual(scan.recent[0], "r40")
    assert.strictEqual(scan.recent[29], "r11")
    assert.strictEqual(scan.interrupted.length, 40)
  })
})

describe("totals of an interrupted run", () => {
  const chunks = (end: number, spaceSaved: number, millis: number) =>
    bytes(
      chunksCompletedPayload({
        ...run,
        chunkStartNumber: end,
        chunkEndNumber: end,
        timeTakenMillis: millis,
        wasScavenged: true,
        spaceSaved,
        errorMessage: ""
      })
    )

  it("sums spaceSaved and timeTaken over chunk, merge and index events; max chunkEndNumber over chunk events only", () => {
    let totals: RunTotals = { spaceSaved: 0, timeTakenTicks: 0, maxChunkScavenged: 0 }
    totals = addToTotals(totals, "$scavengeChunksCompleted", chunks(3, 100, 1500))
    totals = addToTotals(totals, "$scavengeChunksCompleted", chunks(1, 50, 250))
    totals = addToTotals(
      totals,
      "$scavengeMergeCompleted",
      bytes(
        mergeCompletedPayload({
          ...run,
          chunkStartNumber: 0,
          chunkEndNumber: 9,
          timeTakenMillis: 1000,
          spaceSaved: 25,
          wasMerged: true,
          errorMessage: ""
        })
      )
    )
    totals = addToTotals(
      totals,
      "$scavengeIndexCompleted",
      bytes(
        indexCompletedPayload({
          ...run,
          level: 0,
          index: 0,
          timeTakenMillis: 0.5,
          entriesDeleted: 1,
          entriesKept: 2,
          spaceSaved: 10,
          wasScavenged: true,
          errorMessage: ""
        })
      )
    )
    totals = addToTotals(totals, "$scavengeStarted", bytes(startedPayload(run)))
    totals = addToTotals(
      totals,
      "$scavengeChunksCompleted",
      bytes(`{"spaceSaved":"lots","timeTaken":"soon","chunkEndNumber":1.5}`)
    )
    assert.deepStrictEqual(totals, {
      spaceSaved: 185,
      timeTakenTicks: (1500 + 250 + 1000 + 0.5) * 10_000,
      maxChunkScavenged: 3
    })
  })
})
