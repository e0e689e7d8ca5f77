/**
 * Structured logs: an Effect `Logger` that writes one JSON object per log call to a sink function.
 *
 * The sink is a parameter so the simulator and tests capture lines in memory; the live node passes a
 * function writing to stdout. The timestamp is the log's fiber time, which Effect takes from the `Clock`
 * service, so logs are deterministic under a test or simulated clock.
 *
 * Line shape (fields absent when empty):
 * `{"timestamp":"…Z","level":"INFO","message":…,"fiberId":"#12","annotations":{…},"spans":{"label":ms},"cause":"…"}`
 */
import { Cause, FiberId, HashMap, Layer, List, Logger, type LogLevel } from "effect"

/** Receives one JSON line, without the trailing newline. */
export type LogSink = (line: string) => void

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/**
 * Any logged value as JSON, never throwing: cycles become "[Circular]", bigints and non-finite numbers
 * strings, errors their name and message, values with `toJSON` (dates, Effect data types) their JSON.
 */
const toJson = (value: unknown, ancestors: Set<object> = new Set()): Json => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value
    case "number":
      return Number.isFinite(value) ? value : String(value)
    case "bigint":
      return value.toString()
    case "undefined":
    case "function":
    case "symbol":
      return null
  }
  if (value === null) return null
  const object = value as object // typeof is "object" here
  if (ancestors.has(object)) return "[Circular]"
  ancestors.add(object)
  try {
    if (object instanceof Error) return { name: object.name, message: object.message }
    if (Array.isArray(object)) return object.map((item) => toJson(item, ancestors))
    if (object instanceof Map) return [...object.entries()].map((entry) => toJson(entry, ancestors))
    if (object instanceof Set) return [...object].map((item) => toJson(item, ancestors))
    const withToJson = object as { toJSON?: unknown }
    if (typeof withToJson.toJSON === "function")
      return toJson((withToJson.toJSON as () => unknown).call(object), ancestors)
    const result: Record<string, Json> = {}
    for (const [key, item] of Object.entries(object)) if (item !== undefined) result[key] = toJson(item, ancestors)
    return result
  } finally {
    ancestors.delete(object)
  }
}

/** `Effect.log("a")` logs `["a"]`; one argument is logged as itself, several as an array. */
const messageOf = (message: unknown): Json =>
  toJson(Array.isArray(message) && message.length === 1 ? message[0] : message)

export const jsonLogger = (sink: LogSink): Logger.Logger<unknown, void> =>
  Logger.make(({ annotations, cause, date, fiberId, logLevel, message, spans }) => {
    const entry: Record<string, Json> = {
      timestamp: date.toISOString(),
      level: logLevel.label,
      message: messageOf(message),
      fiberId: FiberId.threadName(fiberId)
    }
    if (HashMap.size(annotations) > 0) {
      const fields: Record<string, Json> = {}
      for (const [key, value] of annotations) fields[key] = toJson(value)
      entry.annotations = fields
    }
    if (List.isCons(spans)) {
      const now = date.getTime()
      const timings: Record<string, Json> = {}
      for (const span of spans) timings[span.label] = now - span.startTime
      entry.spans = timings
    }
    if (!Cause.isEmpty(cause)) entry.cause = Cause.pretty(cause, { renderErrorCause: true })
    sink(JSON.stringify(entry))
  })

/** Replaces Effect's default logger with the JSON logger and drops messages below `minLevel`. */
export const layer = (sink: LogSink, minLevel: LogLevel.LogLevel): Layer.Layer<never> =>
  Layer.merge(Logger.replace(Logger.defaultLogger, jsonLogger(sink)), Logger.minimumLogLevel(minLevel))
