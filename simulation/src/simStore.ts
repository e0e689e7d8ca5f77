/**
 * What the simulated clients talk to: the operations they issue and the answers they can observe, the same
 * for both ways of reaching the node — over its HTTP app (`httpStore.ts`, the default) or straight to the
 * EventStore service (`directStore` below, `--direct`).
 *
 * An observation holds only what the transport shows. The store API gives a read's paging fields
 * (`nextEventNumber`, `lastEventNumber`, `isEndOfStream`); an Atom feed gives `headOfStream` and the
 * `next`/`previous` links instead, and a 201 gives only the first event number. The checks
 * (`readChecks.ts`) compare whatever is present with the model.
 *
 * Failures come in two kinds: `Indeterminate` (a disk error, writes refused, a timeout: the write may or
 * may not have happened, exactly as a crash leaves it) and `Unexpected` (an answer no correct node gives,
 * such as a 500 from a defect or a 401 for the admin: the run fails).
 */
import { Effect } from "effect"
import type {
  AppendError,
  EventStoreService,
  ProposedEvent,
  ResolvedEvent,
  StreamRead,
  EventRead
} from "@vellum/storage"

/** An event as a read shows it. */
export interface ObservedEvent {
  readonly eventNumber: number
  readonly eventId: string
  readonly eventType: string
  readonly data: Uint8Array
}

/** A write's answer; `last` and `idempotent` are undefined when the transport does not show them. */
export type ObservedWrite =
  | {
      readonly _tag: "Appended"
      readonly first: number
      readonly last: number | undefined
      readonly idempotent: boolean | undefined
    }
  | { readonly _tag: "WrongExpectedVersion"; readonly current: number }
  | { readonly _tag: "StreamDeleted" }

/** The paging facts of a stream page, as the store API or an Atom feed gives them. */
export type Paging =
  | {
      readonly via: "store"
      readonly nextEventNumber: number
      readonly lastEventNumber: number
      readonly isEndOfStream: boolean
    }
  /** `next` / `previous`: the event number the link starts from, undefined when the feed has no such link. */
  | {
      readonly via: "feed"
      readonly headOfStream: boolean
      readonly next: number | undefined
      readonly previous: number | undefined
    }

export type ObservedStreamRead =
  /** Events in the order the model lists them: ascending for forward reads, newest first for backward. */
  | { readonly _tag: "Success"; readonly events: ReadonlyArray<ObservedEvent>; readonly paging: Paging }
  /** `lastEventNumber` undefined: a 404, which does not say it. */
  | { readonly _tag: "NoStream"; readonly lastEventNumber: number | undefined }
  | { readonly _tag: "StreamDeleted" }

export type ObservedEventRead =
  | { readonly _tag: "Success"; readonly event: ObservedEvent }
  | { readonly _tag: "NotFound" | "NoStream" | "StreamDeleted" }
  /** A 404: no such event, or no such stream (HTTP does not tell them apart). */
  | { readonly _tag: "Missing" }

export class Indeterminate {
  readonly _tag = "Indeterminate"
  constructor(readonly reason: string) {}
}

export class Unexpected {
  readonly _tag = "Unexpected"
  constructor(readonly description: string) {}
}

/**
 * A 401 or 403 to a caller other than the admin (the ACL actor's identities, `acl/`): `challenge` is its
 * `WWW-Authenticate` header, which tells bad credentials from a refusal.
 */
export class Denied {
  readonly _tag = "Denied"
  constructor(
    readonly status: number,
    readonly challenge: string | undefined
  ) {}
  get reason(): string {
    return `${this.status} ${this.challenge ?? "(no challenge)"}`
  }
}

export type StoreFailure = Indeterminate | Unexpected | Denied

export interface ReadRequest {
  readonly stream: string
  readonly direction: "forward" | "backward"
  /** -1 (backward only): from the end. */
  readonly from: number
  readonly count: number
}

