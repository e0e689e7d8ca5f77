/**
 * The `config` object of a group's `/info` document: every setting, in the order (and with the spelling, e.g.
 * `resolveLinktos`) the reference writes them. As the reference does, `startPosition` is the start's text
 * (whatever the body said) and `preferRoundRobin` says whether the strategy is round robin.
 */
import type { ConsumerStrategy, GroupSettings } from "./GroupSettings.js"

export interface RenderedGroupSettings {
  readonly resolveLinktos: boolean
  readonly startFrom: number
  readonly startPosition: string
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

/** The object, its keys in output order (JavaScript keeps string keys in insertion order). */
export const renderGroupSettings = (settings: GroupSettings): RenderedGroupSettings => ({
  resolveLinktos: settings.resolveLinkTos,
  startFrom: settings.startFrom,
  startPosition: String(settings.startFrom),
  messageTimeoutMilliseconds: settings.messageTimeoutMilliseconds,
  extraStatistics: settings.extraStatistics,
  maxRetryCount: settings.maxRetryCount,
  liveBufferSize: settings.liveBufferSize,
  bufferSize: settings.bufferSize,
  readBatchSize: settings.readBatchSize,
  preferRoundRobin: settings.namedConsumerStrategy === "RoundRobin",
  checkPointAfterMilliseconds: settings.checkPointAfterMilliseconds,
  minCheckPointCount: settings.minCheckPointCount,
  maxCheckPointCount: settings.maxCheckPointCount,
  maxSubscriberCount: settings.maxSubscriberCount,
  namedConsumerStrategy: settings.namedConsumerStrategy
})
