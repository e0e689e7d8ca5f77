/**
 * The memory part of `npm run bench:projections`, on a node of its own (fresh data, its V8 inspector on a
 * private port, glibc's mmap threshold as `npm start` sets it): a log of 1,000 events, then K continuous
 * counting projections created over it, each left idle once it has read them. The used heap (after full
 * collections) and the RSS are taken before the first create and once every projection has caught up; the
 * line gives the growth per projection in MiB against the target.
 */
import { print } from "./benchSupport.js"
import { round } from "./httpPlan.js"
import { freePort, startVellum, type VellumNode } from "./httpProcesses.js"
import { COUNTING_QUERY } from "./projectionsCatchUp.js"
import { createContinuous, prefillCategories, timeToProcess } from "./projectionsHttp.js"
import { growthPerUnit, sampleMemory } from "./subscriptionsMemory.js"

/** Memory per idle running user projection, at most, in MiB (issue 21's target). */
export const TARGET_MIB_PER_PROJECTION = 10
const EVENTS = 1_000
const MiB = 1024 * 1024

export interface ProjectionMemoryOptions {
  readonly authorization: string
  readonly dataDir: string
  readonly nodeArgs: ReadonlyArray<string>
  readonly projections: number
}

/** Measures K idle projections on a node of its own; answers whether every step succeeded. */
export const measureIdleProjections = async (options: ProjectionMemoryOptions): Promise<boolean> => {
  const { authorization, projections } = options
  const inspectPort = await freePort()
  let node: VellumNode | undefined
  try {
    node = await startVellum(
      await freePort(),
      ["--db", options.dataDir, ...options.nodeArgs],
      { MALLOC_MMAP_THRESHOLD_: "131072" },
      [`--inspect=127.0.0.1:${inspectPort}`]
    )
    const { origin } = node
    await prefillCategories(origin, authorization, { events: EVENTS, streams: 10, categories: 2 })
    const before = await sampleMemory(inspectPort, node.pid)
    const began = performance.now()
    for (let k = 0; k < projections; k++) await createContinuous(origin, authorization, `idle-${k}`, COUNTING_QUERY)
    for (let k = 0; k < projections; k++) await timeToProcess(origin, authorization, `idle-${k}`, EVENTS, began)
    const createsPerSec = round(projections / ((performance.now() - began) / 1000), 1)
    const after = await sampleMemory(inspectPort, node.pid)
    const { heapMiB, rssMiB } = growthPerUnit(before, after, projections)
    print({
      bench: "idle-projection-memory",
      projections,
      createsPerSec,
      heapUsedMiB: { before: round(before.heapUsedBytes / MiB, 1), after: round(after.heapUsedBytes / MiB, 1) },
      residentMiB: {
        before: before.residentBytes === undefined ? undefined : round(before.residentBytes / MiB, 1),
        after: after.residentBytes === undefined ? undefined : round(after.residentBytes / MiB, 1)
      },
      externalMiB: { before: round(before.externalBytes / MiB, 1), after: round(after.externalBytes / MiB, 1) },
      heapMiBPerProjection: heapMiB,
      residentMiBPerProjection: rssMiB,
      target: TARGET_MIB_PER_PROJECTION,
      met: Math.max(heapMiB, rssMiB ?? 0) <= TARGET_MIB_PER_PROJECTION
    })
    return true
  } catch (e) {
    console.error(e instanceof Error ? e.message : e)
    if (node !== undefined) console.error(`node output (last lines):\n${node.outputTail()}`)
    return false
  } finally {
    if (node !== undefined) await node.shutdown(authorization)
  }
}
