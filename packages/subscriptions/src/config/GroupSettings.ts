/**
 * A persistent subscription group's settings, as users give them when they create or update a group and
 * as `/info` shows them. Names and defaults are the reference's HTTP ones (over HTTP a group starts at the
 * beginning of its stream unless told otherwise).
 */

export type ConsumerStrategy = "RoundRobin" | "DispatchToSingle" | "Pinned" | "PinnedByCorrelation"

export const ConsumerStrategies: ReadonlyArray<ConsumerStrategy> = [
  "RoundRobin",
  "DispatchToSingle",
  "Pinned",
  "PinnedByCorrelation"
]

export interface GroupSettings {
  readonly resolveLinkTos: boolean
  /** The event number to start at: 0 the beginning, -1 the stream's end when the group is created. */
  readonly startFrom: number
  /** As given (a string that overrides `startFrom`), for `/info`; undefined when not given. */
  readonly startPosition: string | undefined
  readonly messageTimeoutMilliseconds: number
  readonly extraStatistics: boolean
  readonly maxRetryCount: number
  readonly liveBufferSize: number
  readonly bufferSize: number
  readonly readBatchSize: number
  readonly preferRoundRobin: boolean
  readonly checkPointAfterMilliseconds: number
  readonly minCheckPointCount: number
  readonly maxCheckPointCount: number
  readonly maxSubscriberCount: number
  readonly namedConsumerStrategy: ConsumerStrategy
}

export const defaultGroupSettings: GroupSettings = {
  resolveLinkTos: false,
  startFrom: 0,
  startPosition: undefined,
  messageTimeoutMilliseconds: 10_000,
  extraStatistics: false,
  maxRetryCount: 10,
  liveBufferSize: 500,
  bufferSize: 500,
  readBatchSize: 20,
  preferRoundRobin: false,
  checkPointAfterMilliseconds: 1_000,
  minCheckPointCount: 10,
  maxCheckPointCount: 500,
  maxSubscriberCount: 10,
  namedConsumerStrategy: "RoundRobin"
}
