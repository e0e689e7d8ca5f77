/**
 * Appends for `npm run bench:cluster`: the scenarios of `bench:http` that write (single-event appends at 64
 * connections, 100-event appends at 16), run by the same load worker against a single node and then against
 * the leader of the 3-node cluster, in the same run. Besides requests/s, each run reads from /proc the CPU
 * every server process spent per answered request (warm-up included, so the leader and its followers are
 * counted alike) and how busy the whole machine was, since on 2 cores four processes share it; and from the
 * server's /metrics, its writer's rounds: how many appends each took, and how long a round lasted against
 * the part of it spent making its bytes durable locally (on a leader, the rest is mostly the wait for a
 * follower to have them durable too, since a round ends only when a quorum holds it).
 */
import { machineTicks, processCpuTicks, TICK_US, type CpuTicks } from "./procStat.js"
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

/** The writer's counters on the server's /metrics (Prometheus text), if it answers. */
const writerCounters = async (origin: string, authorization: string) => {
  try {
    const text = await (await fetch(`${origin}/metrics`, { headers: { authorization } })).text()
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN)
    return {
      commands: value("vellum_writer_commands_total"),
      rounds: value("vellum_writer_rounds_total"),
      flushSeconds: value("vellum_writer_flush_seconds_total")
    }
  } catch {
    return undefined
  }
}
type WriterCounters = NonNullable<Awaited<ReturnType<typeof writerCounters>>>

/**
 * Rounds over a run of `loadSecs` (the load's warm-up and window; the worker's start and end are not
 * counted): per second, appends per round, and the mean round and local flush times.
 */
export const roundsBetween = (before: WriterCounters, after: WriterCounters, loadSecs: number) => {
  const rounds = after.rounds - before.rounds
  if (!(rounds > 0) || !(loadSecs > 0)) return undefined
  return {
    perSec: round(rounds / loadSecs, 1),
    appendsPerRound: round((after.commands - before.commands) / rounds, 1),
    roundMs: round((loadSecs * 1000) / rounds, 2),
    flushMs: round(((after.flushSeconds - before.flushSeconds) * 1000) / rounds, 2)
  }
}

export interface MeasuredLoad {
  readonly result: LoadResult
  /** CPU µs per answered request of each server process, in the order given. */
  readonly cpuUsPerRequest: ReadonlyArray<number | undefined>
  /** The whole machine's busy share over the run (every core, other users included), in %. */
  readonly machineBusyPercent: number | undefined
  /** The server's writer rounds over the whole run (warm-up included): rounds are serial, one at a time. */
  readonly rounds: ReturnType<typeof roundsBetween>
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
  const countersBefore = await writerCounters(origin, authorization)
  const machineBefore = machineTicks()
  const before = pids.map(processCpuTicks)
  const result = await runLoadProcess(plan)
  const after = pids.map(processCpuTicks)
  const machineAfter = machineTicks()
  const countersAfter = await writerCounters(origin, authorization)
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
        : Math.round(((machineAfter.busy - machineBefore.busy) * 100) / (machineAfter.total - machineBefore.total)),
    rounds:
      countersBefore === undefined || countersAfter === undefined
        ? undefined
        : roundsBetween(countersBefore, countersAfter, timing.warmupSec + timing.durationSec)
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
    writerRounds: { cluster: cluster.rounds, single: single.rounds },
    valid,
    ...(c.errors + c.non2xx > 0 ? { clusterProblems: { statuses: c.statuses, firstError: c.firstError } } : {}),
    ...(s.errors + s.non2xx > 0 ? { singleProblems: { statuses: s.statuses, firstError: s.firstError } } : {})
  }
}
