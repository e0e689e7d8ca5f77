// Persistent subscriptions' figures in /metrics: per group, read from the service at each scrape.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NodeMetrics } from "@vellum/http"
import { Subscriptions, defaultGroupSettings } from "@vellum/subscriptions"
import * as SubscriptionMetrics from "../src/subscriptionMetrics.js"
import { makeFakeSubscriptions } from "../../subscriptions/test/fakeSubscriptions.js"

const scrape = Effect.flatMap(NodeMetrics, (metrics) => Effect.promise(() => metrics.registry.metrics()))

const setup = Effect.gen(function* () {
  const fake = makeFakeSubscriptions()
  const context = yield* Layer.build(
    Layer.provideMerge(
      SubscriptionMetrics.layer,
      Layer.merge(NodeMetrics.layer, Layer.succeed(Subscriptions, fake.service))
    )
  )
  return { fake, scrape: Effect.provide(scrape, context) }
})

const lines = (text: string) => text.split("\n")

describe("persistent subscription metrics", () => {
  it.scoped("every figure of every group, labelled by stream and group", () =>
    Effect.gen(function* () {
      const { fake, scrape } = yield* setup
      fake.groups.set("orders::g1", {
        spec: { stream: "orders", group: "g1", settings: defaultGroupSettings },
        pending: [],
        info: {
          parkedMessageCount: 4,
          lag: { events: 12, millis: 2500 },
          stats: {
            status: ["Live"],
            readBufferCount: 0,
            liveBufferCount: 0,
            retryBufferCount: 0,
            outstandingMessagesCount: 3,
            totalItemsProcessed: 40,
            lastProcessedPosition: undefined,
            lastKnownPosition: undefined,
            lastCheckpoint: undefined,
            finishedThrough: undefined,
            parkedSinceStart: 0,
            lastDeliveryAt: 1_700_000_000_500,
            lastAckAt: undefined,
            connections: []
          }
        }
      })
      const text = lines(yield* scrape)
      const l = '{stream="orders",group="g1"}'
      expect(text).toContain(`vellum_subscription_in_flight_messages${l} 3`)
      expect(text).toContain(`vellum_subscription_parked_messages${l} 4`)
      expect(text).toContain(`vellum_subscription_last_delivery_timestamp_seconds${l} 1700000000.5`)
      expect(text).toContain(`vellum_subscription_last_ack_timestamp_seconds${l} Nan`)
      expect(text).toContain(`vellum_subscription_lag_events${l} 12`)
      expect(text).toContain(`vellum_subscription_lag_seconds${l} 2.5`)
      expect(text).toContain(`vellum_subscription_items_processed_total${l} 40`)
    })
  )

  it.scoped("no series for a deleted group, nor on a node whose groups are not running", () =>
    Effect.gen(function* () {
      const { fake, scrape } = yield* setup
      fake.groups.set("orders::g1", {
        spec: { stream: "orders", group: "g1", settings: defaultGroupSettings },
        pending: [],
        info: {}
      })
      expect(yield* scrape).toContain('vellum_subscription_parked_messages{stream="orders",group="g1"} 0')
      fake.ready = false
      expect(yield* scrape).not.toContain('group="g1"')
      fake.ready = true
      fake.groups.clear()
      expect(yield* scrape).not.toContain('group="g1"')
    })
  )
})
