/**
 * Runs a random workload on a real store (a final scavenge is added), checking every scavenge against
 * the reference model (scavenger-check.ts) and carrying the model's state from run to run. The last
 * scavenge can be run by the caller instead (`last`), e.g. interrupted under a moving clock.
 */
import { expect } from "vitest"
import { Effect } from "effect"
import { MemoryDisk } from "@vellum/platform"
import { RecordKind, type StorageConfig } from "@vellum/storage"
import type { ModelState } from "./model/index.js"
import { checkRun, observe, streamNames, type RunCheck } from "./scavenger-check.js"
import {
  closeNode,
  deleteState,
  logRecords,
  openNode,
  scavenge,
  settings,
  storageConfig,
  WrittenLog,
  type Node,
  type NodeOptions
} from "./scavenger-support.js"
import { apply, collide, ManualClock, type Op, type Workload } from "./scavenger-workload.js"

export interface RunOptions {
  readonly disableMerging: boolean
  /** The last point is scavenged to again from scratch (state deleted): the log before it must not change. */
  readonly rerun: boolean
  readonly unsafeIgnoreHardDeletes?: boolean
}

/** A scavenge about to run: everything written so far is flushed to index tables, synced and observed. */
export interface ScavengeStep {
  readonly node: Node
  readonly config: StorageConfig
  readonly nodeOptions: NodeOptions
  readonly written: WrittenLog
  readonly before: RunCheck["before"]
  readonly prior: ModelState | undefined
  readonly threshold: number
  readonly unsafeIgnoreHardDeletes: boolean
  /** The workload's clock: its time now is the time the run's scavenge point will take. */
  readonly clock: ManualClock
}

/** Runs one scavenge and checks it; answers the node to go on with and the model state to carry. */
export type ScavengeAndCheck = (
  step: ScavengeStep
) => Effect.Effect<{ readonly node: Node; readonly state: ModelState }, unknown>

/** An uninterrupted run to a new point, checked against the model. */
export const scavengeAndCheck: ScavengeAndCheck = (step) =>
  Effect.gen(function* () {
    const { node, written } = step
    expect((yield* scavenge(node, { threshold: step.threshold })).result).toBe("Success")
    yield* written.sync(node.store)
    const checked = yield* checkRun({ ...step, written: written.records })
    return { node, state: checked.state }
  })

export const runWorkload = (workload: Workload, options: RunOptions, last: ScavengeAndCheck = scavengeAndCheck) => {
  const clock = new ManualClock()
  return Effect.withClock(
    Effect.gen(function* () {
      const config = storageConfig({
        chunkSize: workload.chunkSize,
        ...(workload.collide ? { streamHash: collide } : {})
      })
      const unsafeIgnoreHardDeletes = options.unsafeIgnoreHardDeletes === true
      const nodeSettings = { ...settings, disableMerging: options.disableMerging, unsafeIgnoreHardDeletes }
      const nodeOptions = { settings: nodeSettings, stateCacheBytes: workload.stateCacheBytes ?? 1 << 20 }
      let node = yield* openNode(new MemoryDisk(), config, nodeOptions)
      const written = new WrittenLog()
      let prior: ModelState | undefined
      const lastThreshold = workload.ops.filter((o) => o.k === "scavenge").at(-1)?.threshold ?? -1
      const ops: ReadonlyArray<Op> = [...workload.ops, { k: "scavenge", threshold: lastThreshold }]
      for (const [i, op] of ops.entries()) {
        if (op.k !== "scavenge") {
          yield* Effect.either(apply(node, clock, op))
          continue
        }
        // Everything written so far goes to index tables (the memtable is not scavenged).
        yield* node.store.flushIndex
        yield* written.sync(node.store)
        const reads = yield* observe(node, streamNames(written.records))
        const positions = new Set((yield* logRecords(node.store)).map((r) => r.logPosition))
        const step: ScavengeStep = {
          node,
          config,
          nodeOptions,
          written,
          before: { ...reads, positions },
          prior,
          threshold: op.threshold,
          unsafeIgnoreHardDeletes,
          clock
        }
        const done = yield* (i === ops.length - 1 ? last : scavengeAndCheck)(step)
        node = done.node
        prior = done.state
      }
      if (options.rerun && lastThreshold < 0) {
        const before = (yield* logRecords(node.store)).filter(
          (r) => r.logPosition < written.records.filter((r) => r.kind === RecordKind.ScavengePoint).at(-1)!.logPosition
        )
        yield* closeNode(node)
        yield* deleteState(node.mem, config)
        node = yield* openNode(node.mem, config, nodeOptions)
        expect((yield* scavenge(node, { syncOnly: true })).result).toBe("Success")
        const end = before.length === 0 ? 0 : before[before.length - 1]!.logPosition + 1
        expect(
          (yield* logRecords(node.store)).filter((r) => r.logPosition < end),
          "a second run to the same point"
        ).toEqual(before)
      }
      yield* closeNode(node)
    }),
    clock
  )
}
