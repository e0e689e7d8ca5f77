/**
 * The throughput part of `npm run bench:subscriptions`: 16 competing consumers of one group, each pulling 20
 * messages with `embed=body` and acking them with one `ackAll` POST, against 16 clients reading 20-event pages
 * of the same stream with `embed=body` (bench:http's page reads), one after the other on the same node.
 */
import { median, print } from "./benchSupport.js"
import { ATOM_JSON, PAGE_SIZE, round, type LoadResult } from "./httpPlan.js"
import { readStreamName, streamPagePaths } from "./httpPrefill.js"
import { runLoadProcess, type VellumNode } from "./httpProcesses.js"
import { COMPETING_JSON, createGroup, groupPath, readGroupInfo } from "./subscriptionsHttp.js"

export const CONSUMERS = 16
export const BATCH = 20
/** The group's read batches and buffer: 16 consumers hold up to 320 messages, so the buffer holds three rounds. */
export const THROUGHPUT_SETTINGS = { readBatchSize: 500, bufferSize: 1000 } as const
const GROUP = "bench-consumers"
/** The consumers' floor, as a share of the page reads' event rate (issue 20's target). */
export const TARGET_RATIO = 0.5

export interface ThroughputOptions {
  readonly authorization: string
  readonly events: number
  readonly warmupSec: number
  readonly durationSec: number
  readonly reps: number
}

const problems = (r: LoadResult) =>
  r.errors > 0 || r.non2xx > 0 ? { statuses: r.statuses, firstError: r.firstError } : undefined

/** Server CPU (µs, from /proc) per event: per request, times requests, over the events they carried. */
const cpuPerEvent = (r: LoadResult, events: number) =>
  r.serverCpuUsPerRequest === undefined || events === 0
    ? undefined
    : round((r.serverCpuUsPerRequest * r.requests) / events, 1)

interface Rep {
  readonly ratio: number
  readonly cpuConsumers: number | undefined
  readonly cpuPageReads: number | undefined
  readonly valid: boolean
}

/**
 * One rep: both loads, in the order given, the consumers on a fresh group from the stream's start (the stream
 * `bench-read-0` holds `events` events); prints one line.
 */
const runRep = async (node: VellumNode, options: ThroughputOptions, rep: number, pagesFirst: boolean) => {
  const { authorization, warmupSec, durationSec } = options
  const stream = readStreamName(0)
  const group = `${GROUP}-${rep}`
  const base = { origin: node.origin, authorization, connections: CONSUMERS, warmupSec, durationSec }
  const serverPid = node.pid === undefined ? {} : { serverPid: node.pid }
  const readPages = () =>
    runLoadProcess({
      ...base,
      ...serverPid,
      kind: "read",
      paths: streamPagePaths(1, options.events),
      accept: ATOM_JSON
    })
  const consume = async () => {
    await createGroup(node.origin, authorization, stream, group, THROUGHPUT_SETTINGS)
    return runLoadProcess({
      ...base,
      ...serverPid,
      kind: "consume",
      path: `${groupPath(stream, group)}/${BATCH}?embed=body`,
      accept: COMPETING_JSON
    })
  }
  const pages = pagesFirst ? await readPages() : undefined
  const consumers = await consume()
  const pagesResult = pages ?? (await readPages())
  const { info } = await readGroupInfo(node.origin, authorization, stream, group)
  const pageEventsPerSec = pagesResult.reqPerSec * PAGE_SIZE
  const consumedEvents = consumers.events ?? 0
  const consumerEventsPerSec = consumedEvents / durationSec
  const ratio = pageEventsPerSec === 0 ? 0 : round(consumerEventsPerSec / pageEventsPerSec, 3)
  // A group that ran out of messages hands out empty feeds: the figure is then the prefill's, not the group's.
  const ranDry = (consumers.emptyReads ?? 0) > 0
  const valid = pagesResult.errors + pagesResult.non2xx + consumers.errors + consumers.non2xx === 0 && !ranDry
  const cpuConsumers = cpuPerEvent(consumers, consumedEvents)
  const cpuPageReads = cpuPerEvent(pagesResult, pagesResult.requests * PAGE_SIZE)
  print({
    bench: "consumers-vs-page-reads",
    rep,
    order: pagesFirst ? "page reads, consumers" : "consumers, page reads",
    connections: CONSUMERS,
    batch: BATCH,
    groupSettings: THROUGHPUT_SETTINGS,
    consumerEventsPerSec: Math.round(consumerEventsPerSec),
    consumerPairsPerSec: consumers.reqPerSec,
    consumerP50Ms: consumers.p50Ms,
    consumerP99Ms: consumers.p99Ms,
    pageReadEventsPerSec: Math.round(pageEventsPerSec),
    pageReadP50Ms: pagesResult.p50Ms,
    pageReadP99Ms: pagesResult.p99Ms,
    ratio,
    serverCpuUsPerEvent: { consumers: cpuConsumers, pageReads: cpuPageReads },
    serverSystemPercent: { consumers: consumers.serverSystemPercent, pageReads: pagesResult.serverSystemPercent },
    loadCpuPercent: { consumers: consumers.loadCpuPercent, pageReads: pagesResult.loadCpuPercent },
    responseBytes: { consumers: consumers.meanResponseBytes, pageReads: pagesResult.meanResponseBytes },
    groupTotalItemsProcessed: info.totalItemsProcessed,
    emptyReads: consumers.emptyReads ?? 0,
    valid,
    ...(problems(pagesResult) ? { pageReadProblems: problems(pagesResult) } : {}),
    ...(problems(consumers) ? { consumerProblems: problems(consumers) } : {})
  })
  return { ratio, cpuConsumers, cpuPageReads, valid }
}

const medianOf = (xs: ReadonlyArray<number | undefined>) => {
  const known = xs.filter((x): x is number => x !== undefined)
  return known.length === 0 ? undefined : round(median(known), 3)
}

/**
 * `reps` reps, the order of the two loads swapped each time (the shared machine's load moves within a run),
 * then the medians against the target.
 */
export const measureThroughput = async (node: VellumNode, options: ThroughputOptions): Promise<boolean> => {
  const reps: Array<Rep> = []
  for (let rep = 0; rep < options.reps; rep++) reps.push(await runRep(node, options, rep, rep % 2 === 0))
  const ratio = medianOf(reps.map((r) => r.ratio)) ?? 0
  const cpuConsumers = medianOf(reps.map((r) => r.cpuConsumers))
  const cpuPageReads = medianOf(reps.map((r) => r.cpuPageReads))
  print({
    bench: "consumers-vs-page-reads-median",
    reps: reps.length,
    ratio,
    ratios: reps.map((r) => r.ratio),
    target: TARGET_RATIO,
    met: ratio >= TARGET_RATIO,
    serverCpuUsPerEvent: { consumers: cpuConsumers, pageReads: cpuPageReads },
    cpuRatio:
      cpuConsumers === undefined || cpuPageReads === undefined ? undefined : round(cpuPageReads / cpuConsumers, 3),
    valid: reps.every((r) => r.valid)
  })
  return reps.every((r) => r.valid)
}
