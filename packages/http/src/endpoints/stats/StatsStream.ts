/**
 * `WriteStatsToDb`: every `StatsPeriodSec` the node appends its flat stats document to `$stats-<ip>:<port>`
 * as a `$statsCollected` JSON event, as the reference's monitoring service does. The stream is given a
 * `$maxAge` of ten days first (once: expected version "no stream", so a restart finds it set), so old
 * samples expire. The period is an Effect sleep: test clocks and the simulator drive it.
 *
 * A failed write (disk full, a timeout) is logged and the next period tries again; it never stops the node.
 */
import { Duration, Effect, Layer } from "effect"
import { EventStore, ExpectedVersion, randomUuid } from "@vellum/storage"
import { NodeStats } from "./NodeStats.js"
import type { FlatStats } from "./StatsTree.js"

export const STATS_EVENT_TYPE = "$statsCollected"
/** Ten days, the reference's `$maxAge` for stats streams. */
export const STATS_STREAM_MAX_AGE_SECONDS = 10 * 24 * 60 * 60

export interface StatsStreamSettings {
  /** The node's HTTP endpoint as `ip:port`: the stream is `$stats-<endpoint>`. */
  readonly endpoint: string
  readonly periodSeconds: number
}

export const statsStreamOf = (endpoint: string): string => `$stats-${endpoint}`

/** The stats as one flat JSON object (display hints dropped), as the reference stores them. */
export const statsEventData = (stats: FlatStats): string =>
  JSON.stringify(
    Object.fromEntries(
      stats.map(([key, value]) => [key, value !== null && typeof value === "object" ? value.value : value])
    )
  )

const encoder = new TextEncoder()

const jsonEvent = (eventType: string, data: string) =>
  Effect.map(randomUuid, (eventId) => ({
    eventId,
    eventType,
    isJson: true,
    data: encoder.encode(data),
    metadata: new Uint8Array(0)
  }))

/** Sets the stream's `$maxAge`, unless a metadata event is there already; true once it is set. */
const ensureMetadata = (stream: string): Effect.Effect<boolean, never, EventStore> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const eventId = yield* randomUuid
    const metadata = encoder.encode(JSON.stringify({ $maxAge: STATS_STREAM_MAX_AGE_SECONDS }))
    return yield* store.setStreamMetadata(stream, ExpectedVersion.NoStream, metadata, { eventId, isJson: true }).pipe(
      Effect.as(true),
      Effect.catchTag("WrongExpectedVersion", () => Effect.succeed(true)),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning(`cannot set the metadata of ${stream}: ${error.message}`), false)
      )
    )
  })

const writeSample = (stream: string): Effect.Effect<void, never, EventStore | NodeStats> =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const stats = yield* Effect.flatMap(NodeStats, (s) => s.current)
    const event = yield* jsonEvent(STATS_EVENT_TYPE, statsEventData(stats))
    yield* store
      .append(stream, ExpectedVersion.Any, [event])
      .pipe(Effect.catchAll((error) => Effect.logWarning(`cannot write stats to ${stream}: ${error.message}`)))
  })

/**
 * The writer loop: the stream's metadata first, then every period a sample (the metadata is tried again
 * first while it could not be set); until interrupted.
 */
export const writeStatsForever = (settings: StatsStreamSettings): Effect.Effect<never, never, EventStore | NodeStats> =>
  Effect.gen(function* () {
    const stream = statsStreamOf(settings.endpoint)
    let metadataSet = yield* ensureMetadata(stream)
    while (true) {
      yield* Effect.sleep(Duration.seconds(settings.periodSeconds))
      if (!metadataSet) metadataSet = yield* ensureMetadata(stream)
      if (metadataSet) yield* writeSample(stream)
    }
  })

/** Runs the writer for the layer's lifetime. */
export const layer = (settings: StatsStreamSettings): Layer.Layer<never, never, EventStore | NodeStats> =>
  Layer.scopedDiscard(Effect.forkScoped(writeStatsForever(settings)))
