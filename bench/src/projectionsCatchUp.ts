/**
 * The catch-up parts of `npm run bench:projections`, over one prefilled log (E events of ~256 B in 100 streams of
 * 4 categories, 100 per append, every projection stopped while it is written):
 *
 *   - the peer: the node's own `$all` read rate over the same log, one client walking its 100-event forward
 *     pages (`bench:http`'s `$all` pages) by their `previous` links, as a projection reads: one page after
 *     the other;
 *   - `$by_category` enabled: the time until it has processed E events and written its links (events/s), beside
 *     the `$all` read rate and the prefill's append rate (it writes a link per event);
 *   - the ceiling of a user projection: the counting handler alone, in this process (the code path of
 *     `bench:projections-execution`, batches of 500), measured while the node is idle;
 *   - a counting projection and a partitioned one (`foreachStream`), created continuous: events/s until each has
 *     processed E events; the counting one's state must then say E.
 */
import { Effect } from "effect"
import { print } from "./benchSupport.js"
import { ALL_PAGE_SIZE, ALL_START, ATOM_JSON, round } from "./httpPlan.js"
import { expectStatus } from "./httpPrefill.js"
import type { VellumNode } from "./httpProcesses.js"
import { handlerEventsPerSec } from "./projectionsHandlerRate.js"
import {
  createContinuous,
  enableProjection,
  prefillCategories,
  projectionPath,
  timeToProcess,
  writerBetween,
  writerFigures
} from "./projectionsHttp.js"

export const COUNTING_QUERY = "fromAll().when({$init:()=>({n:0}),$any:(s,e)=>{s.n++}})"
export const PARTITIONED_QUERY = "fromAll().foreachStream().when({$init:()=>({n:0}),$any:(s,e)=>{s.n++}})"
/** `$by_category`'s catch-up, at least, in events/s (issue 21's target). */
export const TARGET_BY_CATEGORY = 200_000
/** A user counting projection, at least, in events/s (issue 21's target). */
export const TARGET_USER = 50_000
const STREAMS = 100
const CATEGORIES = 4

export interface CatchUpOptions {
  readonly authorization: string
  readonly events: number
}

interface Feed {
  readonly entries: ReadonlyArray<{ readonly streamId?: string }>
  readonly links: ReadonlyArray<{ readonly uri: string; readonly relation: string }>
}

/** Walks `$all` forward from its start, one 100-event page at a time; records read and events/s. */
const readAll = async (origin: string, authorization: string) => {
  let path = `/streams/$all/${ALL_START}/forward/${ALL_PAGE_SIZE}`
  let records = 0
  const began = performance.now()
  for (;;) {
    const response = await fetch(origin + path, { headers: { authorization, accept: ATOM_JSON } })
    await expectStatus(response, 200, `GET ${path}`)
    const feed = (await response.json()) as Feed
    records += feed.entries.length
    const previous = feed.links.find((link) => link.relation === "previous")
    if (feed.entries.length < ALL_PAGE_SIZE || previous === undefined) break
    const url = new URL(previous.uri)
    path = url.pathname + url.search
  }
  const secs = (performance.now() - began) / 1000
  return { records, secs: round(secs, 2), recordsPerSec: Math.round(records / secs) }
}

const stateOf = async (origin: string, authorization: string, name: string) => {
  const response = await fetch(`${origin}${projectionPath(name)}/state`, { headers: { authorization } })
  await expectStatus(response, 200, `state of ${name}`)
  return response.text()
}

/** Prefills the log, then runs each part in turn; answers whether every projection processed the whole log. */
export const measureCatchUp = async (node: VellumNode, options: CatchUpOptions): Promise<boolean> => {
  const { authorization, events } = options
  const { origin } = node
  const prefillBegan = performance.now()
  await prefillCategories(origin, authorization, { events, streams: STREAMS, categories: CATEGORIES })
  const prefillSecs = (performance.now() - prefillBegan) / 1000
  const prefillRate = events / prefillSecs
  print({
    bench: "catch-up-prefill",
    events,
    streams: STREAMS,
    categories: CATEGORIES,
    secs: round(prefillSecs, 1),
    eventsPerSec: Math.round(prefillRate)
  })
  const peer = await readAll(origin, authorization)
  print({ bench: "catch-up-all-read-peer", pageSize: ALL_PAGE_SIZE, clients: 1, ...peer })

  const writerBefore = await writerFigures(origin, authorization)
  const began = performance.now()
  await enableProjection(origin, authorization, "$by_category")
  const byCategory = await timeToProcess(origin, authorization, "$by_category", events, began)
  const writer = writerBetween(writerBefore, await writerFigures(origin, authorization), events)
  print({
    bench: "catch-up-by-category",
    events,
    secs: byCategory.secs,
    eventsPerSec: byCategory.eventsPerSec,
    ratioToAllRead: round(byCategory.eventsPerSec / peer.recordsPerSec, 3),
    // It writes one link per event: the prefill's appends (16 clients, 100 events each) are its other peer.
    ratioToPrefillAppends: round(byCategory.eventsPerSec / prefillRate, 3),
    writer,
    target: TARGET_BY_CATEGORY,
    met: byCategory.eventsPerSec >= TARGET_BY_CATEGORY
  })

  const ceiling = await Effect.runPromise(handlerEventsPerSec(COUNTING_QUERY, 500, 40))
  print({ bench: "catch-up-user-ceiling", handler: "counting", batch: 500, ...ceiling })
  let valid = true
  for (const [name, query] of [
    ["count", COUNTING_QUERY],
    ["count-by-stream", PARTITIONED_QUERY]
  ] as const) {
    const userWriterBefore = await writerFigures(origin, authorization)
    const started = performance.now()
    await createContinuous(origin, authorization, name, query)
    const user = await timeToProcess(origin, authorization, name, events, started)
    const userWriter = writerBetween(userWriterBefore, await writerFigures(origin, authorization), events)
    const state = name === "count" ? await stateOf(origin, authorization, name) : undefined
    const stateRight = state === undefined || state === JSON.stringify({ n: events })
    valid &&= stateRight
    print({
      bench: "catch-up-user",
      projection: name,
      query,
      events,
      secs: user.secs,
      eventsPerSec: user.eventsPerSec,
      ratioToHandlerAlone: round(user.eventsPerSec / ceiling.best, 3),
      ratioToAllRead: round(user.eventsPerSec / peer.recordsPerSec, 3),
      writer: userWriter,
      ...(state !== undefined ? { state, stateRight } : {}),
      target: name === "count" ? TARGET_USER : undefined,
      met: name === "count" ? user.eventsPerSec >= TARGET_USER : undefined
    })
  }
  return valid && peer.records >= events
}
