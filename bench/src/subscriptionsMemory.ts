/**
 * The idle-group memory part of `npm run bench:subscriptions`, on a node of its own (fresh data, its V8
 * inspector open on a private port, glibc's mmap threshold as `npm start` sets it): G groups on G distinct
 * streams of a few events each, then G groups on one stream, each group left idle once it has read its
 * events. The node's used heap (after full collections through the inspector) and resident set size (/proc)
 * are taken on a fresh start before any group, after each batch of creates, and on a fresh start with every
 * group loaded from its definition; each line gives the growth per group in MiB against the target.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { print } from "./benchSupport.js"
import { appendBody, round } from "./httpPlan.js"
import { appendHeaders, expectStatus } from "./httpPrefill.js"
import { freePort, startVellum, type VellumNode } from "./httpProcesses.js"
import { residentBytes } from "./procStat.js"
import { createGroup, openInspector } from "./subscriptionsHttp.js"

const MiB = 1024 * 1024
/** Idle memory per group, at most (issue 20's target). */
export const TARGET_MIB_PER_GROUP = 1
const EVENTS_PER_STREAM = 5
const SHARED_STREAM = "bench-idle-shared"
const SETTLE_MS = 3_000

/**
 * The bytes the node's chunk files take on disk (allocated blocks: a chunk file is created at its full size)
 * — a fresh start reads the log back, which shows in its RSS.
 */
const logBytes = (dataDir: string) =>
  fs
    .readdirSync(dataDir)
    .filter((name) => name.startsWith("chunk-"))
    .reduce((sum, name) => sum + fs.statSync(path.join(dataDir, name)).blocks * 512, 0)

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface MemoryOptions {
  readonly authorization: string
  readonly dataDir: string
  readonly nodeArgs: ReadonlyArray<string>
  readonly groups: number
}

export interface MemorySample {
  readonly heapUsedBytes: number
  readonly residentBytes: number | undefined
  /** Memory outside V8's heap that V8 knows of (Buffers among it). */
  readonly externalBytes: number
}

/** Growth per group from `before` to `after`, in MiB (3 decimals). */
export const mibPerGroup = (before: number, after: number, groups: number) => round((after - before) / MiB / groups, 3)

/** Heap and RSS growth from `before` to `after`, in MiB per each of `count` (RSS undefined where unknown). */
export const growthPerUnit = (before: MemorySample, after: MemorySample, count: number) => ({
  heapMiB: mibPerGroup(before.heapUsedBytes, after.heapUsedBytes, count),
  rssMiB:
    before.residentBytes === undefined || after.residentBytes === undefined
      ? undefined
      : mibPerGroup(before.residentBytes, after.residentBytes, count)
})

/** Runs `task(0..count-1)` with `width` at a time. */
const inParallel = async (count: number, width: number, task: (k: number) => Promise<void>) => {
  let next = 0
  const worker = async () => {
    while (next < count) await task(next++)
  }
  await Promise.all(Array.from({ length: width }, worker))
}

const idleStream = (k: number) => `bench-idle-${k}`

const appendFew = async (origin: string, authorization: string, stream: string, salt: string, first: number) => {
  const response = await fetch(`${origin}/streams/${stream}`, {
    method: "POST",
    headers: appendHeaders(authorization),
    body: appendBody(salt, first, EVENTS_PER_STREAM)
  })
  await expectStatus(response, 201, `append to ${stream}`)
  await response.arrayBuffer()
}

/** The node with its inspector: a full collection after a pause, then the used heap and the RSS. */
export const sampleMemory = async (inspectPort: number, pid: number | undefined): Promise<MemorySample> => {
  const inspector = await openInspector(inspectPort)
  try {
    await sleep(SETTLE_MS)
    await inspector.collectGarbage()
    await inspector.collectGarbage()
    const heap = await inspector.heapUsage()
    const usage = await inspector.memoryUsage()
    return { heapUsedBytes: heap.usedSize, residentBytes: residentBytes(pid), externalBytes: usage.external }
  } finally {
    inspector.close()
  }
}

const printSample = (
  stage: string,
  groups: number,
  baseline: MemorySample,
  now: MemorySample,
  extra: Record<string, unknown> = {}
) => {
  const { heapMiB, rssMiB } = growthPerUnit(baseline, now, groups)
  print({
    bench: "idle-group-memory",
    stage,
    groups,
    heapUsedMiB: round(now.heapUsedBytes / MiB, 1),
    residentMiB: now.residentBytes === undefined ? undefined : round(now.residentBytes / MiB, 1),
    externalMiB: round(now.externalBytes / MiB, 1),
    heapMiBPerGroup: heapMiB,
    residentMiBPerGroup: rssMiB,
    target: TARGET_MIB_PER_GROUP,
    met: Math.max(heapMiB, rssMiB ?? 0) <= TARGET_MIB_PER_GROUP,
    ...extra
  })
}

/** Measures idle groups on a node of its own; answers whether every step succeeded. */
export const measureIdleGroups = async (options: MemoryOptions): Promise<boolean> => {
  const { authorization, groups } = options
  const start = async () => {
    const inspectPort = await freePort()
    // glibc's allocator as `npm start` sets it (freed buffers go back to the system): RSS is the figure here.
    const node = await startVellum(
      await freePort(),
      ["--db", options.dataDir, ...options.nodeArgs],
      { MALLOC_MMAP_THRESHOLD_: "131072" },
      [`--inspect=127.0.0.1:${inspectPort}`]
    )
    return { node, inspectPort }
  }
  let current: { node: VellumNode; inspectPort: number } | undefined = await start()
  try {
    const salt = crypto.randomBytes(4).toString("hex")
    const { origin } = current.node
    await inParallel(groups, 8, (k) => appendFew(origin, authorization, idleStream(k), salt, k * EVENTS_PER_STREAM))
    await appendFew(origin, authorization, SHARED_STREAM, salt, groups * EVENTS_PER_STREAM)
    // The baseline from a fresh start on the same data, as the last figure is.
    await current.node.shutdown(authorization)
    current = await start()
    const baseline = await sampleMemory(current.inspectPort, current.node.pid)
    printSample("fresh start, no groups", 1, baseline, baseline, { logMiB: round(logBytes(options.dataDir) / MiB, 1) })

    const create = async (stage: string, group: (k: number) => [string, string], created: number) => {
      const began = performance.now()
      const node = current!.node
      // Creates run one at a time in the node (each writes the whole definitions record); 4 in flight keep it busy.
      await inParallel(groups, 4, (k) => createGroup(node.origin, authorization, ...group(k), {}))
      const createsPerSec = round(groups / ((performance.now() - began) / 1000), 1)
      printSample(stage, created, baseline, await sampleMemory(current!.inspectPort, node.pid), { createsPerSec })
    }
    await create(`${groups} groups on distinct streams`, (k) => [idleStream(k), "idle"], groups)
    await create(`and ${groups} groups on one stream`, (k) => [SHARED_STREAM, `idle-${k}`], 2 * groups)

    await current.node.shutdown(authorization)
    current = await start()
    // Each create wrote the whole definitions record, and a start reads the log back: RSS shows both.
    printSample(
      "fresh start, every group loaded",
      2 * groups,
      baseline,
      await sampleMemory(current.inspectPort, current.node.pid),
      { logMiB: round(logBytes(options.dataDir) / MiB, 1) }
    )
    return true
  } catch (e) {
    console.error(e instanceof Error ? e.message : e)
    if (current !== undefined) console.error(`node output (last lines):\n${current.node.outputTail()}`)
    return false
  } finally {
    if (current !== undefined) await current.node.shutdown(authorization)
  }
}
