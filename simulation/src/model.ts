/**
 * A reference model of Vellum's stream semantics, written from the reference server's
 * documented behaviour (appends, expected versions, deletes, metadata, reads and the paging mechanics)
 * and NOT from the implementation. It is deliberately naive: a list of every event ever
 * written, a map from stream to its events, a tombstone set, and a map of event ids the writer has seen.
 * Every rule is a direct transcription of one rule of the reference's behaviour, written out next to it.
 *
 * Scope and modelling decisions (the places where the reference's behaviour leaves room are marked DECISION):
 *
 * - Event numbers. `long.MaxValue` (the tombstone's event number and the soft-delete `$tb`) cannot be a JS
 *   number; the port represents it as `Number.MAX_SAFE_INTEGER` in memory and as the literal
 *   9223372036854775807 in metadata JSON. `LongMax` below is that representation.
 * - Expected versions are decided by `decideCommit`, a pure function of a `CommitView`. Retries, whole or
 *   partial (the reference's IndexWriter.CheckCommit, case by case; the ids are all that count, never the
 *   data):
 *   * Any and StreamExists ask the committed-event-id cache about each id in the order sent. The first id
 *     not cached for this stream (absent, or cached for another stream) ends the check: if it is the
 *     first of the batch, the batch is a new write (Ok — even when later ids are cached: new events
 *     followed by old ones are written again); otherwise the batch is corrupted idempotency, answered as
 *     WrongExpectedVersion with the current version (old ids followed by new ones; old ids with a new one
 *     between them, though the cache holds the first and the last). Every id cached for the stream:
 *     Idempotent, answered with the event numbers of the first and the last id as sent (a prefix, a suffix
 *     or a middle slice of an earlier append gets its own numbers; reordered ids may give first > last).
 *   * An explicit N below the current version (NoStream is −1) compares the i-th id with the event stored
 *     at N+1+i. All equal: Idempotent N+1..N+k. The first unequal: WrongExpectedVersion (or, for NoStream
 *     on a soft-deleted stream, Ok: the stream is recreated); a later one unequal, or running past the
 *     stream's end: corrupted idempotency, WrongExpectedVersion. So a slice of an earlier append is
 *     idempotent only under the version just before its first event; an empty batch is a wrong version.
 *   * N equal to the current version writes the batch whatever ids it repeats; N above it is a wrong version.
 * - The committed-event-id cache. Within one process lifetime the
 *   model assumes an unbounded cache holding every event id the writer wrote (client events and the
 *   `$metadata` events the server writes itself; not tombstones), mapped to its LATEST write
 *   (DECISION: "maps eventId → (stream, eventNumber)": a second write of an id replaces the entry).
 *   The spec guarantees nothing across a restart ("After a failover, a restart or cache eviction, a
 *   retried Any-append is duplicated"); the implementation refills the cache on open with the log's newest
 *   ids, up to the cache's window, after a clean stop and a crash alike. So while the log holds fewer
 *   events than `idsKeptOverRestart` (well inside that window, leaving room for events the model does not
 *   track), a certainly cached id stays certain over a restart, unless a scavenge may have removed its
 *   event; every other cached id becomes "maybe": an Any/StreamExists append whose ids include maybe-ids
 *   may take any outcome that some choice of present/absent for those ids allows (`possibleDecisions`),
 *   and the observed outcome then pins the ids it determines. An id written more than once is cached as
 *   its newest copy; the refill keeps the newest copy it still finds, so when that copy may have been
 *   scavenged away an older one may answer instead (`olderCopies`). Explicit expected versions compare
 *   against the stored events, so they are exact at all times.
 * - Soft delete and recreation:
 *   * soft delete of a stream with no events and no metadata → WEV(-1); otherwise the expected version is
 *     checked against S with a fresh id and `{"$tb":9223372036854775807}` is appended to `$$S`, replacing
 *     earlier metadata.
 *   * an Ok append to a soft-deleted S appends the events (numbering continues), then a `$metadata`
 *     event to `$$S`: the old metadata JSON with `$tb` = L + 1 (L = last event number before the append).
 *     DECISION: this also happens for an empty Ok append (the expected-version check says Ok recreates, without an
 *     exception for empty batches).
 *   * a non-empty Ok append to `$$S` of a soft-deleted S whose LAST new event's bytes parse as a JSON
 *     object is followed by one more `$metadata` event (JSON-flagged): that object with `$tb` =
 *     last(S) + 1. DECISION: the spec's "non-JSON metadata … parse as empty metadata, so the old events
 *     become visible again" is read as bytes that do not parse (the upstream test writes zero bytes); for
 *     bytes flagged non-JSON that DO parse, the spec defers to upstream, whose SoftUndeleteRawMeta parses
 *     the raw bytes without looking at the flag, so they are rewritten too. An empty append to `$$S`
 *     recreates nothing (there is no new metadata).
 * - Metadata: the last event of `$$S`, used only when JSON-flagged and parsing as an object;
 *   a known numeric key ($maxCount, $tb, $maxAge, $cacheControl) holding a non-integer value makes the
 *   whole metadata empty ("malformed … give empty metadata"); `$maxCount` ≤ 0 and `$tb` < 0 are ignored;
 *   a value ≥ 2^63 − 1 is long.MaxValue. (Values between 2^53 and 2^63 − 1 cannot be held exactly by a
 *   JS number and are not generated.) An `$acl` that is not an object of the five role keys, each a string
 *   or an array of strings, makes the whole metadata empty too. Metastreams behave as `$maxCount = 1`.
 *   `$maxAge` is parsed here and applied by expiry.ts: it depends on when each event was created (known to
 *   the simulator only between its write's send and acknowledgement) and on the read's own time (any time
 *   between its send and its answer), so a read may have several right answers. Who may do what under
 *   `$acl` and `$settings` is the ACL actor's authorization model (acl/authorization.ts).
 * - Scavenging: an event may physically disappear only if it was hidden at a scavenge point the node wrote,
 *   under the stream's state at that point (`discardRule`, scavengePoints.ts); a tombstone never does.
 * - Reads (the read rules, and the HTTP feeds' backward-read mechanics). DECISION for the paging fields the
 *   spec does not spell out (they follow the reference server's IndexReader):
 *   forward  — end = from + count − 1; when end < min: empty, next = min, not end-of-stream; otherwise
 *              events max(from, min)…min(end, last), next = last returned + 1, or min(end + 1, last + 1)
 *              when none is returned; isEndOfStream = end ≥ last.
 *   backward — end = (from = −1 ? last : from), start = max(0, end − count + 1); when end < min: empty,
 *              next = −1, end-of-stream; otherwise the window is clipped to min (and is then
 *              end-of-stream), events min(end, last)…start newest first; end-of-stream also when
 *              start = 0; next = −1 at the end, else min(start − 1, last).
 *   single   — n = −1 means last; NotFound when n < min or n > last.
 *   A hard-deleted stream (and its metastream) reads StreamDeleted; a stream with no events or a
 *   soft-deleted one reads NoStream with the real last event number.
 * - `$all` is `log`: every event the model wrote, in write order, including `$metadata` events
 *   written by the server and tombstones. (The server's own `$epoch-information` events are outside the
 *   model; the tests skip them.)
 *
 * Values the model cannot predict (ids the server generates, log positions) are learned from the
 * implementation after the fact (`eventId`, `position` on ModelEvent) and checked for consistency.
 */
