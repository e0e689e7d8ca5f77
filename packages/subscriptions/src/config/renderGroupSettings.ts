/**
 * The `config` object of a group's `/info` document: every setting, in the order (and with the spelling, e.g.
 * `resolveLinktos`) the reference writes them. As the reference does, `startPosition` is the start's text
 * (whatever the body said) and `preferRoundRobin` says whether the strategy is round robin.
 */
import type { GroupSettings } from "./GroupSettings.js"

/** The settings under their output names: `resolveLinktos`, and `startPosition` always as text. */
export type RenderedGroupSettings = { readonly resolveLinktos: boolean; readonly startPosition: string } & Omit<
  GroupSettings,
  "resolveLinkTos" | "startPosition"
>

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
