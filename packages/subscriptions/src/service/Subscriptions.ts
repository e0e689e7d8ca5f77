/**
 * The persistent subscriptions service: every group of the node, run on the leader. The HTTP routes (and the
 * simulator's consumers, through them) use only this interface; `SubscriptionsLayer.ts` builds it.
 *
 * A group is named by its source (a stream, or `$all`) and its name. Management answers with the reference's
 * completion results; consumers pull messages, ack and nack them by id. Everything here is the leader's: on a
 * node that does not lead, groups are not running and every call answers `NotReady` (the HTTP layer sends
 * such requests to the leader first, as the reference does).
 */
import { Context, type Effect } from "effect"
import type { ResolvedEvent } from "@vellum/storage"
import type { GroupSettings } from "../config/GroupSettings.js"
import type { EventFilterRecord } from "../persisted/groupDefinitions.js"
import type { Delivery, GroupEvent, GroupStats, NackAction } from "../group/types.js"

/**
 * A message a group hands out. The position is the event number in the group's stream (for a group that
 * resolves links, the link's number), or the log position for a group on `$all`.
 */
export interface SubscribedEvent extends GroupEvent<number> {
  /** As a feed renders it: the event, and the link it was reached through when the group resolves links. */
  readonly resolved: ResolvedEvent
}

export type SubscribedMessage = Delivery<SubscribedEvent>

/** What a group is made of, as a create or update gives it. */
export interface GroupSpec {
  readonly stream: string
  readonly group: string
  readonly settings: GroupSettings
  /** A group on `$all` only: which events it delivers (undefined: all of them). */
  readonly filter?: EventFilterRecord | undefined
}

/** The reference's completion results, with its reasons (`Group 'g' already exists.`, …). */
export type ManageResult =
  | { readonly _tag: "Success" }
  | { readonly _tag: "AlreadyExists"; readonly reason: string }
  | { readonly _tag: "DoesNotExist"; readonly reason: string }
  | { readonly _tag: "Fail"; readonly reason: string }
  /** Not the leader, or the groups are still loading. */
  | { readonly _tag: "NotReady"; readonly reason: string }

export type ReadMessagesResult =
  /** Newest last, in the order they were handed out; empty when nothing came within the wait. */
  | { readonly _tag: "Messages"; readonly messages: ReadonlyArray<SubscribedMessage> }
  | { readonly _tag: "DoesNotExist"; readonly reason: string }
  | { readonly _tag: "NotReady"; readonly reason: string }

export interface ReadMessagesOptions {
  /** 1..100 (the HTTP layer checks). */
  readonly count: number
  /** Wait up to this long for a first message when none is available now (0: answer at once). */
  readonly waitMillis: number
}

/** A group's health and figures, for `/info`, the lists and `/metrics`. */
export interface GroupInfo {
  readonly stream: string
  readonly group: string
  readonly settings: GroupSettings
  readonly filter: EventFilterRecord | undefined
  /** NotReady while the group loads its checkpoint; otherwise the machine's flags. */
  readonly status: ReadonlyArray<string>
  readonly stats: GroupStats<number>
  /** Messages in the parked stream now (its last number + 1 less what replays truncated). */
  readonly parkedMessageCount: number
  /** Messages handed out per second, over the last measurement period. */
  readonly averageItemsPerSecond: number
  /** Messages handed out since the last measurement. */
  readonly countSinceLastMeasurement: number
  /**
   * How far the group is behind its source's head: events not yet handed out (for `$all`, in log bytes), and
   * for how long (ms): since every event it knew of was last finished (0 when caught up).
   */
  readonly lag: { readonly events: number; readonly millis: number }
}

export interface SubscriptionsService {
  /** False on a node that does not lead (or before the groups loaded): every call answers NotReady. */
  readonly isReady: () => boolean
  readonly create: (spec: GroupSpec, by: string | undefined) => Effect.Effect<ManageResult>
  /** Replaces the settings; the group restarts from its checkpoint and its waiting readers are answered empty. */
  readonly update: (spec: GroupSpec, by: string | undefined) => Effect.Effect<ManageResult>
  /** Removes the group, its checkpoint and its parked messages. */
  readonly delete: (stream: string, group: string, by: string | undefined) => Effect.Effect<ManageResult>
  readonly readMessages: (
    stream: string,
    group: string,
    options: ReadMessagesOptions
  ) => Effect.Effect<ReadMessagesResult>
  /** Fire and forget, as the reference: unknown groups and ids are ignored. */
  readonly ack: (stream: string, group: string, ids: ReadonlyArray<string>) => Effect.Effect<void>
  readonly nack: (stream: string, group: string, ids: ReadonlyArray<string>, action: NackAction) => Effect.Effect<void>
  /** Hands the parked messages out again (those before parked-stream number `stopAt`, when given). */
  readonly replayParked: (stream: string, group: string, stopAt: number | undefined) => Effect.Effect<ManageResult>
  /** Stops every group and starts them again from their checkpoints. */
  readonly restart: () => Effect.Effect<ManageResult>
  /** Every group, in creation order per stream, streams in the order their first group was created. */
  readonly list: () => Effect.Effect<ReadonlyArray<GroupInfo>>
  readonly info: (stream: string, group: string) => Effect.Effect<GroupInfo | undefined>
}

export class Subscriptions extends Context.Tag("@vellum/subscriptions/Subscriptions")<
  Subscriptions,
  SubscriptionsService
>() {}