export * from "./model/names.js"
export * from "./model/commitRule.js"
export * from "./model/metadata.js"
import {
  ExpectedNoStream,
  LongMax,
  MetadataEventType,
  StreamDeletedEventType,
  isMetastream,
  metastreamOf,
  originalStreamOf
} from "./model/names.js"
import { decideCommit, type CachedEvent, type CommitView, type Decision } from "./model/commitRule.js"
import { parseJsonObject, parseModelMetadata, softDeleteBody, withTb, type ModelMetadata } from "./model/metadata.js"

// ---------------------------------------------------------------------------------------------------
// The store

export type EventOrigin = "client" | "softDelete" | "recreate" | "tombstone"

export interface ModelEvent {
  readonly stream: string
  readonly eventNumber: number
  /** Undefined for events whose id the server chooses, until learned from `$all`. */
  eventId: string | undefined
  readonly eventType: string
  readonly isJson: boolean
  readonly data: Uint8Array
  readonly metadata: Uint8Array
  readonly createdMicros: number
  readonly origin: EventOrigin
  /** Learned from the implementation. */
  position: number | undefined
}

export interface ProposedModelEvent {
  readonly eventId: string
  readonly eventType: string
  readonly isJson: boolean
  readonly data: Uint8Array
  readonly metadata: Uint8Array
}

