/**
 * Persistent subscriptions in `/metrics`: per group (labels `stream` and `group`), its in-flight and parked
 * messages, when it last handed a message out and last had one acked, how far it lags its source, and the
 * messages it has handed out. Read from `Subscriptions.list` when the registry is scraped, so a stopped group
 * shows as a delivery time that no longer moves while its lag grows. Groups run on the leader: elsewhere (or
 * while they load) there are no series.
 */
import { Effect, Layer, Runtime } from "effect"
import { Counter, Gauge } from "prom-client"
import { NodeMetrics } from "@vellum/http"
import { Subscriptions, type GroupInfo } from "@vellum/subscriptions"

const LABELS = ["stream", "group"] as const

const labelsOf = (info: GroupInfo) => ({ stream: info.stream, group: info.group })

/** Epoch seconds of a time in ms; NaN when it never happened. */
const seconds = (millis: number | undefined): number => (millis === undefined ? Number.NaN : millis / 1000)

export const layer = Layer.effectDiscard(
  Effect.gen(function* () {
    const metrics = yield* NodeMetrics
    const service = yield* Subscriptions
    // Run with the node's own services (its Clock among them), not the default ones.
    const runtime = yield* Effect.runtime<never>()
    const groups = (): Promise<ReadonlyArray<GroupInfo>> =>
      service.isReady() ? Runtime.runPromise(runtime)(service.list()) : Promise.resolve([])
    const registers = [metrics.registry]

    const gauge = (name: string, help: string, value: (info: GroupInfo) => number) =>
      new Gauge({
        name,
        help,
        labelNames: LABELS,
        registers,
        async collect() {
          const all = await groups()
          // Deleted groups (and every group on a node that stopped leading) leave no stale series.
          this.reset()
          for (const info of all) this.set(labelsOf(info), value(info))
        }
      })
    gauge(
      "vellum_subscription_in_flight_messages",
      "Messages a group handed out that are not yet acked, nacked or timed out",
      (info) => info.stats.outstandingMessagesCount
    )
    gauge(
      "vellum_subscription_parked_messages",
      "Messages in a group's parked stream",
      (info) => info.parkedMessageCount
    )
    gauge(
      "vellum_subscription_last_delivery_timestamp_seconds",
      "When a group last handed a message out, in seconds since the epoch (NaN: never since it started)",
      (info) => seconds(info.stats.lastDeliveryAt)
    )
    gauge(
      "vellum_subscription_last_ack_timestamp_seconds",
      "When a message of a group was last acked, in seconds since the epoch (NaN: never since it started)",
      (info) => seconds(info.stats.lastAckAt)
    )
    gauge(
      "vellum_subscription_lag_events",
      "Events of a group's source not yet handed out (for a group on $all: log bytes)",
      (info) => info.lag.events
    )
    gauge(
      "vellum_subscription_lag_seconds",
      "Age of the oldest event a group has not finished (0 when caught up)",
      (info) => info.lag.millis / 1000
    )
    new Counter({
      name: "vellum_subscription_items_processed_total",
      help: "Messages a group has handed out since it started",
      labelNames: LABELS,
      registers,
      async collect() {
        const all = await groups()
        this.reset()
        for (const info of all) this.inc(labelsOf(info), info.stats.totalItemsProcessed)
      }
    })
  })
)
