/**
 * Checks of one pass over `$all` (read from the EventStore service, page by page), used after every
 * restart and, while scavenges run, by the `$all` scanner during the run:
 *
 * - positions strictly increase (a record is never shown twice, nor out of order, across chunk rewrites
 *   and merges), and so do each stream's event numbers;
 * - a client append's events are contiguous: strict (no scavenge yet) — complete, in order, nothing
 *   between them; once a scavenge may have run (`$all` shows what is physically in
 *   the chunks, so truncated events go as their chunk is executed) — whatever survives of an append is in
 *   order and never resumes after another record;
 * - completeness (`missingFrom`): every model event that must survive appears — an event may be absent only
 *   if a scavenge point the node wrote let it go (`StoreModel.isDiscardable`, scavengePoints.ts).
 */
import { DeletedStreamNumber, type EventRecord } from "@vellum/storage"
import type { ModelEvent, StoreModel } from "./model.js"

/** Client events carry {c, s, i, n}: client, append sequence, index, count. */
const payloadOf = (event: EventRecord): { c: number; s: number; i: number; n: number } | undefined => {
  if (event.eventType !== "E") return undefined
  try {
    return JSON.parse(event.data.toString("utf8")) as { c: number; s: number; i: number; n: number }
  } catch {
    return undefined
  }
}

const keyOf = (stream: string, eventNumber: number): string => `${stream}#${eventNumber}`

export class AllScan {
  private lastPosition = -1
  private readonly lastNumber = new Map<string, number>()
  /** stream#number → its record, for every event shown. */
  private readonly seen = new Map<string, { readonly eventId: string; readonly position: number }>()
  /** The append whose events are being shown, and the index of its last one shown. */
  private open: { key: string; next: number; n: number } | undefined
  /** Relaxed mode: appends another record interrupted (they may not resume). */
  private readonly closed = new Set<string>()

  /** `strict`: no scavenge may have run, so every append is complete in `$all`. */
  constructor(private readonly strict: boolean) {}

  /** One record of the pass; the problem, if any. */
  event(event: EventRecord): string | undefined {
    if (event.logPosition <= this.lastPosition)
      return `$all goes back from ${this.lastPosition} to ${event.logPosition} (${event.stream}#${event.eventNumber})`
    this.lastPosition = event.logPosition
    const key = keyOf(event.stream, event.eventNumber)
    const before = this.seen.get(key)
    if (before !== undefined)
      return `$all shows ${key} twice: at ${before.position} (id ${before.eventId}) and at ${event.logPosition} (id ${event.eventId})`
    this.seen.set(key, { eventId: event.eventId, position: event.logPosition })
    if (event.eventNumber !== DeletedStreamNumber) {
      const prev = this.lastNumber.get(event.stream)
      if (prev !== undefined && event.eventNumber <= prev)
        return `$all shows ${event.stream}#${event.eventNumber} after #${prev}`
      this.lastNumber.set(event.stream, event.eventNumber)
    }
    return this.strict ? this.strictAppend(event) : this.relaxedAppend(event)
  }

  /** At the end of the pass. */
  end(): string | undefined {
    if (this.strict && this.open !== undefined)
      return `$all ends inside append ${this.open.key} (${this.open.next} of ${this.open.n})`
    return undefined
  }

  /** The first of `events` that must be in `$all` and was not shown (or was shown with another id). */
  missingFrom(model: StoreModel, events: ReadonlyArray<ModelEvent>): string | undefined {
    for (const event of events) {
      const shown = this.seen.get(keyOf(event.stream, event.eventNumber))
      if (shown === undefined) {
        if (model.isDiscardable(event)) {
          model.discardRule.gone(event)
          continue
        }
        return `$all lacks ${event.stream}#${event.eventNumber}, which no scavenge may remove`
      }
      if (event.eventId !== undefined && shown.eventId !== event.eventId)
        return `$all shows ${event.stream}#${event.eventNumber} with id ${shown.eventId}, the model ${event.eventId}`
    }
    return undefined
  }

  private strictAppend(event: EventRecord): string | undefined {
    const p = payloadOf(event)
    const open = this.open
    if (open !== undefined && (p === undefined || `${p.c}/${p.s}` !== open.key)) {
      return `$all: append ${open.key} has ${open.next} of its ${open.n} events before ${event.stream}#${event.eventNumber}`
    }
    if (p === undefined) return undefined
    const key = `${p.c}/${p.s}`
    if (open === undefined) {
      if (p.i !== 0) return `$all: append ${key} starts at its event ${p.i}`
      this.open = { key, next: 1, n: p.n }
    } else {
      if (p.i !== open.next) return `$all: append ${key} event ${p.i} where ${open.next} was due`
      open.next++
    }
    if (this.open!.next === this.open!.n) this.open = undefined
    return undefined
  }

  private relaxedAppend(event: EventRecord): string | undefined {
    const p = payloadOf(event)
    // A retried append can be written twice (spec: the id cache does not survive a restart); its copies
    // differ in event numbers, so one write is its stream and first event number.
    const key = p === undefined ? undefined : `${event.stream}@${event.eventNumber - p.i}`
    const open = this.open
    if (open !== undefined && open.key !== key) {
      this.closed.add(open.key)
      this.open = undefined
    }
    if (p === undefined || key === undefined) return undefined
    if (this.open === undefined) {
      if (this.closed.has(key)) return `$all: append ${key} resumes (event ${p.i}) after other records`
      this.open = { key, next: p.i + 1, n: p.n }
      return undefined
    }
    if (p.i < this.open.next) return `$all: append ${key} event ${p.i} after its event ${this.open.next - 1}`
    this.open.next = p.i + 1
    return undefined
  }
}