/** "known": certainly in the writer's cache; "maybe": was, before a restart; "absent": certainly not. */
type CacheStatus = "known" | "maybe" | "absent"

interface CacheEntry extends CachedEvent {
  status: CacheStatus
  /**
   * After a restart, when this (newest) copy of the id may be gone: older copies, newest first, that the
   * refill may have found instead (down to one no scavenge may remove).
   */
  olderCopies?: ReadonlyArray<CachedEvent> | undefined
}

/** An observed answer to a write, in the model's terms. */
export type WriteOutcome =
  | { readonly _tag: "Appended"; readonly first: number; readonly last: number; readonly idempotent: boolean }
  | { readonly _tag: "WrongExpectedVersion"; readonly current: number }
  | { readonly _tag: "StreamDeleted" }

export const outcomeOf = (decision: Decision, batchSize: number): WriteOutcome => {
  switch (decision._tag) {
    case "Ok":
      return { _tag: "Appended", first: decision.current + 1, last: decision.current + batchSize, idempotent: false }
    case "Idempotent":
      return { _tag: "Appended", first: decision.first, last: decision.last, idempotent: true }
    case "WrongExpectedVersion":
      return { _tag: "WrongExpectedVersion", current: decision.current }
    case "StreamDeleted":
      return { _tag: "StreamDeleted" }
  }
}

export const sameOutcome = (a: WriteOutcome, b: WriteOutcome): boolean => {
  if (a._tag !== b._tag) return false
  if (a._tag === "Appended" && b._tag === "Appended")
    return a.first === b.first && a.last === b.last && a.idempotent === b.idempotent
  if (a._tag === "WrongExpectedVersion" && b._tag === "WrongExpectedVersion") return a.current === b.current
  return true
}

export type StreamReadModel =
  | {
      readonly _tag: "Success"
      readonly events: ReadonlyArray<ModelEvent>
      readonly nextEventNumber: number
      readonly lastEventNumber: number
      readonly isEndOfStream: boolean
    }
  | { readonly _tag: "NoStream"; readonly lastEventNumber: number }
  | { readonly _tag: "StreamDeleted" }

export type EventReadModel =
  | { readonly _tag: "Success"; readonly event: ModelEvent }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "NoStream" }
  | { readonly _tag: "StreamDeleted" }

export interface MetadataReadModel {
  readonly _tag: "Success" | "NoStream" | "StreamDeleted"
  readonly metadata: ModelMetadata
  readonly metaLastEventNumber: number
}

/** What a scavenge may have removed; `gone` hears of each such event a check found missing (coverage). */
export interface DiscardRule {
  readonly isDiscardable: (event: ModelEvent) => boolean
  readonly gone: (event: ModelEvent) => void
}

/** A possible decision for an append, with the cache contents (for maybe-ids) that lead to it. */
export interface PossibleDecision {
  readonly decision: Decision
  readonly present: ReadonlyMap<string, boolean>
}

export class StoreModel {
  /** @param idsKeptOverRestart see the module comment (0: every cached id is uncertain after a restart). */
  constructor(private readonly idsKeptOverRestart = 0) {}

  /** `$all`: every event written, in order. */
  readonly log: Array<ModelEvent> = []
  private readonly streams = new Map<string, Array<ModelEvent>>()
  /** Hard-deleted streams → their tombstone. */
  private readonly tombstones = new Map<string, ModelEvent>()
  private readonly cache = new Map<string, CacheEntry>()
  /** A scavenge may have started (the operator asked for one): `$all` may then lack discardable events. */
  private scavenging = false
  /**
   * What a scavenge may remove (scavengePoints.ts: hidden at a scavenge point the node wrote, under the
   * stream's state at that point). Nothing until one is known.
   */
  discardRule: DiscardRule = { isDiscardable: () => false, gone: () => {} }

