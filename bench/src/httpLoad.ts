/**
 * The load generator of `npm run bench:http` (and `bench:subscriptions`), run as its own process (forked with an
 * IPC channel) so its CPU is not the server's. It receives one LoadPlan, keeps `connections` keep-alive
 * connections busy (closed loop: each connection sends its next request when the previous response has been
 * read in full), and answers with a LoadResult.
 *
 * undici (already installed with @effect/platform-node) does the HTTP; one Client per connection, no
 * pipelining, so "64 connections" means 64 requests in flight at most — what autocannon -c 64 does. A consume
 * plan's "request" is a pair: the group's feed, then one ack of what it held.
 */
import * as crypto from "node:crypto"
import { Client, type Dispatcher } from "undici"
import {
  EVENTS_CONTENT_TYPE,
  ackAllOf,
  appendBody,
  quantile,
  round,
  type ConsumePlan,
  type LoadPlan,
  type LoadResult
} from "./httpPlan.js"
import { processCpuTicks, TICK_US, type CpuTicks } from "./procStat.js"

const nowMs = () => Number(process.hrtime.bigint()) / 1e6

/** What one closed-loop step got back: its (last) status, the bytes read, the events it settled. */
interface Exchange {
  readonly status: number
  readonly bytes: number
  readonly events: number
  readonly empty: boolean
}

type Step = (client: Client) => Promise<Exchange>

const drained = async (response: Dispatcher.ResponseData): Promise<number> => {
  let bytes = 0
  for await (const chunk of response.body) bytes += (chunk as Buffer).length
  return bytes
}

/** One request per step, built by `next` (shared by every connection: one counter). */
const single =
  (next: () => Dispatcher.RequestOptions): Step =>
  async (client) => {
    const response = await client.request(next())
    return { status: response.statusCode, bytes: await drained(response), events: 0, empty: false }
  }

/** The feed of the plan's group, then one ack of every message it held. */
const consume = (plan: ConsumePlan): Step => {
  const feedHeaders = { authorization: plan.authorization, accept: plan.accept }
  const ackHeaders = { authorization: plan.authorization }
  return async (client) => {
    const feed = await client.request({ method: "GET", path: plan.path, headers: feedHeaders })
    const text = await feed.body.text()
    const bytes = Buffer.byteLength(text)
    const ackAll = feed.statusCode === 200 ? ackAllOf(text) : undefined
    if (ackAll === undefined) return { status: feed.statusCode, bytes, events: 0, empty: feed.statusCode === 200 }
    const ack = await client.request({ method: "POST", path: ackAll.path, headers: ackHeaders })
    await ack.body.dump()
    return { status: ack.statusCode, bytes, events: ackAll.ids, empty: false }
  }
}

/** The plan's step. */
const stepOf = (plan: LoadPlan): Step => {
  if (plan.kind === "consume") return consume(plan)
  if (plan.kind === "read") {
    let next = 0
    const headers = { authorization: plan.authorization, accept: plan.accept }
    return single(() => ({ method: "GET", path: plan.paths[next++ % plan.paths.length], headers }))
  }
  // Random per process, so two runs against the same database never repeat an id.
  const salt = crypto.randomBytes(4).toString("hex")
  const headers = {
    authorization: plan.authorization,
    "content-type": EVENTS_CONTENT_TYPE,
    "kurrent-expectedversion": "-2"
  }
  let appends = 0
  return single(() => {
    const k = appends++
    return {
      method: "POST",
      path: `/streams/${plan.streamPrefix}-${k % plan.streams}`,
      headers,
      body: appendBody(salt, k * plan.eventsPerAppend, plan.eventsPerAppend)
    }
  })
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
  const step = stepOf(plan)
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
  let events = 0
  let emptyReads = 0
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
        const sent = nowMs()
        try {
          const exchange = await step(client)
          const done = nowMs()
          statuses[exchange.status] = (statuses[exchange.status] ?? 0) + 1
          if (exchange.status < 200 || exchange.status > 299) non2xx++
          if (exchange.empty) emptyReads++
          responses++
          responseBytes += exchange.bytes
          if (done >= windowStart && done <= windowEnd) {
            latencies.push(done - sent)
            events += exchange.events
          }
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
    ...(plan.kind === "consume" ? { events, emptyReads } : {}),
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
