/**
 * Filtered `$all` reads: the filter from the query string with the reference's
 * messages, and a read that pages through the log keeping the events that pass, stopping at `count`
 * matches, the end of the log, or a search window (so a rare match cannot make one request scan the log).
 */
import { Effect } from "effect"
import type { AllRead, EventStoreService, ReadFailure, ReadOptions, ResolvedEvent } from "@vellum/storage"
import { originalEvent } from "@vellum/storage"
import type { Parsed } from "./controlHeaders.js"

export interface AllFilter {
  readonly context: "eventtype" | "streamid"
  readonly test: (value: string) => boolean
}

/** Records examined per request at most (the reference's forward search window). */
export const FilterSearchWindow = 1000

const NoSystemEvents: AllFilter = { context: "eventtype", test: (type) => !type.startsWith("$") }

/** `?exclude-system-events=true`, or `?context=eventtype|streamid&type=prefix|regex&data=…`. */
export const parseAllFilter = (query: URLSearchParams): Parsed<AllFilter> => {
  const exclude = query.get("exclude-system-events")
  if (exclude !== null) {
    return exclude.trim().toLowerCase() === "true"
      ? { ok: true, value: NoSystemEvents }
      : { ok: false, message: "exclude-sytem-events should have a value of true." }
  }
  const context = query.get("context")
  if (context !== "eventtype" && context !== "streamid") {
    return { ok: false, message: "Invalid context please provide one of the following: StreamId, EventType." }
  }
  const type = query.get("type")
  if (type !== "prefix" && type !== "regex")
    return { ok: false, message: "Invalid type please provide one of the following: Regex, Prefix." }
  const data = query.get("data")
  if (data === null || data === "")
    return { ok: false, message: "Please provide a comma delimited list of data with at least one item." }
  if (type === "regex") {
    let pattern: RegExp
    try {
      pattern = new RegExp(data)
    } catch {
      return { ok: false, message: `Invalid regular expression: ${data}` }
    }
    return { ok: true, value: { context, test: (value) => pattern.test(value) } }
  }
  const prefixes = data.split(",").filter((p) => p !== "")
  return { ok: true, value: { context, test: (value) => prefixes.some((p) => value.startsWith(p)) } }
}

const passes = (filter: AllFilter, resolved: ResolvedEvent): boolean => {
  const record = originalEvent(resolved)
  return filter.test(filter.context === "eventtype" ? record.eventType : record.stream)
}

/**
 * Reads `$all` keeping matching events. Each storage read asks for no more events than are still
 * wanted, so the page's continuation position is always one the store handed out.
 */
export const readFiltered = (
  store: EventStoreService,
  direction: "forward" | "backward",
  from: number,
  count: number,
  filter: AllFilter,
  options: ReadOptions
): Effect.Effect<AllRead, ReadFailure> =>
  Effect.gen(function* () {
    const events: Array<ResolvedEvent> = []
    let position = from
    let scanned = 0
    let isEnd = false
    while (events.length < count && !isEnd && scanned < Math.max(count, FilterSearchWindow)) {
      const want = count - events.length
      const page =
        direction === "forward"
          ? yield* store.readAllForward(position, want, options)
          : yield* store.readAllBackward(position, want, options)
      for (const e of page.events) if (passes(filter, e)) events.push(e)
      scanned += page.events.length
      position = page.nextPosition
      isEnd = page.isEnd || page.events.length === 0
    }
    return { events, nextPosition: position, isEnd }
  })
