/**
 * `$maxAge` in the model. The node stamps each event with its creation time when the writer takes it, so
 * the simulator knows it only as a bracket: after the request was sent, before it was acknowledged (or,
 * for an indeterminate write, before the checker found it written). `EventTimes` keeps that bracket, and the
 * send's place in the run's order of sends and scavenge-point sightings (scavengePoints.ts uses both).
 *
 * A read applies `$maxAge` by its own time: an event created at c is expired at time t when
 * c < t − maxAge·10⁶ µs (the reference's rule; the node's is the same). A read sent at t0 and answered at t1
 * may judge at any t in [t0, t1], and an event's c lies in its bracket, so each event is certainly expired,
 * certainly live, or either. Creation times grow with event numbers (the clock never goes back), so expired
 * events are a prefix of the stream: the read may answer with any expired prefix between the certain one
 * and the possible one, and `possibleReads` gives the model's page for each (usually just one).
 *
 * With some events expired, the reference's paging differs from the plain read rules:
 *   forward  — the window's expired events are left out; if none is left and the window starts at or
 *              below the last event, the page is empty and points at the first live event (next = that
 *              number, not end of stream), or, when every event from the window on has expired, at last + 1
 *              (end of stream);
 *   backward — the expired events are left out, and a window that held any is the end of the stream
 *              (next = −1: everything before it has expired too);
 *   single   — an expired event is NotFound.
 */
import type { EventReadModel, ModelEvent, StoreModel, StreamReadModel } from "./model.js"

/** When an event's write was sent and acknowledged (world ms), and the send's place in the run's order. */
export interface EventTiming {
  readonly sentMs: number
  readonly sentSeq: number
  readonly ackMs: number
}

/** An event the simulator never stamped: created at any time, sent at any point in the run's order. */
const Unknown: EventTiming = { sentMs: -Infinity, sentSeq: -Infinity, ackMs: Infinity }

export class EventTimes {
  private readonly sends = new WeakMap<object, { readonly ms: number; readonly seq: number }>()
  private readonly timings = new WeakMap<ModelEvent, EventTiming>()
  /** The run's order of sends and scavenge-point sightings. */
  private seq = 0

  nextSeq(): number {
    return ++this.seq
  }

  /** A write (`op`, any object that stands for it) is sent now. */
  sent(op: object, nowMs: number): void {
    this.sends.set(op, { ms: nowMs, seq: this.nextSeq() })
  }

  /** The events `op` wrote are known to be stored by `nowMs` (its acknowledgement, or a checker's read). */
  written(op: object, events: ReadonlyArray<ModelEvent>, nowMs: number): void {
    const sent = this.sends.get(op)
    const timing: EventTiming =
      sent === undefined ? { ...Unknown, ackMs: nowMs } : { sentMs: sent.ms, sentSeq: sent.seq, ackMs: nowMs }
    for (const event of events) this.timings.set(event, timing)
  }

  timing(event: ModelEvent): EventTiming {
    return this.timings.get(event) ?? Unknown
  }

  /** Whether the event may have been created before `micros` (it certainly was when `ackMs` is earlier). */
  mayPrecede(event: ModelEvent, micros: number): boolean {
    return this.timing(event).sentMs * 1000 < micros
  }

  certainlyPrecedes(event: ModelEvent, micros: number): boolean {
    return this.timing(event).ackMs * 1000 < micros
  }
}

/** The stream's `$maxAge` in µs, or undefined. */
const maxAgeMicros = (model: StoreModel, stream: string): number | undefined => {
  const seconds = model.metadataOf(stream).maxAge
  return seconds === undefined ? undefined : seconds * 1_000_000
}

/**
 * How many of the stream's first events a read judged at some time in [t0Ms, t1Ms] may find expired:
 * [certainly, possibly] (both 0 without `$maxAge`).
 */
