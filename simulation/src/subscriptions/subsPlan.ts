/**
 * What a subscriptions seed runs (drawn from its own fork, so the seed's other choices stay what they were):
 * the streams the workload appends to, and the groups over them, each with settings chosen to make the
 * rules bite — small buffers and read batches (the group falls behind and reads again), short message
 * timeouts (messages time out while consumers think), maxRetryCount 0–3 (parks by retries come soon),
 * checkpoint counts 1–20, every consumer strategy; and one group on `$all` with a stream-prefix filter.
 */
import type { Prng } from "@vellum/platform"
import {
  ConsumerStrategies,
  defaultGroupSettings,
  type EventFilterRecord,
  type GroupSettings
} from "@vellum/subscriptions"

/** The workload's streams all start with this: the `$all` group's filter. */
export const SubsStreamPrefix = "sub-"

export interface PlannedGroup {
  readonly stream: string
  readonly group: string
  readonly filter: EventFilterRecord | undefined
  /** The settings it is created with; updates draw new ones (`drawSettings`). */
  readonly settings: GroupSettings
  /** Consumers pulling from it at once. */
  readonly consumers: number
}

export interface SubsPlan {
  readonly streams: ReadonlyArray<string>
  readonly groups: ReadonlyArray<PlannedGroup>
}

export const drawSettings = (prng: Prng): GroupSettings => {
  const bufferSize = prng.pick([3, 5, 10, 30])
  return {
    ...defaultGroupSettings,
    messageTimeoutMilliseconds: prng.pick([500, 1_000, 2_000, 5_000]),
    maxRetryCount: prng.int(0, 3),
    bufferSize,
    liveBufferSize: prng.pick([1, 3, 10, 100]),
    readBatchSize: prng.int(1, Math.min(bufferSize - 1, 10)),
    checkPointAfterMilliseconds: prng.pick([0, 200, 1_000, 5_000]),
    minCheckPointCount: prng.int(1, 5),
    maxCheckPointCount: prng.int(1, 20),
    maxSubscriberCount: 0,
    namedConsumerStrategy: prng.pick(ConsumerStrategies)
  }
}

export const streamPrefixFilter: EventFilterRecord = {
  context: "StreamId",
  type: "prefix",
  data: SubsStreamPrefix,
  isAllStream: true
}

export const drawPlan = (prng: Prng): SubsPlan => {
  const streams = Array.from({ length: prng.int(1, 3) }, (_, i) => `${SubsStreamPrefix}${i}`)
  const groups: Array<PlannedGroup> = []
  const groupCount = prng.int(1, 3)
  for (let i = 0; i < groupCount; i++)
    groups.push({
      stream: prng.pick(streams),
      group: `g${i}`,
      filter: undefined,
      settings: drawSettings(prng),
      consumers: prng.int(1, 3)
    })
  groups.push({
    stream: "$all",
    group: "gall",
    filter: streamPrefixFilter,
    settings: drawSettings(prng),
    consumers: prng.int(1, 2)
  })
  return { streams, groups }
}
