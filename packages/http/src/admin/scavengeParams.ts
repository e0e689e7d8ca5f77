/**
 * The query of `POST /admin/scavenge`: validated in the reference's order, the first
 * failure answered with its exact message; values parsed as .NET does (dotnetParse.ts). A parameter that is
 * present but empty (`?threads=`) is malformed, as a bound-but-empty template variable is upstream.
 */
import type { StartScavengeOptions } from "@vellum/scavenge"
import { tryParseBoolean, tryParseInt32 } from "../dotnetParse.js"

/** Chunk execution runs at most this many chunks at once; more threads are clamped, not refused. */
export const MAX_SCAVENGE_THREADS = 4

export const ScavengeParamMessages = {
  startFromChunk: "startFromChunk must be a positive integer",
  threads: "threads must be a 1 or above",
  threshold: "threshold must be an integer",
  throttlePercent: "throttlePercent must be between 1 and 100 inclusive",
  throttleWithThreads: "throttlePercent must be 100 for a multi-threaded scavenge",
  syncOnly: "syncOnly must be a boolean"
} as const

export type ScavengeQuery =
  | {
      readonly ok: true
      readonly options: StartScavengeOptions
      /** The `threads` asked for, before clamping (for the warning the reference logs). */
      readonly requestedThreads: number
    }
  | { readonly ok: false; readonly message: string }

const refuse = (message: string): ScavengeQuery => ({ ok: false, message })

export const parseScavengeQuery = (query: URLSearchParams): ScavengeQuery => {
  let startFromChunk = 0
  const startFromChunkText = query.get("startFromChunk")
  if (startFromChunkText !== null) {
    const n = tryParseInt32(startFromChunkText)
    if (n === undefined || n < 0) return refuse(ScavengeParamMessages.startFromChunk)
    startFromChunk = n
  }

  let threads = 1
  const threadsText = query.get("threads")
  if (threadsText !== null) {
    const n = tryParseInt32(threadsText)
    if (n === undefined || n < 1) return refuse(ScavengeParamMessages.threads)
    threads = n
  }

  let threshold: number | undefined
  const thresholdText = query.get("threshold")
  if (thresholdText !== null) {
    threshold = tryParseInt32(thresholdText)
    if (threshold === undefined) return refuse(ScavengeParamMessages.threshold)
  }

  let throttlePercent = 100
  const throttleText = query.get("throttlePercent")
  if (throttleText !== null) {
    const n = tryParseInt32(throttleText)
    if (n === undefined || n < 1 || n > 100) return refuse(ScavengeParamMessages.throttlePercent)
    // Checked against the threads asked for: clamping never brings a request down to one thread.
    if (n !== 100 && threads > 1) return refuse(ScavengeParamMessages.throttleWithThreads)
    throttlePercent = n
  }

  let syncOnly = false
  const syncOnlyText = query.get("syncOnly")
  if (syncOnlyText !== null) {
    const b = tryParseBoolean(syncOnlyText)
    if (b === undefined) return refuse(ScavengeParamMessages.syncOnly)
    syncOnly = b
  }

  return {
    ok: true,
    options: { threads: Math.min(threads, MAX_SCAVENGE_THREADS), threshold, throttlePercent, syncOnly, startFromChunk },
    requestedThreads: threads
  }
}