  // ---- queries ----

  eventsOf(stream: string): ReadonlyArray<ModelEvent> {
    return this.streams.get(stream) ?? []
  }

  isHardDeleted(stream: string): boolean {
    return this.tombstones.has(isMetastream(stream) ? originalStreamOf(stream) : stream)
  }

  lastEventNumber(stream: string): number {
    if (this.isHardDeleted(stream)) return LongMax
    return this.eventsOf(stream).length - 1
  }

  metadataOf(stream: string): ModelMetadata {
    if (isMetastream(stream)) return { maxCount: 1 }
    const meta = this.eventsOf(metastreamOf(stream))
    const last = meta[meta.length - 1]
    return last === undefined ? {} : parseModelMetadata(last.isJson, last.data)
  }

  isSoftDeleted(stream: string): boolean {
    return !isMetastream(stream) && this.metadataOf(stream).truncateBefore === LongMax
  }

  /** The commit view with the cache as the model knows it; `present` decides maybe-ids. */
  view(present: (eventId: string) => boolean = () => false): CommitView {
    return {
      lastEventNumber: (s) => this.lastEventNumber(s),
      isSoftDeleted: (s) => this.isSoftDeleted(s),
      storedEventId: (s, n) => {
        const event = this.eventsOf(s)[n]
        // A stored event a scavenge may have removed compares as absent unless `present` says otherwise.
        return event === undefined || (this.isDiscardable(event) && !present(storedSlot(n))) ? undefined : event.eventId
      },
      cached: (id) => {
        const entry = this.cache.get(id)
        if (entry === undefined || entry.status === "absent") return undefined
        if (entry.status === "known" || present(id)) return entry
        return entry.olderCopies?.find((_, k) => present(olderCopy(id, k)))
      }
    }
  }

  /**
   * Every decision an append could get, one per assignment of present/absent to the batch's maybe-ids
   * that could matter (those cached for this stream). Exactly one when no such id exists.
   */
  possibleDecisions(stream: string, expected: number, eventIds: ReadonlyArray<string>): Array<PossibleDecision> {
    const maybes: Array<string> = []
    for (const id of new Set(eventIds)) {
      const entry = this.cache.get(id)
      if (entry === undefined || entry.status !== "maybe") continue
      if (entry.stream === stream) maybes.push(id)
      entry.olderCopies?.forEach((copy, k) => copy.stream === stream && maybes.push(olderCopy(id, k)))
    }
    // The idempotency check compares with the stored events, which a scavenge may have removed: both are possible.
    const cur = this.lastEventNumber(stream)
    if (expected >= ExpectedNoStream && expected < cur && cur !== LongMax) {
      eventIds.forEach((_, i) => {
        const event = this.eventsOf(stream)[expected + 1 + i]
        if (event !== undefined && this.isDiscardable(event)) maybes.push(storedSlot(event.eventNumber))
      })
    }
    const out: Array<PossibleDecision> = []
    for (let mask = 0; mask < 1 << maybes.length; mask++) {
      const present = new Map(maybes.map((id, i) => [id, (mask & (1 << i)) !== 0]))
      out.push({
        decision: decideCommit(
          this.view((id) => present.get(id) === true),
          stream,
          expected,
          eventIds
        ),
        present
      })
    }
    return out
  }

  /** Records what an observed outcome proved about maybe-ids (those every consistent assignment agrees on). */
  learnCache(consistent: ReadonlyArray<PossibleDecision>): void {
    if (consistent.length === 0) return
    for (const id of consistent[0]!.present.keys()) {
      if (id.startsWith(StoredSlotPrefix) || id.startsWith(OlderCopyPrefix)) continue
      const values = new Set(consistent.map((p) => p.present.get(id)))
      if (values.size !== 1) continue
      const entry = this.cache.get(id)!
      // Not the newest copy: an older one may still be the cached one.
      if (values.has(false) && entry.olderCopies !== undefined) continue
      entry.status = values.has(true) ? "known" : "absent"
      entry.olderCopies = undefined
    }
  }

