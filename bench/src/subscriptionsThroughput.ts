/**
 * The throughput part of `npm run bench:subscriptions`: 16 competing consumers of one group, each pulling 20
 * messages with `embed=body` and acking them with one `ackAll` POST, against 16 clients reading 20-event pages
 * of the same stream with `embed=body` (bench:http's page reads), one after the other on the same node.
 */
import { print } from "./benchSupport.js"
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
}

const problems = (r: LoadResult) =>
  r.errors > 0 || r.non2xx > 0 ? { statuses: r.statuses, firstError: r.firstError } : undefined

/** Server CPU (µs, from /proc) per event: per request, times requests, over the events they carried. */
const cpuPerEvent = (r: LoadResult, events: number) =>
  r.serverCpuUsPerRequest === undefined || events === 0
    ? undefined
    : round((r.serverCpuUsPerRequest * r.requests) / events, 1)

/** Runs both loads against `node` (its stream `bench-read-0` holds `events` events) and prints one line. */
export const measureThroughput = async (node: VellumNode, options: ThroughputOptions): Promise<boolean> => {
  const { authorization, warmupSec, durationSec } = options
  const stream = readStreamName(0)
  const base = { origin: node.origin, authorization, connections: CONSUMERS, warmupSec, durationSec }
  const serverPid = node.pid === undefined ? {} : { serverPid: node.pid }
  const pages = await runLoadProcess({
    ...base,
    ...serverPid,
    kind: "read",
    paths: streamPagePaths(1, options.events),
    accept: ATOM_JSON
  })
  await createGroup(node.origin, authorization, stream, GROUP, THROUGHPUT_SETTINGS)
  const consumers = await runLoadProcess({
    ...base,
    ...serverPid,
    kind: "consume",
    path: `${groupPath(stream, GROUP)}/${BATCH}?embed=body`,
    accept: COMPETING_JSON
  })
  const { info } = await readGroupInfo(node.origin, authorization, stream, GROUP)
  const pageEventsPerSec = pages.reqPerSec * PAGE_SIZE
  const consumedEvents = consumers.events ?? 0
  const consumerEventsPerSec = consumedEvents / durationSec
  const ratio = pageEventsPerSec === 0 ? 0 : round(consumerEventsPerSec / pageEventsPerSec, 3)
  // A group that ran out of messages hands out empty feeds: the figure is then the prefill's, not the group's.
  const ranDry = (consumers.emptyReads ?? 0) > 0
  const valid = pages.errors + pages.non2xx + consumers.errors + consumers.non2xx === 0 && !ranDry
  print({
    bench: "consumers-vs-page-reads",
    connections: CONSUMERS,
    batch: BATCH,
    groupSettings: THROUGHPUT_SETTINGS,
    consumerEventsPerSec: Math.round(consumerEventsPerSec),
    consumerPairsPerSec: consumers.reqPerSec,
    consumerP50Ms: consumers.p50Ms,
    consumerP99Ms: consumers.p99Ms,
    pageReadEventsPerSec: Math.round(pageEventsPerSec),
    pageReadP50Ms: pages.p50Ms,
    pageReadP99Ms: pages.p99Ms,
    ratio,
    target: TARGET_RATIO,
    met: ratio >= TARGET_RATIO,
    serverCpuUsPerEvent: {
      consumers: cpuPerEvent(consumers, consumedEvents),
      pageReads: cpuPerEvent(pages, pages.requests * PAGE_SIZE)
    },
    serverSystemPercent: { consumers: consumers.serverSystemPercent, pageReads: pages.serverSystemPercent },
    loadCpuPercent: { consumers: consumers.loadCpuPercent, pageReads: pages.loadCpuPercent },
    responseBytes: { consumers: consumers.meanResponseBytes, pageReads: pages.meanResponseBytes },
    groupTotalItemsProcessed: info.totalItemsProcessed,
    emptyReads: consumers.emptyReads ?? 0,
    valid,
    ...(problems(pages) ? { pageReadProblems: problems(pages) } : {}),
    ...(problems(consumers) ? { consumerProblems: problems(consumers) } : {})
  })
  return valid
}