export const expiredPrefix = (
  model: StoreModel,
  times: EventTimes,
  stream: string,
  t0Ms: number,
  t1Ms: number
): readonly [number, number] => {
  const maxAge = maxAgeMicros(model, stream)
  if (maxAge === undefined) return [0, 0]
  const events = model.eventsOf(stream)
  let certain = 0
  while (certain < events.length && times.certainlyPrecedes(events[certain]!, t0Ms * 1000 - maxAge)) certain++
  let possible = certain
  while (possible < events.length && times.mayPrecede(events[possible]!, t1Ms * 1000 - maxAge)) possible++
  return [certain, possible]
}

/**
 * The pages a read may give when the stream's first `expired` events have expired (several when a scavenge
 * may have removed the events a forward read would point at next).
 */
const withExpired = (
  model: StoreModel,
  stream: string,
  direction: "forward" | "backward",
  from: number,
  count: number,
  expired: number,
  page: StreamReadModel
): Array<StreamReadModel> => {
  if (page._tag !== "Success" || expired === 0) return [page]
  const last = page.lastEventNumber
  const min = model.readBound(stream, last)
  const events = page.events.filter((e) => e.eventNumber >= expired)
  if (direction === "forward") {
    const start = Math.max(from, min)
    if (from + count - 1 < min || events.length > 0 || start > last) return [{ ...page, events }]
    // The node points at the first live event it still has: a scavenge may have removed the first few.
    const pages: Array<StreamReadModel> = []
    for (let n = Math.max(start, expired); n <= last; n++) {
      pages.push({ ...page, events, nextEventNumber: n, isEndOfStream: false })
      const event = model.eventsOf(stream)[n]
      if (event === undefined || !model.isDiscardable(event)) return pages
    }
    pages.push({ ...page, events, nextEventNumber: last + 1, isEndOfStream: true })
    return pages
  }
  const end = from < 0 ? last : from
  if (end < min) return [page]
  const start = Math.max(min, end - count + 1)
  if (start > last || expired <= start) return [{ ...page, events }]
  return [{ ...page, events, nextEventNumber: -1, isEndOfStream: true }]
}

/** Every page a stream read sent at t0 and answered at t1 may give, by `$maxAge`; at least one. */
export const possibleReads = (
  model: StoreModel,
  times: EventTimes,
  request: {
    readonly stream: string
    readonly direction: "forward" | "backward"
    readonly from: number
    readonly count: number
  },
  t0Ms: number,
  t1Ms: number
): Array<StreamReadModel> => {
  const { stream, direction, from, count } = request
  const page =
    direction === "forward" ? model.readForward(stream, from, count) : model.readBackward(stream, from, count)
  const [certain, possible] = expiredPrefix(model, times, stream, t0Ms, t1Ms)
  const out: Array<StreamReadModel> = []
  for (let k = certain; k <= possible; k++) out.push(...withExpired(model, stream, direction, from, count, k, page))
  return out
}

/** Every answer a single-event read sent at t0 and answered at t1 may give. */
export const possibleEventReads = (
  model: StoreModel,
  times: EventTimes,
  stream: string,
  eventNumber: number,
  t0Ms: number,
  t1Ms: number
): Array<EventReadModel> => {
  const read = model.readEvent(stream, eventNumber)
  if (read._tag !== "Success") return [read]
  const [certain, possible] = expiredPrefix(model, times, stream, t0Ms, t1Ms)
  const n = read.event.eventNumber
  if (n < certain) return [{ _tag: "NotFound" }]
  if (n < possible) return [read, { _tag: "NotFound" }]
  return [read]
}

/** The first answer that agrees, or the problem with the first one (the check's verdict over all of them). */
export const anyAgrees = <A>(answers: ReadonlyArray<A>, compare: (expected: A) => string | undefined) => {
  let first: string | undefined
  for (const expected of answers) {
    const problem = compare(expected)
    if (problem === undefined) return undefined
    first ??= problem
  }
  return first
}
