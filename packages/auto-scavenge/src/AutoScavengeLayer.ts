/**
 * The layers of auto-scavenge on a node:
 * - `layer`: the driver (leader only, by its own account), the commands other members pass to the leader,
 *   and the `AutoScavenge` service the routes call;
 * - `layerDisabled`: the service when auto-scavenge is off (its routes are then not served at all);
 * - `layerNodeScavengeServer`: every cluster member answers the leader's node scavenge calls, whether or not
 *   its own auto-scavenge is on, as every member serves `POST /admin/scavenge`.
 */
import { Effect, Layer } from "effect"
import { ClusterStatus, Protocol } from "@vellum/cluster"
import { gossipInputNow, NodeInfo, selfMember } from "@vellum/http"
import { Scavenger } from "@vellum/scavenge"
import { EventStore } from "@vellum/storage"
import { AutoScavenge, noAutoScavengeFigures } from "./AutoScavenge.js"
import { nextOccurrence } from "./cron/Cron.js"
import { makeDriver } from "./service/Driver.js"
import { commandHandler, forwardToLeader } from "./service/forward.js"
import { decodeRequest } from "./service/messages.js"
import { makeNodeScavengeCalls, nodeScavengeHandler } from "./service/nodeCalls.js"

export interface AutoScavengeSettings {
  /** How often the driver looks at gossip: the gossip interval in a cluster. */
  readonly tickMillis: number
}

/** A single node has no gossip to clock it: it ticks itself this often. */
export const SingleNodeTickMillis = 5_000

/** This node's own gossip record, read afresh each time it runs. */
const selfRecordNow = Effect.map(Effect.context<EventStore | ClusterStatus | NodeInfo>(), (context) =>
  Effect.provide(Effect.map(gossipInputNow, selfMember), context)
)

export const layer = (
  settings: AutoScavengeSettings
): Layer.Layer<AutoScavenge, never, EventStore | ClusterStatus | Scavenger | NodeInfo> =>
  Layer.scoped(
    AutoScavenge,
    Effect.gen(function* () {
      const store = yield* EventStore
      const cluster = yield* ClusterStatus
      const scavenger = yield* Scavenger
      const selfRecord = yield* selfRecordNow
      const internal = cluster.internal
      const driver = yield* makeDriver(
        { tickMillis: internal === undefined ? SingleNodeTickMillis : settings.tickMillis, next: nextOccurrence },
        {
          store,
          cluster,
          scavenger,
          calls: makeNodeScavengeCalls(scavenger, internal?.protocol(Protocol.NodeScavenge)),
          selfRecord
        }
      )
      if (internal === undefined) return { execute: driver.executeHere, figures: driver.figures }
      const commands = internal.protocol(Protocol.AutoScavenge)
      yield* Effect.orDie(
        commands.serve({
          onRequest: (_from, bytes) => commandHandler(driver.executeHere)(bytes),
          onChannel: (c) => c.close
        })
      )
      return {
        execute: (command) =>
          cluster.state() === "Leader"
            ? driver.executeHere(command)
            : forwardToLeader(cluster, commands, selfRecord, command),
        figures: driver.figures
      }
    })
  )

/** Auto-scavenge is off: nothing runs, and nothing routes here (the routes are not served). */
export const layerDisabled: Layer.Layer<AutoScavenge> = Layer.succeed(AutoScavenge, {
  execute: () => Effect.succeed({ _tag: "Failed", detail: "AutoScavenge is not enabled" }),
  figures: Effect.succeed(noAutoScavengeFigures)
})

export const layerNodeScavengeServer: Layer.Layer<never, never, ClusterStatus | Scavenger | EventStore | NodeInfo> =
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const cluster = yield* ClusterStatus
      const scavenger = yield* Scavenger
      if (cluster.internal === undefined) return
      const self = Effect.map(yield* selfRecordNow, (me) => ({
        address: me.internalHttpEndPointIp,
        port: me.internalHttpEndPointPort
      }))
      // Any state in which this node acts as the cluster's leader.
      const leads = () => {
        const state = cluster.state()
        return state === "Leader" || state === "PreLeader" || state === "ResigningLeader"
      }
      const handle = nodeScavengeHandler(scavenger, self, leads)
      yield* Effect.orDie(
        cluster.internal.protocol(Protocol.NodeScavenge).serve({
          onRequest: (_from, bytes) => {
            const request = decodeRequest(bytes)
            return request === undefined ? Effect.die("a malformed node scavenge call") : handle(request)
          },
          onChannel: (c) => c.close
        })
      )
    })
  )
