import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, FiberRef, HashSet, Logger, LogLevel, TestClock } from "effect"
import * as JsonLogger from "../src/JsonLogger.js"

const capture = () => {
  const lines: Array<string> = []
  return { lines, sink: (line: string) => void lines.push(line), parsed: () => lines.map((line) => JSON.parse(line)) }
}

describe("JsonLogger", () => {
  it.effect("writes one JSON object per log with the Clock's time, level, message and fiber id", () => {
    const out = capture()
    return Effect.gen(function* () {
      yield* TestClock.adjust("1500 millis")
      yield* Effect.logInfo("node started")
      expect(out.lines).toHaveLength(1)
      expect(out.lines[0]).not.toContain("\n")
      const [entry] = out.parsed()
      expect(entry).toEqual({
        timestamp: "1970-01-01T00:00:01.500Z",
        level: "INFO",
        message: "node started",
        fiberId: expect.stringMatching(/^#\d+$/)
      })
    }).pipe(Effect.provide(JsonLogger.layer(out.sink, LogLevel.Info)))
  })

  it.effect("includes annotations and span durations measured on the Clock", () => {
    const out = capture()
    return Effect.gen(function* () {
      yield* Effect.gen(function* () {
        yield* TestClock.adjust("250 millis")
        yield* Effect.logWarning("slow append")
      }).pipe(Effect.withLogSpan("append"), Effect.annotateLogs({ stream: "orders-1", count: 3 }))
      const [entry] = out.parsed()
      expect(entry.level).toBe("WARN")
      expect(entry.annotations).toEqual({ stream: "orders-1", count: 3 })
      expect(entry.spans).toEqual({ append: 250 })
    }).pipe(Effect.provide(JsonLogger.layer(out.sink, LogLevel.Info)))
  })

  it.effect("renders the cause when present and omits empty fields otherwise", () => {
    const out = capture()
    return Effect.gen(function* () {
      yield* Effect.logError("write failed", Cause.fail(new Error("disk full")))
      yield* Effect.logError("no cause")
      const [withCause, without] = out.parsed()
      expect(withCause.message).toBe("write failed")
      expect(withCause.cause).toContain("disk full")
      expect(without).not.toHaveProperty("cause")
      expect(without).not.toHaveProperty("annotations")
      expect(without).not.toHaveProperty("spans")
    }).pipe(Effect.provide(JsonLogger.layer(out.sink, LogLevel.Info)))
  })

  it.effect("drops messages below the minimum level", () => {
    const out = capture()
    return Effect.gen(function* () {
      yield* Effect.logDebug("hidden")
      yield* Effect.logInfo("shown")
      expect(out.parsed().map((entry) => entry.message)).toEqual(["shown"])
    }).pipe(Effect.provide(JsonLogger.layer(out.sink, LogLevel.Info)))
  })

  it("replaces the default logger instead of adding to it", () => {
    const out = capture()
    // Plain runtime (it.effect's test environment already removes the default logger).
    const loggers = FiberRef.get(FiberRef.currentLoggers)
    const before = Effect.runSync(loggers)
    const after = Effect.runSync(Effect.provide(loggers, JsonLogger.layer(out.sink, LogLevel.Info)))
    expect(HashSet.has(before, Logger.defaultLogger)).toBe(true)
    expect(HashSet.has(after, Logger.defaultLogger)).toBe(false)
    expect(HashSet.size(after)).toBe(HashSet.size(before))
  })

  it.effect("serializes awkward messages without throwing", () => {
    const out = capture()
    const cyclic: Record<string, unknown> = { name: "loop" }
    cyclic.self = cyclic
    return Effect.gen(function* () {
      yield* Effect.logInfo("several", 42n, { nested: [1, Infinity] }, cyclic, new Error("boom"), undefined)
      const [entry] = out.parsed()
      expect(entry.message).toEqual([
        "several",
        "42",
        { nested: [1, "Infinity"] },
        { name: "loop", self: "[Circular]" },
        { name: "Error", message: "boom" },
        null
      ])
    }).pipe(Effect.provide(JsonLogger.layer(out.sink, LogLevel.Info)))
  })
})
