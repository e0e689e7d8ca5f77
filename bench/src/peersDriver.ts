/**
 * The load driver of `npm run bench:peers`, run as its own process (forked with an IPC channel) so that every
 * server's CPU is its own. It receives one DriverPlan, opens one connection per client, and runs the same
 * closed loop against every server: each client starts its next operation when the previous one has
 * completed; operations completing in the warm-up are not counted. The server's CPU (its whole process tree)
 * is read from /proc when the window opens and when the first client sees it has closed.
 */
import { connectPostgres } from "./peersPostgres.js"
import { connectRedis } from "./peersRedis.js"
import { connectVellum } from "./peersVellum.js"
import { quantile, round } from "./httpPlan.js"
import {
  APPEND_STREAMS_PER_CLIENT,
  GLOBAL_PAGE,
  benchEvents,
  readStreamName,
  type DriverPlan,
  type DriverResult,
  type PeerClient,
  type PeerTarget
} from "./peersPlan.js"
import { processTreeTicks, TICK_US, treeTicksBetween } from "./procStat.js"

const nowMs = () => Number(process.hrtime.bigint()) / 1e6
const pick = (n: number) => Math.floor(Math.random() * n)

const connect = (target: PeerTarget): Promise<PeerClient> => {
  switch (target.peer) {
    case "vellum":
      return connectVellum(target)
    case "postgres":
      return connectPostgres(target)
    case "redis":
      return connectRedis(target)
  }
}

const globalPages = (target: PeerTarget) =>
  target.peer === "vellum" ? target.globalStarts.length : target.peer === "postgres" ? target.globalPages : 0

/** One operation of the plan's workload by client `i`, on a target picked at random. */
const operation = (plan: DriverPlan) => {
  const { workload } = plan
  switch (workload.kind) {
    case "append":
      return (client: PeerClient, i: number) =>
        client.append(`${plan.streamPrefix}-c${i}-${pick(APPEND_STREAMS_PER_CLIENT)}`, benchEvents(workload.events))
    case "read-stream":
      return (client: PeerClient) =>
        client.readStream(
          readStreamName(pick(plan.readStreams)),
          pick(plan.eventsPerReadStream - workload.events + 1),
          workload.events
        )
    case "read-global": {
      // A page is GLOBAL_PAGE events; a read of `events` must end inside the read data.
      const starts = globalPages(plan.target) - workload.events / GLOBAL_PAGE + 1
      if (starts < 1) throw new Error(`the read data holds fewer than ${workload.events} events in global order`)
      return (client: PeerClient) => client.readGlobal(pick(starts), workload.events)
    }
  }
}

export const drive = async (plan: DriverPlan): Promise<DriverResult> => {
  const op = operation(plan)
  const clients = await Promise.all(Array.from({ length: plan.workload.clients }, () => connect(plan.target)))
  const cpuBefore = process.cpuUsage()
  const start = nowMs()
  const windowStart = start + plan.warmupSec * 1000
  const windowEnd = windowStart + plan.durationSec * 1000
  const latencies: Array<number> = []
  let events = 0
  let errors = 0
  let firstError: string | undefined
  let ticksAtStart: Map<number, number> | undefined
  let ticksAtEnd: Map<number, number> | undefined
  const startTimer = setTimeout(() => (ticksAtStart = processTreeTicks(plan.serverPid)), plan.warmupSec * 1000)
  // The window's end is read by the first client that sees it has passed, not by a timer (which might run
  // only once every client has stopped).
  const windowOver = () => {
    if (nowMs() < windowEnd) return false
    ticksAtEnd ??= processTreeTicks(plan.serverPid)
    return true
  }
  const loop = async (client: PeerClient, i: number) => {
    while (!windowOver()) {
      const sent = nowMs()
      try {
        const n = await op(client, i)
        const done = nowMs()
        if (done >= windowStart && done <= windowEnd) {
          latencies.push(done - sent)
          events += n
        }
      } catch (e) {
        errors++
        firstError ??= e instanceof Error ? e.message : String(e)
      }
    }
  }
  try {
    await Promise.all(clients.map(loop))
  } finally {
    clearTimeout(startTimer)
    await Promise.all(clients.map((client) => client.close()))
  }
  const cpu = process.cpuUsage(cpuBefore)
  const sorted = Float64Array.from(latencies).sort()
  const serverTicks =
    ticksAtStart !== undefined && ticksAtEnd !== undefined ? treeTicksBetween(ticksAtStart, ticksAtEnd) : undefined
  return {
    ops: sorted.length,
    events,
    eventsPerSec: round(events / plan.durationSec, 1),
    p50Ms: round(quantile(sorted, 0.5), 2),
    p99Ms: round(quantile(sorted, 0.99), 2),
    errors,
    ...(firstError !== undefined ? { firstError } : {}),
    ...(serverTicks !== undefined && events > 0
      ? { serverCpuUsPerEvent: round((serverTicks * TICK_US) / events, 2) }
      : {}),
    driverCpuPercent: Math.round((cpu.user + cpu.system) / 10 / (nowMs() - start))
  }
}

// Run as a forked child: one plan in, one result out, then exit.
if (process.send !== undefined) {
  // The parent is gone (killed, or stopped on SIGINT): nobody waits for the result.
  process.once("disconnect", () => process.exit(1))
  process.once("message", (plan: DriverPlan) => {
    drive(plan).then(
      (result) => process.send!(result, () => process.exit(0)),
      (e: unknown) => {
        console.error(e)
        process.exit(1)
      }
    )
  })
}
