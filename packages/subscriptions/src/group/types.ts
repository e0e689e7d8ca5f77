import type { ReadFrom } from "./positions.js"

/**
 * What the machine needs of an event read from the group's source. The driver keeps whatever else it needs
 * (the record, its link) in `E`, which the machine hands back untouched.
 */
export interface GroupEvent<P> {
  /** The id acks and nacks name: the original event's id, which is the link's own id for a resolved link. */
  readonly id: string
  readonly position: P
  /** The stream the Pinned strategy pins by: the event's own stream (a link's target stream). */
  readonly pinStream: string
  /** The `$correlationId` of the event's metadata, when it has one (PinnedByCorrelation pins by it). */
  readonly correlationId?: string | undefined
}

export type NackAction = "Park" | "Retry" | "Skip" | "Stop"

/** A message handed to a consumer, with how many times it was handed out before. */
export interface Delivery<E> {
  readonly event: E
  readonly retryCount: number
}

/** What the machine asks its driver to do; the driver reports back through the machine's inputs. */
export type GroupEffect<P, E> =
  /** Read up to `count` events of the source from `from`; answer with `readCompleted`. */
  | { readonly _tag: "Read"; readonly from: ReadFrom<P>; readonly count: number }
  /** Everything up to `position` is acked, skipped or parked: record it durably. */
  | { readonly _tag: "WriteCheckpoint"; readonly position: P }
  /** Write a link to `event` in the group's parked stream; answer with `parked` once it is durable. */
  | { readonly _tag: "Park"; readonly event: E; readonly reason: string }
  /** Hand these messages to a waiting consumer (a long-poll request or a connection). */
  | { readonly _tag: "Deliver"; readonly consumer: string; readonly messages: ReadonlyArray<Delivery<E>> }
  /** A consumer nacked with Stop: the driver decides how to stop it (its messages stay in flight). */
  | { readonly _tag: "StopRequested"; readonly ids: ReadonlyArray<string> }

/** The reference's status flags, in the order its `/info` prints them when they combine. */
export type GroupStatusFlag = "Behind" | "OutstandingPageRequest" | "ReplayingParkedMessages" | "Live"

export interface ConsumerStats {
  readonly id: string
  readonly inFlight: number
  readonly availableSlots: number
  readonly totalItemsProcessed: number
}

/** The figures `/info` shows for one group. */
export interface GroupStats<P> {
  readonly status: ReadonlyArray<GroupStatusFlag>
  readonly readBufferCount: number
  readonly liveBufferCount: number
  readonly retryBufferCount: number
  /** Messages handed out and not yet acked, nacked or timed out, plus those waiting for their park write. */
  readonly outstandingMessagesCount: number
  readonly totalItemsProcessed: number
  /** The furthest position handed out (not counting replayed parked messages). */
  readonly lastProcessedPosition: P | undefined
  /** The furthest position seen in the source, read or appended. */
  readonly lastKnownPosition: P | undefined
  readonly lastCheckpoint: P | undefined
  /** Every event up to here is acked, skipped or parked (a driver stopping the group may checkpoint it). */
  readonly finishedThrough: P | undefined
  readonly parkedSinceStart: number
  /** When a message was last handed out, and last acked (ms, as the driver passed them): a stalled group shows. */
  readonly lastDeliveryAt: number | undefined
  readonly lastAckAt: number | undefined
  readonly connections: ReadonlyArray<ConsumerStats>
}

/** The figures of a group that has taken nothing yet (one still loading shows these). */
export const emptyGroupStats: GroupStats<never> = {
  status: [],
  readBufferCount: 0,
  liveBufferCount: 0,
  retryBufferCount: 0,
  outstandingMessagesCount: 0,
  totalItemsProcessed: 0,
  lastProcessedPosition: undefined,
  lastKnownPosition: undefined,
  lastCheckpoint: undefined,
  finishedThrough: undefined,
  parkedSinceStart: 0,
  lastDeliveryAt: undefined,
  lastAckAt: undefined,
  connections: []
}
