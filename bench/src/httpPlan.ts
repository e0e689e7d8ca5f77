/**
 * What the processes of `npm run bench:http` say to each other, and the pure helpers they share: a load
 * plan (sent to the load worker), its result, the canned replies the bare server answers with, and the
 * request bodies of the append scenarios.
 */

/** The appends the node expects: a JSON array of events, ids and types in the body. */
export const EVENTS_CONTENT_TYPE = "application/vnd.eventstore.events+json"
export const ATOM_JSON = "application/vnd.eventstore.atom+json"
/** The first position of `$all` (commit then prepare, 16 hex digits each). */
export const ALL_START = "0".repeat(32)
export const PAGE_SIZE = 20
/** `$all` catch-up reads pages of 100 (the issue's scenario). */
export const ALL_PAGE_SIZE = 100

export const basicAuth = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`

interface PlanBase {
  /** `http://127.0.0.1:port` of the server under load. */
  readonly origin: string
  readonly authorization: string
  readonly connections: number
  /** Load before the measured window (JIT and caches warm on both sides); not counted. */
  readonly warmupSec: number
  readonly durationSec: number
  /** The server's process id: its CPU over the measured window is read from /proc (Linux), when readable. */
  readonly serverPid?: number
}

/** POST `eventsPerAppend` new events to one of `streams` streams (expected version -2, any), round robin. */
export interface AppendPlan extends PlanBase {
  readonly kind: "append"
  readonly eventsPerAppend: number
  readonly streamPrefix: string
  readonly streams: number
}

/** GET each of `paths` in turn (shared by all connections), with `accept`. */
export interface ReadPlan extends PlanBase {
  readonly kind: "read"
  readonly paths: ReadonlyArray<string>
  readonly accept: string
}

/**
 * Competing consumers of a persistent subscription group: each connection GETs `path` (the group's feed,
 * `/subscriptions/{s}/{g}/{count}?embed=…`) with `accept` (a JSON competing feed), then acks every message it
 * got with one POST of the feed's `ackAll` link. One request of the result is that pair; an empty feed is
 * counted (`emptyReads`) and not acked.
 */
export interface ConsumePlan extends PlanBase {
  readonly kind: "consume"
  readonly path: string
  readonly accept: string
}

export type LoadPlan = AppendPlan | ReadPlan | ConsumePlan

export interface LoadResult {
  /** Responses completed inside the measured window. */
  readonly requests: number
  readonly reqPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  /** Requests that got no response (socket errors, timeouts), over warm-up and window. */
  readonly errors: number
  readonly non2xx: number
  /** Status code → count, over warm-up and window. */
  readonly statuses: Readonly<Record<string, number>>
  readonly meanResponseBytes: number
  /** CPU the load process used, in % of one core over its run: near 100 means the generator is the limit. */
  readonly loadCpuPercent: number
  /**
   * The server's CPU time (all its threads, user + system) per response in the measured window, in µs; absent
   * where /proc cannot be read. Unlike requests/s it does not depend on whether the generator is the limit.
   */
  readonly serverCpuUsPerRequest?: number
  /** The kernel's share of that CPU time (system / (user + system)), in %. */
  readonly serverSystemPercent?: number
  /** Consume plans: messages acked by the pairs that completed in the measured window. */
  readonly events?: number
  /** Consume plans: feeds that came back empty (over warm-up and window); the group had nothing to hand out. */
  readonly emptyReads?: number
  readonly firstError?: string
}

/** A reply the bare server sends verbatim: captured from the node, so both put the same bytes on the wire. */
export interface CannedReply {
  readonly status: number
  readonly reason: string
  readonly headers: Readonly<Record<string, string>>
  readonly bodyBase64: string
}

export interface CannedReplies {
  readonly append: CannedReply
  readonly streamPage: CannedReply
  readonly allPage: CannedReply
}

/** Messages from the bare server to its parent. */
export type BareMessage = { readonly listening: number }

/**
 * A version-4-shaped UUID unique per (salt, n): the salt is random per load process, n counts its events.
 * Cheaper than random UUIDs at 100k+ ids per second, and the server only needs them distinct.
 */
export const eventId = (salt: string, n: number) => `${salt}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

const EVENT_DATA = JSON.stringify({ orderId: "order-123", amount: 42.5, currency: "EUR", lines: [1, 2, 3] })

/** The body of one append of `count` events, ids `firstN`, `firstN + 1`, …. */
export const appendBody = (salt: string, firstN: number, count: number): string => {
  const events = new Array<string>(count)
  for (let i = 0; i < count; i++) {
    events[i] = `{"eventId":"${eventId(salt, firstN + i)}","eventType":"BenchEvent","data":${EVENT_DATA}}`
  }
  return `[${events.join(",")}]`
}

/**
 * The path and query of a JSON competing feed's `ackAll` link (`/subscriptions/{s}/{g}/ack?ids=a,b,…`) and how
 * many ids it names; undefined when the feed has no messages (no `ackAll` link). The feed is searched as text,
 * not parsed: the first ack link with `?ids=` in it is the feed's `ackAll` (the entries' own links name one id
 * in the path).
 */
export const ackAllOf = (feed: string): { readonly path: string; readonly ids: number } | undefined => {
  const match = /"uri": *"[a-z]+:\/\/[^/"]*(\/subscriptions\/[^"]*\/ack\?ids=([^"]*))"/.exec(feed)
  if (match === null) return undefined
  return { path: match[1]!, ids: match[2]!.split(",").length }
}

/** The value at quantile `q` (0..1) of ascending `sorted`, nearest-rank; 0 when empty. */
export const quantile = (sorted: ArrayLike<number>, q: number): number => {
  if (sorted.length === 0) return 0
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank]
}

export const round = (x: number, digits: number) => {
  const f = 10 ** digits
  return Math.round(x * f) / f
}