  /** True once a scavenge may have run: reads of discardable events are then uncertain. */
  get mayHaveScavenged(): boolean {
    return this.scavenging
  }

  /** A scavenge may start now. */
  beginScavenging(): void {
    this.scavenging = true
  }

  /**
   * The event may be gone from the store (`discardRule`). A tombstone never is (it is always kept, and it
   * is not a prepare the executor removes).
   */
  isDiscardable(event: ModelEvent): boolean {
    return event.origin !== "tombstone" && this.discardRule.isDiscardable(event)
  }

  // ---- writes ----

  private push(event: ModelEvent): void {
    this.log.push(event)
    if (event.origin === "tombstone") {
      this.tombstones.set(event.stream, event)
      return
    }
    let events = this.streams.get(event.stream)
    if (events === undefined) this.streams.set(event.stream, (events = []))
    if (event.eventNumber !== events.length)
      throw new Error(`model: ${event.stream} would get #${event.eventNumber} after ${events.length} events`)
    events.push(event)
    if (event.eventId !== undefined)
      this.cache.set(event.eventId, { stream: event.stream, eventNumber: event.eventNumber, status: "known" })
  }

  /** Learns the id the server chose for one of its own events (and caches it, as the writer does). */
  learnEventId(event: ModelEvent, eventId: string): void {
    if (event.eventId !== undefined) throw new Error("model: event id already known")
    event.eventId = eventId
    if (event.origin !== "tombstone") {
      const latest = this.eventsOf(event.stream)[event.eventNumber]
      if (latest === event)
        this.cache.set(eventId, { stream: event.stream, eventNumber: event.eventNumber, status: "known" })
    }
  }

  private serverMetadataEvent(stream: string, origin: EventOrigin, data: Uint8Array, nowMicros: number): ModelEvent {
    const meta = metastreamOf(stream)
    return {
      stream: meta,
      eventNumber: this.eventsOf(meta).length,
      eventId: undefined,
      eventType: MetadataEventType,
      isJson: true,
      data,
      metadata: new Uint8Array(0),
      createdMicros: nowMicros,
      origin,
      position: undefined
    }
  }

  /**
   * Applies an append with the given decision (one of `possibleDecisions`). Returns the events written
   * (the client's, then a recreating `$metadata` event if any).
   */
  applyAppend(
    stream: string,
    decision: Decision,
    events: ReadonlyArray<ProposedModelEvent>,
    nowMicros: number
  ): Array<ModelEvent> {
    if (decision._tag !== "Ok") return []
    const written: Array<ModelEvent> = []
    const metaOfSoftDeleted = isMetastream(stream) && this.isSoftDeleted(originalStreamOf(stream))
    const rawMetaBefore = isMetastream(stream) ? undefined : this.eventsOf(metastreamOf(stream)).at(-1)
    events.forEach((e, i) => {
      const event: ModelEvent = {
        stream,
        eventNumber: decision.current + 1 + i,
        eventId: e.eventId,
        eventType: e.eventType,
        isJson: e.isJson,
        data: e.data,
        metadata: e.metadata,
        createdMicros: nowMicros,
        origin: "client",
        position: undefined
      }
      this.push(event)
      written.push(event)
    })
    // An Ok append to a soft-deleted stream recreates it from L + 1, keeping the other metadata.
    if (decision.softDeleted && rawMetaBefore !== undefined) {
      const object = parseJsonObject(rawMetaBefore.data)
      if (object !== undefined) {
        const event = this.serverMetadataEvent(stream, "recreate", withTb(object, decision.current + 1), nowMicros)
        this.push(event)
        written.push(event)
      }
    }
    // New JSON metadata for a soft-deleted stream recreates it past its last event.
    const lastNew = events[events.length - 1]
    if (metaOfSoftDeleted && lastNew !== undefined) {
      const object = parseJsonObject(lastNew.data)
      if (object !== undefined) {
        const original = originalStreamOf(stream)
        const event = this.serverMetadataEvent(
          original,
          "recreate",
          withTb(object, this.lastEventNumber(original) + 1),
          nowMicros
        )
        this.push(event)
        written.push(event)
      }
    }
    return written
  }

