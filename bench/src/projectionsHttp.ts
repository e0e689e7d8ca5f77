/**
 * What the parts of `npm run bench:projections` share: the projection calls they make over HTTP (statistics,
 * enable, create), the log's committed end from `/metrics`, a prefill of streams in a few categories, and the
 * wait for a projection to reach a number of processed events.
 */
import * as crypto from "node:crypto"
import { appendBody, round } from "./httpPlan.js"
import { appendHeaders, expectStatus } from "./httpPrefill.js"

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The figures of `GET /projection/{name}` the benchmark reads; `commit` is the position's commit part. */
export interface ProjectionFigures {
  readonly status: string
  readonly commit: number | undefined
  readonly eventsProcessedAfterRestart: number
  readonly lagEvents: number
  readonly lagMilliseconds: number
  readonly pendingWrites: number
}

/** The commit position of a `$all` position's text (`C:123/P:123`); undefined for any other. */
export const commitOf = (position: string): number | undefined => {
  const match = /^C:(-?\d+)\/P:-?\d+$/.exec(position)
  return match === null ? undefined : Number(match[1])
}

/** Events between a projection's position and the log's committed end, from their distance in bytes. */
export const eventsBehind = (committed: number, commit: number | undefined, logBytesPerEvent: number) =>
  Math.max(0, committed - (commit ?? 0)) / logBytesPerEvent

export const projectionPath = (name: string) => `/projection/${encodeURIComponent(name)}`

export const readProjection = async (
  origin: string,
  authorization: string,
  name: string
): Promise<ProjectionFigures> => {
  const response = await fetch(origin + projectionPath(name), {
    headers: { authorization, accept: "application/json" }
  })
  await expectStatus(response, 200, `statistics of ${name}`)
  const s = (await response.json()) as {
    status: string
    position: string
    eventsProcessedAfterRestart: number
    lagEvents: number
    lagMilliseconds: number
    writePendingEventsBeforeCheckpoint: number
    writePendingEventsAfterCheckpoint: number
  }
  return {
    status: s.status,
    commit: commitOf(s.position),
    eventsProcessedAfterRestart: s.eventsProcessedAfterRestart,
    lagEvents: s.lagEvents,
    lagMilliseconds: s.lagMilliseconds,
    pendingWrites: s.writePendingEventsBeforeCheckpoint + s.writePendingEventsAfterCheckpoint
  }
}

const post = async (origin: string, authorization: string, path: string, body: string, status: number) => {
  const response = await fetch(origin + path, { method: "POST", headers: { authorization }, body })
  await expectStatus(response, status, `POST ${path}`)
  await response.arrayBuffer()
}

export const enableProjection = (origin: string, authorization: string, name: string) =>
  post(origin, authorization, `${projectionPath(name)}/command/enable`, "", 200)

/** A continuous JavaScript projection, enabled, emit off, checkpoints on (the defaults of a continuous one). */
export const createContinuous = (origin: string, authorization: string, name: string, query: string) =>
  post(
    origin,
    authorization,
    `/projections/continuous?name=${encodeURIComponent(name)}&type=JS&enabled=yes&emit=no`,
    query,
    201
  )

/** The figures of `/metrics` the benchmark reads: the log's committed end, and the writer's durable batches. */
export interface WriterFigures {
  readonly committed: number
  readonly flushes: number
  readonly flushSeconds: number
}

export const writerFigures = async (origin: string, authorization: string): Promise<WriterFigures> => {
  const response = await fetch(`${origin}/metrics`, { headers: { authorization } })
  await expectStatus(response, 200, "GET /metrics")
  const text = await response.text()
  const metric = (name: string) => {
    const match = new RegExp(`^${name} ([0-9.e+-]+)$`, "m").exec(text)
    if (match === null) throw new Error(`/metrics has no ${name}`)
    return Number(match[1])
  }
  return {
    committed: metric("vellum_log_committed_position_bytes"),
    flushes: metric("vellum_writer_flushes_total"),
    flushSeconds: metric("vellum_writer_flush_seconds_total")
  }
}

/** The log's committed end in bytes (`vellum_log_committed_position_bytes` of `/metrics`). */
export const committedPosition = async (origin: string, authorization: string): Promise<number> =>
  (await writerFigures(origin, authorization)).committed

/** The writer's durable batches between two readings: how many, their mean time to durable, events per batch. */
export const writerBetween = (before: WriterFigures, after: WriterFigures, events: number) => {
  const flushes = after.flushes - before.flushes
  return {
    flushes,
    meanFlushMs: flushes === 0 ? 0 : round(((after.flushSeconds - before.flushSeconds) * 1000) / flushes, 2),
    eventsPerFlush: flushes === 0 ? 0 : Math.round(events / flushes)
  }
}

/** Stream `k` of the prefill: `cat{k mod categories}-{k}`, so `$by_category` splits them into `categories`. */
export const categoryStream = (k: number, categories: number) => `cat${k % categories}-${k}`

/** Writes `events` events (a multiple of 100) round robin to `streams` streams in `categories` categories. */
export const prefillCategories = async (
  origin: string,
  authorization: string,
  options: { readonly events: number; readonly streams: number; readonly categories: number }
) => {
  const salt = crypto.randomBytes(4).toString("hex")
  const appends = Math.ceil(options.events / 100)
  let next = 0
  const appender = async () => {
    for (let k = next++; k < appends; k = next++) {
      const stream = categoryStream(k % options.streams, options.categories)
      const response = await fetch(`${origin}/streams/${stream}`, {
        method: "POST",
        headers: appendHeaders(authorization),
        body: appendBody(salt, k * 100, 100)
      })
      await expectStatus(response, 201, "prefill append")
      await response.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 16 }, appender))
}

/**
 * Polls `name` every `pollMs` until it has processed `events` events and written everything it queued; the
 * seconds from `startedMs` (a `performance.now()`) to the first poll that saw it, and the events per second.
 */
export const timeToProcess = async (
  origin: string,
  authorization: string,
  name: string,
  events: number,
  startedMs: number,
  pollMs = 50
) => {
  const deadline = startedMs + 30 * 60_000
  for (;;) {
    const figures = await readProjection(origin, authorization, name)
    if (figures.status.startsWith("Faulted")) throw new Error(`${name} faulted: ${figures.status}`)
    if (figures.eventsProcessedAfterRestart >= events && figures.pendingWrites === 0) {
      const secs = (performance.now() - startedMs) / 1000
      return { secs: round(secs, 2), eventsPerSec: Math.round(figures.eventsProcessedAfterRestart / secs), figures }
    }
    if (performance.now() > deadline) throw new Error(`${name} did not reach ${events} events in 30 minutes`)
    await sleep(pollMs)
  }
}
