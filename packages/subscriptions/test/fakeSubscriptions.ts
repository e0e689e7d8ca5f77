/**
 * A test double of the Subscriptions service for the HTTP routes' tests: groups held in a map, messages a
 * test queues for a group handed out in order, every ack, nack, replay and restart recorded, and the answers
 * the reference's service gives (`Group 'g' already exists.`, `Not found.`, …). `ready` false makes every
 * call answer NotReady, as on a node that does not lead.
 */
import { Effect } from "effect"
import { EventFlags, type EventRecord } from "@vellum/storage"
import type { GroupSettings } from "../src/config/GroupSettings.js"
import { emptyGroupStats, type NackAction } from "../src/group/types.js"
import type {
  GroupInfo,
  GroupSpec,
  ManageResult,
  ReadMessagesOptions,
  SubscribedMessage,
  SubscriptionsService
} from "../src/service/Subscriptions.js"

export interface FakeGroup {
  spec: GroupSpec
  readonly pending: Array<SubscribedMessage>
  info: Partial<Omit<GroupInfo, "stream" | "group" | "settings" | "filter">>
}

export interface FakeSubscriptions {
  readonly service: SubscriptionsService
  ready: boolean
  readonly groups: Map<string, FakeGroup>
  readonly calls: Array<{
    readonly op: string
    readonly stream?: string
    readonly group?: string
    readonly ids?: ReadonlyArray<string>
    readonly action?: NackAction
    readonly stopAt?: number | undefined
    readonly options?: ReadMessagesOptions
    readonly by?: string | undefined
  }>
  /** The answer of the next restart (default Success). */
  restartAnswer: ManageResult
}

const key = (stream: string, group: string) => `${stream}::${group}`

export const jsonEvent = (
  stream: string,
  eventNumber: number,
  id: string,
  data: unknown = { n: eventNumber }
): EventRecord => ({
  kind: 0 as EventRecord["kind"],
  logPosition: 1000 + eventNumber,
  flags: EventFlags.Json,
  eventNumber,
  // 2024-01-01T00:00:0{n}Z
  createdMicros: (Date.UTC(2024, 0, 1) + eventNumber * 1000) * 1000,
  eventId: id,
  stream,
  eventType: "T",
  data: Buffer.from(JSON.stringify(data)),
  metadata: Buffer.from("")
})

/** A message of event `n` of `stream` with the given id, handed out `retryCount` times before. */
export const message = (stream: string, n: number, id: string, retryCount = 0): SubscribedMessage => {
  const record = jsonEvent(stream, n, id)
  return {
    event: { id, position: n, pinStream: stream, resolved: { event: record, link: undefined } },
    retryCount
  }
}

const notReady: ManageResult = { _tag: "NotReady", reason: "Not ready." }

export const makeFakeSubscriptions = (): FakeSubscriptions => {
  const groups = new Map<string, FakeGroup>()
  const calls: FakeSubscriptions["calls"] = []
  const fake: FakeSubscriptions = {
    ready: true,
    groups,
    calls,
    restartAnswer: { _tag: "Success" },
    service: undefined as unknown as SubscriptionsService
  }
  const manage = (f: () => ManageResult) => Effect.sync(() => (fake.ready ? f() : notReady))
  const service: SubscriptionsService = {
    isReady: () => fake.ready,
    create: (spec, by) =>
      manage(() => {
        calls.push({ op: "create", stream: spec.stream, group: spec.group, by })
        if (groups.has(key(spec.stream, spec.group)))
          return { _tag: "AlreadyExists", reason: `Group '${spec.group}' already exists.` }
        groups.set(key(spec.stream, spec.group), { spec, pending: [], info: {} })
        return { _tag: "Success" }
      }),
    update: (spec, by) =>
      manage(() => {
        calls.push({ op: "update", stream: spec.stream, group: spec.group, by })
        const group = groups.get(key(spec.stream, spec.group))
        if (group === undefined) return { _tag: "DoesNotExist", reason: `Group '${spec.group}' does not exist.` }
        group.spec = spec
        return { _tag: "Success" }
      }),
    delete: (stream, group, by) =>
      manage(() => {
        calls.push({ op: "delete", stream, group, by })
        return groups.delete(key(stream, group))
          ? { _tag: "Success" }
          : { _tag: "DoesNotExist", reason: `Group '${group}' does not exist.` }
      }),
    readMessages: (stream, group, options) =>
      Effect.sync(() => {
        calls.push({ op: "read", stream, group, options })
        if (!fake.ready) return notReady
        const found = groups.get(key(stream, group))
        if (found === undefined) return { _tag: "DoesNotExist", reason: "Not found." }
        return { _tag: "Messages", messages: found.pending.splice(0, options.count) }
      }),
    ack: (stream, group, ids) => Effect.sync(() => void calls.push({ op: "ack", stream, group, ids })),
    nack: (stream, group, ids, action) =>
      Effect.sync(() => void calls.push({ op: "nack", stream, group, ids, action })),
    replayParked: (stream, group, stopAt) =>
      manage(() => {
        calls.push({ op: "replayParked", stream, group, stopAt })
        return groups.has(key(stream, group))
          ? { _tag: "Success" }
          : { _tag: "DoesNotExist", reason: `Group '${group}' does not exist.` }
      }),
    restart: () =>
      Effect.sync(() => {
        calls.push({ op: "restart" })
        return fake.restartAnswer
      }),
    list: () => Effect.sync(() => [...groups.values()].map(infoOf)),
    info: (stream, group) =>
      Effect.sync(() => {
        const found = groups.get(key(stream, group))
        return found === undefined ? undefined : infoOf(found)
      })
  }
  return Object.assign(fake, { service })
}

export const infoOf = (group: FakeGroup): GroupInfo => ({
  stream: group.spec.stream,
  group: group.spec.group,
  settings: group.spec.settings as GroupSettings,
  filter: group.spec.filter,
  status: ["Live"],
  stats: { ...emptyGroupStats, status: ["Live"] },
  parkedMessageCount: 0,
  averageItemsPerSecond: 0,
  countSinceLastMeasurement: 0,
  lag: { events: 0, millis: 0 },
  ...group.info
})
