/**
 * Appends for `npm run bench:cluster`: the scenarios of `bench:http` that write (single-event appends at 64
 * connections, 100-event appends at 16), run by the same load worker against a single node and then against
 * the leader of the 3-node cluster, in the same run. Besides requests/s, each run reads from /proc the CPU
 * every server process spent per answered request (warm-up included, so the leader and its followers are
 * counted alike) and how busy the whole machine was, since on 2 cores four processes share it.
 */
import * as fs from "node:fs"
import { processCpuTicks, TICK_US, type CpuTicks } from "./httpLoad.js"
import { round, type AppendPlan, type LoadResult } from "./httpPlan.js"
import { runLoadProcess } from "./httpProcesses.js"

export interface AppendScenario {
  readonly bench: string
  readonly eventsPerAppend: number
  readonly connections: number
}

export const APPEND_SCENARIOS: ReadonlyArray<AppendScenario> = [
  { bench: "append-1", eventsPerAppend: 1, connections: 64 },
  { bench: "append-100", eventsPerAppend: 100, connections: 16 }
]
const APPEND_STREAMS = 1000

export interface LoadTiming {
  readonly warmupSec: number
  readonly durationSec: number
}

/** The machine's busy and total clock ticks so far (all cores; the first line of /proc/stat), if readable. */
const machineTicks = (): { readonly busy: number; readonly total: number } | undefined => {
  try {
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    const idle = fields[3]! + (fields[4] ?? 0)
    const total = fields.reduce((a, b) => a + b, 0)
    return { busy: total - idle, total }
  } catch {
    return undefined
  }
}

export interface MeasuredLoad {
  readonly result: LoadResult
  /** CPU µs per answered request of each server process, in the order given. */
  readonly cpuUsPerRequest: ReadonlyArray<number | undefined>
  /** The whole machine's busy share over the run (every core, other users included), in %. */
  readonly machineBusyPercent: number | undefined
}

const cpuUs = (before: CpuTicks | undefined, after: CpuTicks | undefined) =>
  before === undefined || after === undefined
    ? undefined
    : (after.user + after.system - before.user - before.system) * TICK_US

/** Runs one append scenario against `origin`; `pids` are the server processes whose CPU is counted. */
export const measureAppends = async (
  scenario: AppendScenario,
  origin: string,
  authorization: string,
  pids: ReadonlyArray<number | undefined>,
  timing: LoadTiming
): Promise<MeasuredLoad> => {
  const plan: AppendPlan = {
    kind: "append",
    origin,
    authorization,
    connections: scenario.connections,
    warmupSec: timing.warmupSec,
    durationSec: timing.durationSec,
    eventsPerAppend: scenario.eventsPerAppend,
    streamPrefix: `bench-${scenario.bench}`,
    streams: APPEND_STREAMS,
    ...(pids[0] !== undefined ? { serverPid: pids[0] } : {})
  }
  const machineBefore = machineTicks()
  const before = pids.map(processCpuTicks)
  const result = await runLoadProcess(plan)
  const after = pids.map(processCpuTicks)
  const machineAfter = machineTicks()
  const answered = Object.values(result.statuses).reduce((a, b) => a + b, 0)
  return {
    result,
    cpuUsPerRequest: pids.map((_, i) => {
      const us = cpuUs(before[i], after[i])
      return us === undefined || answered === 0 ? undefined : round(us / answered, 1)
    }),
    machineBusyPercent:
      machineBefore === undefined || machineAfter === undefined || machineAfter.total === machineBefore.total
        ? undefined
        : Math.round(((machineAfter.busy - machineBefore.busy) * 100) / (machineAfter.total - machineBefore.total))
  }
}

const sum = (xs: ReadonlyArray<number | undefined>) =>
  xs.every((x) => x !== undefined)
    ? round(
        xs.reduce<number>((a, x) => a + x!, 0),
        1
      )
    : undefined

/** The JSON line comparing the cluster's leader with the single node on one scenario. */
export const comparison = (scenario: AppendScenario, single: MeasuredLoad, cluster: MeasuredLoad) => {
  const s = single.result
  const c = cluster.result
  const valid = s.errors + s.non2xx + c.errors + c.non2xx === 0
  const ratio = s.reqPerSec === 0 ? 0 : round(c.reqPerSec / s.reqPerSec, 3)
  return {
    bench: scenario.bench,
    connections: scenario.connections,
    eventsPerRequest: scenario.eventsPerAppend,
    clusterReqPerSec: Math.round(c.reqPerSec),
    singleReqPerSec: Math.round(s.reqPerSec),
    ratio,
    target: 0.5,
    met: valid && ratio >= 0.5,
    clusterEventsPerSec: Math.round(c.reqPerSec * scenario.eventsPerAppend),
    singleEventsPerSec: Math.round(s.reqPerSec * scenario.eventsPerAppend),
    p50Ms: { cluster: c.p50Ms, single: s.p50Ms },
    p99Ms: { cluster: c.p99Ms, single: s.p99Ms },
    cpuUsPerRequest: {
      single: single.cpuUsPerRequest[0],
      leader: cluster.cpuUsPerRequest[0],
      followers: cluster.cpuUsPerRequest.slice(1),
      clusterTotal: sum(cluster.cpuUsPerRequest)
    },
    loadCpuPercent: { cluster: c.loadCpuPercent, single: s.loadCpuPercent },
    machineBusyPercent: { cluster: cluster.machineBusyPercent, single: single.machineBusyPercent },
    valid,
    ...(c.errors + c.non2xx > 0 ? { clusterProblems: { statuses: c.statuses, firstError: c.firstError } } : {}),
    ...(s.errors + s.non2xx > 0 ? { singleProblems: { statuses: s.statuses, firstError: s.firstError } } : {})
  }
}