  /** Hard delete: the expected version is checked as for an append with a fresh id. */
  hardDelete(
    stream: string,
    expected: number,
    nowMicros: number
  ): { outcome: WriteOutcome; written: Array<ModelEvent> } {
    const decision = decideCommit(this.view(), stream, expected, [freshSentinel])
    if (decision._tag !== "Ok") return { outcome: failureOutcome(decision, this.lastEventNumber(stream)), written: [] }
    const tombstone: ModelEvent = {
      stream,
      eventNumber: LongMax,
      eventId: undefined,
      eventType: StreamDeletedEventType,
      isJson: false,
      data: new Uint8Array(0),
      metadata: new Uint8Array(0),
      createdMicros: nowMicros,
      origin: "tombstone",
      position: undefined
    }
    this.push(tombstone)
    return { outcome: { _tag: "Appended", first: LongMax, last: LongMax, idempotent: false }, written: [tombstone] }
  }

  /** Soft delete. */
  softDelete(
    stream: string,
    expected: number,
    nowMicros: number
  ): { outcome: WriteOutcome; written: Array<ModelEvent> } {
    if (this.lastEventNumber(stream) === -1 && this.lastEventNumber(metastreamOf(stream)) === -1) {
      return { outcome: { _tag: "WrongExpectedVersion", current: -1 }, written: [] }
    }
    const decision = decideCommit(this.view(), stream, expected, [freshSentinel])
    if (decision._tag !== "Ok") return { outcome: failureOutcome(decision, this.lastEventNumber(stream)), written: [] }
    const event = this.serverMetadataEvent(stream, "softDelete", softDeleteBody(), nowMicros)
    this.push(event)
    return {
      outcome: { _tag: "Appended", first: event.eventNumber, last: event.eventNumber, idempotent: false },
      written: [event]
    }
  }

  /**
   * Restart or crash: nothing acknowledged is lost. The store refilled its id cache from the log, so in a
   * small log an id certainly cached stays so, unless its event may have been scavenged away; every other
   * id is uncertain.
   */
  restart(): void {
    const refilledWhole = this.log.length <= this.idsKeptOverRestart
    const copies = new Map<string, Array<ModelEvent>>()
    for (const event of this.log) {
      if (event.eventId === undefined || event.origin === "tombstone") continue
      const same = copies.get(event.eventId)
      if (same === undefined) copies.set(event.eventId, [event])
      else same.push(event)
    }
    for (const [id, entry] of this.cache) {
      const event = this.eventsOf(entry.stream)[entry.eventNumber]
      const stillLogged = event !== undefined && event.eventId === id && !this.isDiscardable(event)
      if (!(refilledWhole && entry.status === "known" && stillLogged)) entry.status = "maybe"
      // The refill keeps the newest copy it finds: if the newest may be gone, an older one may answer.
      entry.olderCopies = stillLogged ? undefined : this.olderCopies(copies.get(id) ?? [], entry)
    }
  }

  /** The copies before `newest`, newest first, down to one no scavenge may remove; undefined if none. */
  private olderCopies(copies: ReadonlyArray<ModelEvent>, newest: CachedEvent): Array<CachedEvent> | undefined {
    const older: Array<CachedEvent> = []
    for (let i = copies.length - 1; i >= 0; i--) {
      const copy = copies[i]!
      if (copy.stream === newest.stream && copy.eventNumber === newest.eventNumber) continue
      older.push({ stream: copy.stream, eventNumber: copy.eventNumber })
      if (!this.isDiscardable(copy)) break
    }
    return older.length > 0 ? older : undefined
  }

  // ---- reads ----

  /** The first event number reads show by `$maxCount` and `$tb` (before `$maxAge`, see expiry.ts). */
  readBound(stream: string, last: number): number {
    const md = this.metadataOf(stream)
    let min = 0
    if (md.maxCount !== undefined) min = Math.max(min, last - md.maxCount + 1)
    if (md.truncateBefore !== undefined) min = Math.max(min, md.truncateBefore)
    return min
  }

