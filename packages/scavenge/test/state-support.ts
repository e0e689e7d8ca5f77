/**
 * Shared by the state tests: a small state in a fixed directory with every value kind (`fill`) and a dump of
 * everything observable about it (`dump`), and a Disk wrapper that cuts the power after a budget of mutating
 * operations, with a hook called before every operation (to sample the state's memory mid-compaction).
 */
import { Disk, DiskError, checkDiskOps, type DiskService, type MemoryDisk } from "@vellum/platform"
import { Effect } from "effect"
import {
  openScavengeState,
  type Checkpoint,
  type OriginalStreamData,
  type ScavengeState,
  type ScavengeStateOptions,
  type StateCorrupt
} from "../src/state/index.js"

/** A Disk that loses power (every later call fails) after `budget` mutating operations. */
export const MUTATING = new Set(["write", "append", "truncate", "sync", "syncDir", "rename", "remove", "open"])
export const cutDisk = (
  inner: DiskService,
  cut: { used: number; budget: number },
  onOp?: (op: string) => void
): DiskService => {
  const gate = (op: string, path: string) =>
    Effect.suspend(() => {
      onOp?.(op)
      if (cut.used >= cut.budget)
        return Effect.fail(new DiskError({ reason: "IOError", op, path, message: "power cut" }))
      if (MUTATING.has(op)) cut.used++
      return Effect.void
    })
  return checkDiskOps(inner, gate)
}

/** Where `open` keeps the state (the node's place for it), its files, and a cache that holds it all. */
export const DIR = "/db/index/scavenging"
export const JOURNAL = `${DIR}/scavenge-state.journal`
export const SNAPSHOT = `${DIR}/scavenge-state.snapshot`
export const OPTIONS: ScavengeStateOptions = { pageSize: 512, cacheBytes: 1 << 20 }
export const sp = { position: 4096, number: 3, effectiveNowMicros: 1_700_000_000_000_000, threshold: -1 }
// long.MaxValue as JS holds it (the nearest double, 2^63).
export const LONG_MAX = 2 ** 63

export const open = (
  mem: MemoryDisk,
  options: ScavengeStateOptions = OPTIONS
): Effect.Effect<ScavengeState, DiskError | StateCorrupt> =>
  Effect.provideService(openScavengeState(DIR, options), Disk, mem.service)

export const original = (
  status: OriginalStreamData["status"],
  overrides: Partial<OriginalStreamData> = {}
): OriginalStreamData => ({
  isTombstoned: false,
  maxAgeSeconds: undefined,
  maxCount: undefined,
  truncateBefore: undefined,
  discardPoint: 0,
  maybeDiscardPoint: 0,
  status,
  ...overrides
})

/** The row counts of `counts()` (not the sizes of files and caches, which a reopen changes). */
export const rowCounts = (s: ScavengeState) => {
  const { originalStreams, activeStreams, metastreams, chunkWeights, chunkTimeRanges } = s.counts()
  return { originalStreams, activeStreams, metastreams, chunkWeights, chunkTimeRanges }
}

/** Everything observable about the state, for deep comparison. */
export const dump = (s: ScavengeState, names: ReadonlyArray<string>, chunks: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    return {
      checkpoint: s.checkpoint(),
      originals: yield* Effect.forEach(names, (n) => Effect.map(s.originalStream(n), (v) => [n, v])),
      metastreams: yield* Effect.forEach(names, (n) => Effect.map(s.metastream(`$$${n}`), (v) => [n, v])),
      weights: s.allChunkWeights(),
      ranges: chunks.map((c) => [c, s.chunkTimeRange(c)]),
      active: (yield* s.activeStreams(undefined, 1_000_000)).map(([n]) => n),
      counts: rowCounts(s)
    }
  })

/** One committed transaction with every value kind (LONG_MAX, negative and fractional numbers included). */
export const fill = (s: ScavengeState, checkpoint: Checkpoint = { stage: "Calculating", sp, doneStream: "b" }) =>
  s.transaction((tx) =>
    Effect.suspend(() => {
      tx.setOriginalStream(
        "a",
        original("Active", {
          maxAgeSeconds: 60,
          maxCount: 3,
          truncateBefore: LONG_MAX,
          discardPoint: 2,
          maybeDiscardPoint: 5
        })
      )
      tx.setOriginalStream("b", original("Archived", { isTombstoned: true, discardPoint: LONG_MAX }))
      tx.setOriginalStream("c", original("Spent", { truncateBefore: 0 }))
      tx.setMetastream("$$a", { isTombstoned: false, discardPoint: 4 })
      tx.setMetastream("$$b", { isTombstoned: true, discardPoint: 0 })
      tx.addChunkWeight(0, 2)
      tx.addChunkWeight(0, 1.5)
      tx.addChunkWeight(3, 0)
      tx.setChunkTimeRange(1, { minMicros: -1, maxMicros: 1_700_000_000_123_456 })
      return tx.commit(checkpoint)
    })
  )

/** The stream names and chunks `fill` touches, plus one it does not. */
export const NAMES = ["a", "b", "c", "d"]
export const CHUNKS = [0, 1, 2, 3]
