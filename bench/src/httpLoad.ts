/**
 * The load generator of `npm run bench:http`, run as its own process (forked with an IPC channel) so its CPU
 * is not the server's. It receives one LoadPlan, keeps `connections` keep-alive connections busy (closed
 * loop: each connection sends its next request when the previous response has been read in full), and
 * answers with a LoadResult.
 *
 * undici (already installed with @effect/platform-node) does the HTTP; one Client per connection, no
 * pipelining, so "64 connections" means 64 requests in flight at most — what autocannon -c 64 does.
 */
import * as crypto from "node:crypto"
import { Client, type Dispatcher } from "undici"
import { EVENTS_CONTENT_TYPE, appendBody, quantile, round, type LoadPlan, type LoadResult } from "./httpPlan.js"
import { processCpuTicks, TICK_US, type CpuTicks } from "./procStat.js"

const nowMs = () => Number(process.hrtime.bigint()) / 1e6

/** Builds the next request; called once per request, shared by every connection (one counter). */
const requestSource = (plan: LoadPlan): (() => Dispatcher.RequestOptions) => {
  if (plan.kind === "read") {
    let next = 0
    const headers = { authorization: plan.authorization, accept: plan.accept }
    return () => ({ method: "GET", path: plan.paths[next++ % plan.paths.length], headers })
  }
  // Random per process, so two runs against the same database never repeat an id.
  const salt = crypto.randomBytes(4).toString("hex")
  const headers = {
    authorization: plan.authorization,
    "content-type": EVENTS_CONTENT_TYPE,
    "kurrent-expectedversion": "-2"
  }
  let appends = 0
  return () => {
    const k = appends++
    return {
      method: "POST",
      path: `/streams/${plan.streamPrefix}-${k % plan.streams}`,
      headers,
      body: appendBody(salt, k * plan.eventsPerAppend, plan.eventsPerAppend)
    }
  }
}

export const serverCpu = (start: CpuTicks, end: CpuTicks, requests: number) => {
  const user = end.user - start.user
  const system = end.system - start.system
  return {
    serverCpuUsPerRequest: round(((user + system) * TICK_US) / requests, 1),
    serverSystemPercent: user + system === 0 ? 0 : Math.round((system * 100) / (user + system))
  }
}

export const runLoad = async (plan: LoadPlan): Promise<LoadResult> => {
  const next = requestSource(plan)
  const cpuBefore = process.cpuUsage()
  const start = nowMs()
  const windowStart = start + plan.warmupSec * 1000
  const windowEnd = windowStart + plan.durationSec * 1000
  const latencies: Array<number> = []
  const statuses: Record<string, number> = {}
  let errors = 0
  let non2xx = 0
  let responses = 0
  let responseBytes = 0
  let firstError: string | undefined
  let serverTicksAtStart: CpuTicks | undefined
  let serverTicksAtEnd: CpuTicks | undefined
  const startTimer = setTimeout(() => (serverTicksAtStart = processCpuTicks(plan.serverPid)), plan.warmupSec * 1000)
  // The window's end is sampled by the first connection that sees it has passed, not by a timer: a timer
  // due then may run only after every connection has stopped (and be cleared unfired).
  const windowOver = (): boolean => {
    if (nowMs() < windowEnd) return false
    serverTicksAtEnd ??= processCpuTicks(plan.serverPid)
    return true
  }

  const connection = async () => {
    const client = new Client(plan.origin, {
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: 30_000,
      bodyTimeout: 30_000
    })
    try {
      while (!windowOver()) {
        const request = next()
        const sent = nowMs()
        try {
          const response = await client.request(request)
          let bytes = 0
          for await (const chunk of response.body) bytes += (chunk as Buffer).length
          const done = nowMs()
          statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
          if (response.statusCode < 200 || response.statusCode > 299) non2xx++
          responses++
          responseBytes += bytes
          if (done >= windowStart && done <= windowEnd) latencies.push(done - sent)
        } catch (e) {
          errors++
          firstError ??= e instanceof Error ? e.message : String(e)
        }
      }
    } finally {
      await client.close().catch(() => client.destroy())
    }
  }

  await Promise.all(Array.from({ length: plan.connections }, connection))
  clearTimeout(startTimer)
  const cpu = process.cpuUsage(cpuBefore)
  const sorted = Float64Array.from(latencies).sort()
  return {
    requests: sorted.length,
    reqPerSec: round(sorted.length / plan.durationSec, 1),
    p50Ms: round(quantile(sorted, 0.5), 2),
    p99Ms: round(quantile(sorted, 0.99), 2),
    maxMs: round(quantile(sorted, 1), 2),
    errors,
    non2xx,
    statuses,
    meanResponseBytes: responses === 0 ? 0 : Math.round(responseBytes / responses),
    loadCpuPercent: Math.round((cpu.user + cpu.system) / 10 / (nowMs() - start)),
    ...(serverTicksAtStart !== undefined && serverTicksAtEnd !== undefined && sorted.length > 0
      ? serverCpu(serverTicksAtStart, serverTicksAtEnd, sorted.length)
      : {}),
    ...(firstError !== undefined ? { firstError } : {})
  }
}

// Run as a forked child: one plan in, one result out, then exit.
if (process.send !== undefined) {
  process.once("message", (plan: LoadPlan) => {
    runLoad(plan).then(
      (result) => process.send!(result, () => process.exit(0)),
      (e: unknown) => {
        console.error(e)
        process.exit(1)
      }
    )
  })
}