  /** StreamDeleted / NoStream, or undefined when the stream can be read. */
  private unreadable(stream: string): StreamReadModel | undefined {
    const last = this.lastEventNumber(stream)
    if (last === LongMax) return { _tag: "StreamDeleted" }
    if (last === -1 || this.isSoftDeleted(stream)) return { _tag: "NoStream", lastEventNumber: last }
    return undefined
  }

  private range(stream: string, from: number, to: number): Array<ModelEvent> {
    const events = this.eventsOf(stream)
    const out: Array<ModelEvent> = []
    for (let n = Math.max(0, from); n <= Math.min(to, events.length - 1); n++) out.push(events[n]!)
    return out
  }

  readForward(stream: string, from: number, count: number): StreamReadModel {
    const bad = this.unreadable(stream)
    if (bad !== undefined) return bad
    const last = this.lastEventNumber(stream)
    const min = this.readBound(stream, last)
    const end = from + count - 1
    if (end < min)
      return { _tag: "Success", events: [], nextEventNumber: min, lastEventNumber: last, isEndOfStream: false }
    const events = this.range(stream, Math.max(from, min), end)
    const nextEventNumber = events.length > 0 ? events[events.length - 1]!.eventNumber + 1 : Math.min(end + 1, last + 1)
    return { _tag: "Success", events, nextEventNumber, lastEventNumber: last, isEndOfStream: end >= last }
  }

  readBackward(stream: string, from: number, count: number): StreamReadModel {
    const bad = this.unreadable(stream)
    if (bad !== undefined) return bad
    const last = this.lastEventNumber(stream)
    const min = this.readBound(stream, last)
    const end = from < 0 ? last : from
    let start = Math.max(0, end - count + 1)
    if (end < min)
      return { _tag: "Success", events: [], nextEventNumber: -1, lastEventNumber: last, isEndOfStream: true }
    let isEndOfStream = false
    if (start <= min) {
      isEndOfStream = true
      start = min
    }
    const events = this.range(stream, start, end).reverse()
    isEndOfStream = isEndOfStream || start === 0
    return {
      _tag: "Success",
      events,
      nextEventNumber: isEndOfStream ? -1 : Math.min(start - 1, last),
      lastEventNumber: last,
      isEndOfStream
    }
  }

  readEvent(stream: string, eventNumber: number): EventReadModel {
    const bad = this.unreadable(stream)
    if (bad !== undefined) return bad._tag === "StreamDeleted" ? { _tag: "StreamDeleted" } : { _tag: "NoStream" }
    const last = this.lastEventNumber(stream)
    const n = eventNumber === -1 ? last : eventNumber
    if (n < this.readBound(stream, last) || n > last) return { _tag: "NotFound" }
    return { _tag: "Success", event: this.eventsOf(stream)[n]! }
  }

  /** Metadata of S; Success when S or `$$S` has events (even with no metadata event). */
  readMetadata(stream: string): MetadataReadModel {
    const meta = metastreamOf(stream)
    if (this.isHardDeleted(stream)) return { _tag: "StreamDeleted", metadata: {}, metaLastEventNumber: -1 }
    const metaLast = this.eventsOf(meta).length - 1
    const tag = metaLast < 0 && this.lastEventNumber(stream) < 0 ? "NoStream" : "Success"
    return { _tag: tag, metadata: this.metadataOf(stream), metaLastEventNumber: metaLast }
  }
}

/** The key `possibleDecisions` gives "the stored event at n is still there" (never an event id). */
const StoredSlotPrefix = "@stored:"
const storedSlot = (eventNumber: number): string => `${StoredSlotPrefix}${eventNumber}`

/** The key `possibleDecisions` gives "the refill cached the id's k-th older copy" (never an event id). */
const OlderCopyPrefix = "@older:"
const olderCopy = (eventId: string, k: number): string => `${OlderCopyPrefix}${k}:${eventId}`

/** An id that is never stored and never cached: a delete's fresh event id. */
const freshSentinel = "fresh-event-id-of-a-delete"

const failureOutcome = (decision: Decision, current: number): WriteOutcome =>
  decision._tag === "StreamDeleted"
    ? { _tag: "StreamDeleted" }
    : { _tag: "WrongExpectedVersion", current: decision._tag === "WrongExpectedVersion" ? decision.current : current }
