/**
 * The persistent subscriptions service of a node: its groups run while the node leads (a single node always
 * does). Built over the node's store and its place in the cluster.
 */
import { Effect, Layer } from "effect"
import { ClusterStatus } from "@vellum/cluster"
import { EventStore } from "@vellum/storage"
import {
  defaultSubscriptionsSettings,
  makeSubscriptions,
  type SubscriptionsSettings
} from "./service/makeSubscriptions.js"
import { Subscriptions } from "./service/Subscriptions.js"

export const layer = (
  settings: SubscriptionsSettings = defaultSubscriptionsSettings
): Layer.Layer<Subscriptions, never, EventStore | ClusterStatus> =>
  Layer.scoped(
    Subscriptions,
    Effect.gen(function* () {
      return yield* makeSubscriptions(yield* EventStore, yield* ClusterStatus, settings)
    })
  )