/** The operations of the simulated clients. */
export interface SimStore {
  readonly append: (
    stream: string,
    expected: number,
    events: ReadonlyArray<ProposedEvent>
  ) => Effect.Effect<ObservedWrite, StoreFailure>
  /** One `$metadata` event to `$$stream`, its bytes stored as given. */
  readonly setMetadata: (
    stream: string,
    expected: number,
    event: ProposedEvent
  ) => Effect.Effect<ObservedWrite, StoreFailure>
  readonly deleteStream: (stream: string, expected: number, hard: boolean) => Effect.Effect<ObservedWrite, StoreFailure>
  readonly readStream: (request: ReadRequest) => Effect.Effect<ObservedStreamRead, StoreFailure>
  /** `eventNumber` -1: the last event. */
  readonly readEvent: (stream: string, eventNumber: number) => Effect.Effect<ObservedEventRead, StoreFailure>
}

// ---------------------------------------------------------------------------------------------------
// Straight to the EventStore service

const eventOf = (resolved: ResolvedEvent): ObservedEvent => resolved.event!

/** A store read as an observation (also used by the restart checkers, which read the store directly). */
export const observeStoreRead = (read: StreamRead): ObservedStreamRead => {
  if (read._tag !== "Success") return read
  return {
    _tag: "Success",
    events: read.events.map(eventOf),
    paging: {
      via: "store",
      nextEventNumber: read.nextEventNumber,
      lastEventNumber: read.lastEventNumber,
      isEndOfStream: read.isEndOfStream
    }
  }
}

const observeEventRead = (read: EventRead): ObservedEventRead =>
  read._tag === "Success" ? { _tag: "Success", event: eventOf(read.event) } : { _tag: read._tag }

/** Rule failures are answers; every other error leaves the operation indeterminate (as before HTTP). */
const asObservedWrite = (
  effect: Effect.Effect<ObservedWrite, AppendError>
): Effect.Effect<ObservedWrite, StoreFailure> =>
  Effect.catchAll(effect, (e): Effect.Effect<ObservedWrite, StoreFailure> => {
    switch (e._tag) {
      case "WrongExpectedVersion":
        return Effect.succeed({ _tag: "WrongExpectedVersion", current: e.currentVersion })
      case "StreamDeleted":
        return Effect.succeed({ _tag: "StreamDeleted" })
      default:
        return Effect.fail(new Indeterminate(e._tag))
    }
  })

const readFailure = (e: { readonly _tag: string }): StoreFailure => new Indeterminate(e._tag)

const appended = (r: {
  readonly firstEventNumber: number
  readonly lastEventNumber: number
  readonly idempotent: boolean
}): ObservedWrite => ({
  _tag: "Appended",
  first: r.firstEventNumber,
  last: r.lastEventNumber,
  idempotent: r.idempotent
})

/** Deletes have no event numbers to report; every transport reports a success the same way. */
export const deleted: ObservedWrite = { _tag: "Appended", first: 0, last: 0, idempotent: undefined }

export const directStore = (store: EventStoreService): SimStore => ({
  append: (stream, expected, events) => asObservedWrite(Effect.map(store.append(stream, expected, events), appended)),
  setMetadata: (stream, expected, event) =>
    asObservedWrite(
      Effect.map(
        store.setStreamMetadata(stream, expected, event.data, { eventId: event.eventId, isJson: event.isJson }),
        appended
      )
    ),
  deleteStream: (stream, expected, hard) =>
    asObservedWrite(Effect.as(store.deleteStream(stream, expected, hard), deleted)),
  readStream: ({ stream, direction, from, count }) =>
    Effect.mapBoth(
      direction === "forward"
        ? store.readStreamForward(stream, from, count)
        : store.readStreamBackward(stream, from, count),
      {
        onFailure: readFailure,
        onSuccess: observeStoreRead
      }
    ),
  readEvent: (stream, eventNumber) =>
    Effect.mapBoth(store.readEvent(stream, eventNumber), { onFailure: readFailure, onSuccess: observeEventRead })
})
