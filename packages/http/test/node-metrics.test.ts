// `/metrics`: Prometheus text from a per-node prom-client registry — request counts and durations by route
// family, method and status through `observeRequest`, storage figures copied from EventStore.stats().
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { register as globalRegistry } from "prom-client"
import { parseExposition, storageStats, value } from "./nodeFixtures.js"
import { makeNodeMetrics, routeFamily } from "../src/endpoints/index.js"

const storage = storageStats({ totalFlushDelayMs: 2500, flushes: 90, queued: 7 })

describe("metrics exposition", () => {
  it.effect("counts requests and durations by family, method and status", () =>
    Effect.gen(function* () {
      const metrics = makeNodeMetrics()
      metrics.observeRequest({
        family: "streams",
        method: "POST",
        status: 201,
        durationMillis: 12,
        requestBytes: 100,
        responseBytes: 0
      })
      metrics.observeRequest({ family: "streams", method: "POST", status: 201, durationMillis: 3 })
      metrics.observeRequest({ family: "streams", method: "GET", status: 404, durationMillis: 1, responseBytes: 50 })
      const { types, samples } = parseExposition(yield* metrics.render(storage))
      expect(types.get("vellum_http_request_duration_seconds")).toBe("histogram")
      const created = { family: "streams", method: "POST", status: "201" }
      expect(value(samples, "vellum_http_request_duration_seconds_count", created)).toBe(2)
      expect(value(samples, "vellum_http_request_duration_seconds_sum", created)).toBeCloseTo(0.015, 9)
      expect(value(samples, "vellum_http_request_duration_seconds_bucket", { ...created, le: "0.005" })).toBe(1)
      expect(value(samples, "vellum_http_request_duration_seconds_bucket", { ...created, le: "0.025" })).toBe(2)
      expect(value(samples, "vellum_http_request_duration_seconds_bucket", { ...created, le: "+Inf" })).toBe(2)
      expect(
        value(samples, "vellum_http_request_duration_seconds_count", {
          family: "streams",
          method: "GET",
          status: "404"
        })
      ).toBe(1)
      expect(value(samples, "vellum_http_received_bytes_total")).toBe(100)
      expect(value(samples, "vellum_http_sent_bytes_total")).toBe(50)
      expect(metrics.traffic()).toEqual({ requests: 3, receivedBytes: 100, sentBytes: 50, openConnections: 0 })
    })
  )

  it.effect("copies the storage figures at each scrape", () =>
    Effect.gen(function* () {
      const metrics = makeNodeMetrics()
      const { types, samples } = parseExposition(yield* metrics.render(storage))
      expect(types.get("vellum_writer_commands_total")).toBe("counter")
      expect(types.get("vellum_writer_queue_length")).toBe("gauge")
      expect(value(samples, "vellum_writer_commands_total")).toBe(500)
      expect(value(samples, "vellum_writer_rounds_total")).toBe(100)
      expect(value(samples, "vellum_writer_flushes_total")).toBe(90)
      expect(value(samples, "vellum_writer_bytes_total")).toBe(50_000)
      expect(value(samples, "vellum_writer_flush_seconds_total")).toBe(2.5)
      expect(value(samples, "vellum_writer_queue_length")).toBe(7)
      expect(value(samples, "vellum_log_committed_position_bytes")).toBe(4096)
      expect(value(samples, "vellum_log_writer_position_bytes")).toBe(5000)
      expect(value(samples, "vellum_log_chunks")).toBe(2)
      expect(value(samples, "vellum_read_cache_hits_total")).toBe(40)
      expect(value(samples, "vellum_read_cache_misses_total")).toBe(2)
      expect(value(samples, "vellum_index_table_entries")).toBe(300)
      // The next scrape shows the new totals, not a sum of scrapes.
      const later = { ...storage, writer: { ...storage.writer, commands: 650, queued: 0 } }
      const again = parseExposition(yield* metrics.render(later)).samples
      expect(value(again, "vellum_writer_commands_total")).toBe(650)
      expect(value(again, "vellum_writer_queue_length")).toBe(0)
    })
  )

  it.effect("each node has its own registry; the global default registry is untouched", () =>
    Effect.gen(function* () {
      const a = makeNodeMetrics()
      const b = makeNodeMetrics()
      a.observeRequest({ family: "ping", method: "GET", status: 200, durationMillis: 1 })
      a.setOpenConnections(4)
      const sa = parseExposition(yield* a.render(storage)).samples
      const sb = parseExposition(yield* b.render(storage)).samples
      expect(value(sa, "vellum_http_request_duration_seconds_count", { family: "ping" })).toBe(1)
      expect(value(sb, "vellum_http_request_duration_seconds_count", { family: "ping" })).toBeUndefined()
      expect(value(sa, "vellum_http_open_connections")).toBe(4)
      expect(value(sb, "vellum_http_open_connections")).toBe(0)
      const global = yield* Effect.promise(() => globalRegistry.metrics())
      expect(global).not.toContain("vellum_")
    })
  )

  it("uses prom-client's Prometheus text content type", () => {
    expect(makeNodeMetrics().contentType).toBe("text/plain; version=0.0.4; charset=utf-8")
  })
})

describe("routeFamily", () => {
  it("names known first segments and folds the rest into other", () => {
    expect(routeFamily("/streams/{stream}")).toBe("streams")
    expect(routeFamily("/streams/a%2Fb?embed=body")).toBe("streams")
    expect(routeFamily("/subscriptions/s/g/1")).toBe("subscriptions")
    expect(routeFamily("/stats/proc/gc")).toBe("stats")
    expect(routeFamily("/admin/shutdown")).toBe("admin")
    expect(routeFamily("/health/live")).toBe("health")
    expect(routeFamily("/")).toBe("root")
    expect(routeFamily("/wp-login.php")).toBe("other")
    expect(routeFamily("/Streams/x")).toBe("other")
    expect(routeFamily("http://127.0.0.1:2113/gossip?format=json")).toBe("gossip")
    expect(routeFamily("http://127.0.0.1:2113")).toBe("root")
    expect(routeFamily("//streams//x")).toBe("streams")
    expect(routeFamily("/?streams")).toBe("root")
    expect(routeFamily("/ping?x=/streams")).toBe("ping")
    expect(routeFamily("")).toBe("root")
    expect(routeFamily("streams/x")).toBe("streams")
  })
})
