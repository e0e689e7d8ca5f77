/**
 * The keep-up part of `npm run bench:projections`: `bench:http`'s 100-event appends (16 clients, closed loop,
 * 1,000 streams of one category) on the compiled node, first with every projection stopped (the append rate
 * without them: the ceiling), then with `$by_category` and `$by_event_type` running, their statistics sampled
 * every 250 ms meanwhile. Per projection: its processing rate beside the append rate of the same window, and
 * its lag in events and in seconds of writes.
 *
 * A sample's lag in events is the log's committed end (from `/metrics`) less the projection's position, in
 * bytes, over the log bytes per appended event of the whole run (which counts the links the projections
 * write); the node's own `lagEvents` stops at 1,000, so it is printed beside it, with `lagMilliseconds` (the
 * age of the oldest event not yet processed). The statistics are read before the committed end, so a
 * sample's lag errs high.
 */
import { print } from "./benchSupport.js"
import { quantile, round, type LoadResult } from "./httpPlan.js"
import { runLoadProcess, type VellumNode } from "./httpProcesses.js"
import {
  committedPosition,
  enableProjection,
  eventsBehind,
  readProjection,
  timeToProcess,
  writerBetween,
  writerFigures,
  type ProjectionFigures
} from "./projectionsHttp.js"

const PROJECTIONS = ["$by_category", "$by_event_type"] as const
const CONNECTIONS = 16
const EVENTS_PER_APPEND = 100
const SAMPLE_MS = 250
/** Lag, at most, in seconds of writes (issue 21's target). */
export const TARGET_LAG_SECONDS = 1

export interface KeepUpOptions {
  readonly authorization: string
  readonly warmupSec: number
  readonly durationSec: number
}

interface Sample {
  readonly atMs: number
  readonly committed: number
  readonly figures: ReadonlyArray<ProjectionFigures>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Events the load appended, over warm-up and window (every 201 carried one append). */
const appendedBy = (r: LoadResult) => (r.statuses["201"] ?? 0) * EVENTS_PER_APPEND

const appendLoad = (node: VellumNode, options: KeepUpOptions) =>
  runLoadProcess({
    origin: node.origin,
    authorization: options.authorization,
    connections: CONNECTIONS,
    warmupSec: options.warmupSec,
    durationSec: options.durationSec,
    ...(node.pid !== undefined ? { serverPid: node.pid } : {}),
    kind: "append",
    eventsPerAppend: EVENTS_PER_APPEND,
    streamPrefix: "load",
    streams: 1000
  })

const loadLine = (r: LoadResult) => ({
  eventsPerSec: Math.round(r.reqPerSec * EVENTS_PER_APPEND),
  p50Ms: r.p50Ms,
  p99Ms: r.p99Ms,
  serverCpuUsPerRequest: r.serverCpuUsPerRequest,
  errors: r.errors,
  non2xx: r.non2xx
})

const stats = (xs: ReadonlyArray<number>, digits: number) => {
  const sorted = Float64Array.from(xs).sort()
  return { max: round(quantile(sorted, 1), digits), p99: round(quantile(sorted, 0.99), digits) }
}

/** Runs both loads and prints one line per projection; answers whether the run was valid. */
export const measureKeepUp = async (node: VellumNode, options: KeepUpOptions): Promise<boolean> => {
  const { authorization } = options
  const { origin } = node
  const without = await appendLoad(node, options)
  print({ bench: "keep-up-appends-without-projections", ...loadLine(without) })
  let appended = appendedBy(without)
  // Both projections start from the log's start and catch up with the first load's events before the second.
  for (const name of PROJECTIONS) {
    const began = performance.now()
    await enableProjection(origin, authorization, name)
    const { secs, eventsPerSec } = await timeToProcess(origin, authorization, name, appended, began)
    print({ bench: "keep-up-first-catch-up", projection: name, events: appended, secs, eventsPerSec })
  }
  const writerBefore = await writerFigures(origin, authorization)
  const samples: Array<Sample> = []
  let loading = true
  const sampler = (async () => {
    while (loading) {
      const atMs = performance.now()
      const figures = await Promise.all(PROJECTIONS.map((name) => readProjection(origin, authorization, name)))
      samples.push({ atMs, figures, committed: await committedPosition(origin, authorization) })
      await sleep(Math.max(0, SAMPLE_MS - (performance.now() - atMs)))
    }
  })()
  const withProjections = await appendLoad(node, options)
  const loadEndMs = performance.now()
  loading = false
  await sampler
  const appendedWith = appendedBy(withProjections)
  appended += appendedWith
  const drain = await Promise.all(
    PROJECTIONS.map((name) => timeToProcess(origin, authorization, name, appended, loadEndMs))
  )
  const writerAfter = await writerFigures(origin, authorization)
  const bytesPerEvent = (writerAfter.committed - writerBefore.committed) / appendedWith
  const appendRate = withProjections.reqPerSec * EVENTS_PER_APPEND
  print({
    bench: "keep-up-appends-with-projections",
    ...loadLine(withProjections),
    ratioToWithout: without.reqPerSec === 0 ? 0 : round(withProjections.reqPerSec / without.reqPerSec, 3),
    logBytesPerAppendedEvent: Math.round(bytesPerEvent),
    // Over the load and the drain: every durable batch of the node (appends, links, checkpoints).
    writer: writerBetween(writerBefore, writerAfter, appendedWith)
  })
  const window = samples.filter((s) => s.atMs >= loadEndMs - options.durationSec * 1000 && s.atMs <= loadEndMs)
  PROJECTIONS.forEach((name, i) => {
    const first = window[0]!
    const last = window[window.length - 1]!
    const processed = last.figures[i]!.eventsProcessedAfterRestart - first.figures[i]!.eventsProcessedAfterRestart
    const processingRate = processed / ((last.atMs - first.atMs) / 1000)
    const lagEvents = window.map((s) => eventsBehind(s.committed, s.figures[i]!.commit, bytesPerEvent))
    const lagEventStats = stats(lagEvents, 0)
    const lagSeconds = stats(
      lagEvents.map((events) => events / appendRate),
      3
    )
    print({
      bench: "keep-up",
      projection: name,
      samples: window.length,
      appendEventsPerSec: Math.round(appendRate),
      processingEventsPerSec: Math.round(processingRate),
      ratio: appendRate === 0 ? 0 : round(processingRate / appendRate, 3),
      lagEvents: lagEventStats,
      lagSecondsOfWrites: lagSeconds,
      nodeLagEventsMax: Math.max(...window.map((s) => s.figures[i]!.lagEvents)),
      nodeLagMilliseconds: stats(
        window.map((s) => s.figures[i]!.lagMilliseconds),
        0
      ),
      drainSecsAfterLoad: drain[i]!.secs,
      target: TARGET_LAG_SECONDS,
      met: lagSeconds.max < TARGET_LAG_SECONDS
    })
  })
  return [without, withProjections].every((r) => r.errors + r.non2xx === 0) && window.length > 1
}
