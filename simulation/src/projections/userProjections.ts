/**
 * The two user projections a projections seed creates (continuous, checkpointed, JavaScript), and what each
 * must hold, derived from one scan of `$all`:
 *
 * - `sim-counts` (emit off) counts, over `fromAll()`, the events of non-`$` streams whose type does not start
 *   with `$`, by category and by type. Its state must be exactly that count of the log: an event counted
 *   twice after a restart (a checkpoint behind the state it stored) or never shows. A scavenge may remove
 *   counted events from the log afterwards, so once one could have, each count may only exceed the log's.
 * - `sim-copies` (emit on) links each such event of a categorised stream into `copies-{category}`: one link
 *   per event, in `$all` order, exactly once across restarts (the same rules as the system projections'
 *   link streams, projectionsChecks.ts). Its links are themselves categorised (`copies`), so `$by_category`
 *   recategorises them to their targets.
 *
 * A JSON-flagged event whose data is empty or not JSON never reaches a handler (the reference drops it).
 */
import { categoryOf, type ExpectedLink, type ScannedRecord } from "./projectionsChecks.js"

export const CountsProjection = "sim-counts"
export const CopiesProjection = "sim-copies"
export const CopiesPrefix = "copies-"

export const countsQuery = `fromAll().when({
  $init: function () { return { events: 0, byCategory: {}, byType: {} } },
  $any: function (s, e) {
    if (e.streamId.charAt(0) === "$" || e.eventType.charAt(0) === "$") return s
    var at = e.streamId.indexOf("-")
    var category = at > 0 ? e.streamId.substring(0, at) : "-"
    s.events += 1
    s.byCategory[category] = (s.byCategory[category] || 0) + 1
    s.byType[e.eventType] = (s.byType[e.eventType] || 0) + 1
    return s
  }
})`

export const copiesQuery = `fromAll().when({
  $any: function (s, e) {
    if (e.streamId.charAt(0) === "$" || e.eventType.charAt(0) === "$") return s
    var at = e.streamId.indexOf("-")
    if (at > 0) linkTo("${CopiesPrefix}" + e.streamId.substring(0, at), e)
    return s
  }
})`

export interface Counts {
  readonly events: number
  readonly byCategory: Readonly<Record<string, number>>
  readonly byType: Readonly<Record<string, number>>
}

const isJsonText = (data: Uint8Array): boolean => {
  try {
    JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString())
    return true
  } catch {
    return false
  }
}

/** The events both user projections' handlers act on. */
export const handledByUser = (record: ScannedRecord): boolean =>
  !record.stream.startsWith("$") && !record.eventType.startsWith("$") && (!record.isJson || isJsonText(record.data))

export const expectedCounts = (records: ReadonlyArray<ScannedRecord>): Counts => {
  const byCategory: Record<string, number> = {}
  const byType: Record<string, number> = {}
  let events = 0
  for (const record of records) {
    if (!handledByUser(record)) continue
    events++
    const category = categoryOf(record.stream) ?? "-"
    byCategory[category] = (byCategory[category] ?? 0) + 1
    byType[record.eventType] = (byType[record.eventType] ?? 0) + 1
  }
  return { events, byCategory, byType }
}

/**
 * The counts state against the log's counts: equal, or (`scavenged`: a scavenge may have removed counted
 * events) each at least the log's. Problems, if any. A projection whose handler has not run yet has an empty
 * state (`$init` runs with the first event it handles), which is right only while the log holds no event
 * to count.
 */
export const checkCounts = (stateText: string, log: Counts, scavenged: boolean): Array<string> => {
  if (stateText === "" && log.events === 0) return []
  let state: Counts
  try {
    state = JSON.parse(stateText) as Counts
  } catch {
    return [`${CountsProjection}'s state is not JSON: ${stateText.slice(0, 120)}`]
  }
  if (typeof state !== "object" || state === null || typeof state.events !== "number")
    return [`${CountsProjection}'s state is not a count: ${stateText.slice(0, 120)}`]
  const problems: Array<string> = []
  const compare = (what: string, got: number | undefined, want: number | undefined) => {
    const g = got ?? 0
    const w = want ?? 0
    if (scavenged ? g < w : g !== w) problems.push(`${CountsProjection} counts ${g} ${what}, the log holds ${w}`)
  }
  compare("events", state.events, log.events)
  for (const key of new Set([...Object.keys(state.byCategory ?? {}), ...Object.keys(log.byCategory)]))
    compare(`events of category ${key}`, state.byCategory?.[key], log.byCategory[key])
  for (const key of new Set([...Object.keys(state.byType ?? {}), ...Object.keys(log.byType)]))
    compare(`events of type ${key}`, state.byType?.[key], log.byType[key])
  return problems
}

/** What `sim-copies` must have written: per `copies-…` stream, in `$all` order. */
export const expectedCopyLinks = (records: ReadonlyArray<ScannedRecord>): Map<string, Array<ExpectedLink>> => {
  const out = new Map<string, Array<ExpectedLink>>()
  for (const record of records) {
    const category = categoryOf(record.stream)
    if (category === undefined || !handledByUser(record)) continue
    const stream = `${CopiesPrefix}${category}`
    const link: ExpectedLink = {
      position: record.logPosition,
      target: `${record.eventNumber}@${record.stream}`,
      original: undefined,
      deleted: false,
      fromLink: false
    }
    const list = out.get(stream)
    if (list === undefined) out.set(stream, [link])
    else list.push(link)
  }
  return out
}
