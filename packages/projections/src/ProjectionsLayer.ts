/**
 * The projections subsystem of a node: its projections run while the node leads (a single node always does).
 * Built over the node's store, its place in the cluster, and the factory that starts runners.
 */
import { Effect, Layer } from "effect"
import { ClusterStatus } from "@vellum/cluster"
import { EventStore } from "@vellum/storage"
import { makeProjections } from "./service/makeProjections.js"
import { ProjectionRunnerFactory } from "./service/ProjectionRunnerFactory.js"
import { defaultProjectionsSettings, Projections, type ProjectionsSettings } from "./service/Projections.js"

export const layer = (
  settings: ProjectionsSettings = defaultProjectionsSettings
): Layer.Layer<Projections, never, EventStore | ClusterStatus | ProjectionRunnerFactory> =>
  Layer.scoped(
    Projections,
    Effect.gen(function* () {
      return yield* makeProjections(yield* EventStore, yield* ClusterStatus, settings, yield* ProjectionRunnerFactory)
    })
  )
