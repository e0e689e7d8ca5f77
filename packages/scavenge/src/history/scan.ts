/**
 * What the start-up repair learns from the history streams ("Interrupted runs"), as
 * plain state fed one event at a time by the Effect that pages through the streams.
 *
 * `$scavenges` is read newest first, so a run's completion is seen before its start: a start whose run has
 * no completion by then belongs to a run this node never finished. Payloads that are not JSON objects, or
 * lack a string `nodeEndpoint` / `scavengeId`, are skipped (the reference would stop the whole scan).
 */
import { parseJsonObject, utf8Text } from "@vellum/storage"
import { HistoryEventTypes } from "./payloads.js"
import { parseTimeSpanTicks } from "./timeSpan.js"

/** How many of this node's most recent run streams get their metadata rewritten. */
export const RecentRunsToRefresh = 30

type JsonObject = Readonly<Record<string, unknown>>

const parseObject = (data: Uint8Array): JsonObject | undefined => parseJsonObject(utf8Text(data))

/** The runs of one node found while reading `$scavenges` backwards. */
export class HistoryIndexScan {
  private readonly completedRuns = new Set<string>()
  private readonly interruptedRuns = new Set<string>()
  private readonly recentRuns = new Set<string>()

  constructor(private readonly nodeEndpoint: string) {}

  /** One resolved event of `$scavenges` (the target of a link), newest first. */
  observe(eventType: string, data: Uint8Array): void {
    const payload = parseObject(data)
    if (payload === undefined || payload["nodeEndpoint"] !== this.nodeEndpoint) return
    const scavengeId = payload["scavengeId"]
    if (typeof scavengeId !== "string") return
    if (this.recentRuns.size < RecentRunsToRefresh) this.recentRuns.add(scavengeId)
    if (eventType === HistoryEventTypes.Completed) this.completedRuns.add(scavengeId)
    else if (!this.completedRuns.has(scavengeId)) this.interruptedRuns.add(scavengeId)
  }

  /** Runs of this node with a start and no completion, newest first. */
  get interrupted(): ReadonlyArray<string> {
    return [...this.interruptedRuns]
  }

  /** Up to 30 of this node's runs, newest first. */
  get recent(): ReadonlyArray<string> {
    return [...this.recentRuns]
  }
}

/** What an interrupted run had done, summed over its chunk, merge and index events. */
export interface RunTotals {
  readonly spaceSaved: number
  readonly timeTakenTicks: number
  /** Highest chunkEndNumber of its chunk events (merges do not count); 0 if none. */
  readonly maxChunkScavenged: number
}

export const NoTotals: RunTotals = { spaceSaved: 0, timeTakenTicks: 0, maxChunkScavenged: 0 }

const integerField = (payload: JsonObject, name: string): number | undefined => {
  const value = payload[name]
  return typeof value === "number" && Number.isSafeInteger(value) ? value : undefined
}

/** Adds one event of a run's stream to its totals (events of other types leave them unchanged). */
export const addToTotals = (totals: RunTotals, eventType: string, data: Uint8Array): RunTotals => {
  const isChunks = eventType === HistoryEventTypes.ChunksCompleted
  if (!isChunks && eventType !== HistoryEventTypes.MergeCompleted && eventType !== HistoryEventTypes.IndexCompleted)
    return totals
  const payload = parseObject(data)
  if (payload === undefined) return totals
  const timeTaken = payload["timeTaken"]
  const ticks = typeof timeTaken === "string" ? (parseTimeSpanTicks(timeTaken) ?? 0) : 0
  const chunkEnd = isChunks ? integerField(payload, "chunkEndNumber") : undefined
  return {
    spaceSaved: totals.spaceSaved + (integerField(payload, "spaceSaved") ?? 0),
    timeTakenTicks: totals.timeTakenTicks + ticks,
    maxChunkScavenged: chunkEnd === undefined ? totals.maxChunkScavenged : Math.max(totals.maxChunkScavenged, chunkEnd)
  }
}
