// The query of POST /admin/scavenge as pure functions: .NET's int.TryParse / bool.TryParse, the validation
// order and messages of the reference, defaults and thread clamping.
import { describe, expect, it } from "vitest"
import { MAX_SCAVENGE_THREADS, ScavengeParamMessages, parseScavengeQuery } from "../src/admin/index.js"
import { tryParseBoolean, tryParseInt32 } from "../src/dotnetParse.js"

describe("int.TryParse (NumberStyles.Integer, invariant signs)", () => {
  it.each([
    ["5", 5],
    ["007", 7],
    ["+5", 5],
    ["-5", -5],
    ["-0", 0],
    ["+0", 0],
    [" 5 ", 5],
    ["\t\n\v\f\r5\r\n\t", 5],
    ["  -12  ", -12],
    ["2147483647", 2147483647],
    ["-2147483648", -2147483648],
    ["0000000000002147483647", 2147483647],
    ["5\0", 5],
    ["5 \0\0", 5]
  ])("accepts %j as %d", (text, value) => {
    expect(tryParseInt32(text)).toBe(value)
  })

  it.each([
    "",
    " ",
    "+",
    "-",
    "+-5",
    "-+5",
    "+ 5",
    "- 5",
    "5 5",
    "5-",
    "5+",
    "5.0",
    "5,0",
    "1e3",
    "0x10",
    "1_000",
    "2147483648",
    "-2147483649",
    "99999999999999999999999",
    "\u00a05", // NBSP is not white space to the number parser
    "5\u2028", // nor is a line separator
    "\ufeff5", // nor a BOM
    "\uff15", // full-width digit five
    "\u0665", // Arabic-Indic digit five
    "5\0 ", // NULs only at the very end
    "\u00005",
    "(5)",
    "five"
  ])("refuses %j", (text) => {
    expect(tryParseInt32(text)).toBeUndefined()
  })
})

describe("bool.TryParse", () => {
  it.each([
    ["true", true],
    ["True", true],
    ["TRUE", true],
    ["tRuE", true],
    ["false", false],
    ["FALSE", false],
    [" true ", true],
    ["\ttrue\n", true],
    ["\u00a0false\u2028", false],
    ["\u3000true\u0085", true],
    ["true\0", true],
    ["\0\0false", false],
    ["\0 true \0", true]
  ])("accepts %j as %s", (text, value) => {
    expect(tryParseBoolean(text)).toBe(value)
  })

  it.each(["", " ", "1", "0", "yes", "no", "t", "f", "truee", "tru e", "\ufefftrue", "on"])("refuses %j", (text) => {
    expect(tryParseBoolean(text)).toBeUndefined()
  })
})

const parse = (query: string) => parseScavengeQuery(new URLSearchParams(query))
const messageOf = (query: string) => {
  const parsed = parse(query)
  return parsed.ok ? undefined : parsed.message
}

describe("POST /admin/scavenge parameters", () => {
  it("defaults: one thread, no threshold, full speed, not sync-only, chunk 0", () => {
    expect(parse("")).toEqual({
      ok: true,
      options: { threads: 1, threshold: undefined, throttlePercent: 100, syncOnly: false, startFromChunk: 0 },
      requestedThreads: 1
    })
  })

  it("reads every parameter", () => {
    expect(parse("threads=3&threshold=-1&throttlePercent=100&syncOnly=TRUE&startFromChunk=7")).toEqual({
      ok: true,
      options: { threads: 3, threshold: -1, throttlePercent: 100, syncOnly: true, startFromChunk: 7 },
      requestedThreads: 3
    })
    expect(parse("threads=1&throttlePercent=50&threshold=%2B25&syncOnly=false")).toMatchObject({
      options: { threads: 1, throttlePercent: 50, threshold: 25, syncOnly: false }
    })
    // `+` in a query is a space, which int.TryParse skips.
    expect(parse("threads=+2+")).toMatchObject({ options: { threads: 2 } })
  })

  it("clamps threads above the maximum instead of refusing them", () => {
    expect(MAX_SCAVENGE_THREADS).toBe(4)
    expect(parse("threads=4")).toMatchObject({ options: { threads: 4 }, requestedThreads: 4 })
    expect(parse("threads=5")).toMatchObject({ options: { threads: 4 }, requestedThreads: 5 })
    expect(parse("threads=2147483647&throttlePercent=100")).toMatchObject({
      options: { threads: 4 },
      requestedThreads: 2147483647
    })
  })

  it.each([
    ["startFromChunk=-1", ScavengeParamMessages.startFromChunk],
    ["startFromChunk=abc", ScavengeParamMessages.startFromChunk],
    ["startFromChunk=", ScavengeParamMessages.startFromChunk],
    ["threads=0", ScavengeParamMessages.threads],
    ["threads=-3", ScavengeParamMessages.threads],
    ["threads=2.5", ScavengeParamMessages.threads],
    ["threads=2147483648", ScavengeParamMessages.threads],
    ["threshold=1.5", ScavengeParamMessages.threshold],
    ["threshold=", ScavengeParamMessages.threshold],
    ["threshold=9999999999", ScavengeParamMessages.threshold],
    ["throttlePercent=0", ScavengeParamMessages.throttlePercent],
    ["throttlePercent=101", ScavengeParamMessages.throttlePercent],
    ["throttlePercent=x", ScavengeParamMessages.throttlePercent],
    ["throttlePercent=99&threads=2", ScavengeParamMessages.throttleWithThreads],
    ["throttlePercent=1&threads=9", ScavengeParamMessages.throttleWithThreads],
    ["syncOnly=1", ScavengeParamMessages.syncOnly],
    ["syncOnly=yes", ScavengeParamMessages.syncOnly],
    ["syncOnly=", ScavengeParamMessages.syncOnly]
  ])("%s → %s", (query, message) => {
    expect(messageOf(query)).toBe(message)
  })

  it("validates in the reference's order: startFromChunk, threads, threshold, throttlePercent, syncOnly", () => {
    const allBad = "syncOnly=maybe&throttlePercent=0&threshold=x&threads=0&startFromChunk=-1"
    expect(messageOf(allBad)).toBe("startFromChunk must be a positive integer")
    expect(messageOf(allBad.replace("startFromChunk=-1", "startFromChunk=0"))).toBe("threads must be a 1 or above")
    expect(messageOf("syncOnly=maybe&throttlePercent=0&threshold=x&threads=1")).toBe("threshold must be an integer")
    expect(messageOf("syncOnly=maybe&throttlePercent=0&threshold=1")).toBe(
      "throttlePercent must be between 1 and 100 inclusive"
    )
    expect(messageOf("syncOnly=maybe&throttlePercent=50&threads=2")).toBe(
      "throttlePercent must be 100 for a multi-threaded scavenge"
    )
    expect(messageOf("syncOnly=maybe&throttlePercent=50&threads=1")).toBe("syncOnly must be a boolean")
  })

  it("allows a throttle below 100 only single-threaded, and 100 with any thread count", () => {
    expect(parse("throttlePercent=1")).toMatchObject({ ok: true, options: { throttlePercent: 1 } })
    expect(parse("throttlePercent=100&threads=4")).toMatchObject({
      ok: true,
      options: { throttlePercent: 100, threads: 4 }
    })
  })
})
