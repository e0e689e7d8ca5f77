/**
 * The Scavenger service as a layer over the store: opens the scavenge state in `<db>/scavenging`, repairs
 * the history of runs a restart cut short (in the background: a node does not wait on it to serve), and
 * closes the state with the node.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { join } from "@vellum/platform"
import { EventStore } from "@vellum/storage"
import * as History from "./history/index.js"
import { describeError } from "./phases/errors.js"
import { Scavenger } from "./Scavenger.js"
import { makeScavenger, type ScavengerSettings } from "./makeScavenger.js"
import { openStateSession } from "./state/index.js"

export interface ScavengerLayerSettings extends ScavengerSettings {
  /** The store's directory; the state lives in its `scavenging` folder. */
  readonly dbDir: string
  /** ScavengeBackendPageSize, in bytes. */
  readonly statePageBytes: number
  /** ScavengeBackendCacheSize, in bytes. */
  readonly stateCacheBytes: number
}

export const STATE_FOLDER = "scavenging"

export const layer = (settings: ScavengerLayerSettings) =>
  Layer.scoped(
    Scavenger,
    Effect.gen(function* () {
      const store = yield* EventStore
      const session = yield* Effect.acquireRelease(
        openStateSession(join(settings.dbDir, STATE_FOLDER), {
          pageSize: settings.statePageBytes,
          cacheBytes: settings.stateCacheBytes
        }),
        (s) => Effect.ignore(s.close)
      )
      const service = yield* makeScavenger(settings, session)
      const repair = Effect.gen(function* () {
        yield* History.ensureIndexStreamMetadata(settings.historyMaxAgeDays)
        const closed = yield* History.completeInterruptedRuns({
          nodeEndpoint: settings.nodeEndpoint,
          historyMaxAgeDays: settings.historyMaxAgeDays
        })
        if (closed.length > 0)
          yield* Effect.logInfo(`Marked ${closed.length} scavenge(s) interrupted by a restart: ${closed.join(", ")}`)
      })
      // In a cluster only the leader writes: a member retries until it leads (or the history is replicated
      // to it repaired), quietly; a single node tries once.
      const repairing = Effect.provideService(repair, EventStore, store)
      yield* Effect.forkScoped(
        store.replica === undefined
          ? Effect.catchAll(repairing, (e) => Effect.logWarning(`scavenge history repair failed: ${describeError(e)}`))
          : Effect.retry(repairing, Schedule.spaced(Duration.seconds(5))).pipe(Effect.ignore)
      )
      return service
    })
  )
