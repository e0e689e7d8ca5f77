/**
 * Swarm options: every seed picks its own configuration (TigerBeetle's swarm testing / FoundationDB's
 * buggified knobs) — tiny chunks and memtables so rollovers, flushes and merges happen in every run,
 * sometimes a degenerate stream hash so collisions are constant, and its own fault mix.
 */
import type { MemoryDiskFaults, Prng } from "@vellum/platform"
import type { HashFn } from "@vellum/storage"

export interface SimOptions {
  readonly chunkSize: number
  readonly memtableMaxEntries: number
  /** Size chunk files to their full data area up front (the production default). */
  readonly preallocateChunks: boolean
  /** A 2-bit stream hash: almost every index lookup meets collisions. */
  readonly weakHash: boolean
  readonly clients: number
  readonly streamsPerClient: number
  /** Node lifetimes; every one but the last ends in a crash. */
  readonly incarnations: number
  /** Client operations per client per lifetime, at most. */
  readonly opsPerIncarnation: number
  /** Scheduler steps before a crash is injected (drawn per lifetime between these). */
  readonly crashAfterSteps: readonly [number, number]
  readonly thinkTimeMs: number
  readonly faults: MemoryDiskFaults | undefined
  /** A disk size limit for the first lifetimes (disk full), lifted by the "operator" after it bites. */
  readonly capacityBytes: number | undefined
  readonly maxEventSize: number
}

export const weakHash: HashFn = (stream) => {
  let h = 0
  for (let i = 0; i < stream.length; i++) h = (h * 31 + stream.charCodeAt(i)) | 0
  return { hi: 0, lo: (h >>> 0) & 3 }
}

export const chooseOptions = (prng: Prng): SimOptions => {
  const faulty = prng.chance(0.6)
  return {
    chunkSize: prng.pick([512, 1024, 2048, 4096, 16384]),
    memtableMaxEntries: prng.pick([2, 4, 16, 64, 1000]),
    preallocateChunks: prng.chance(0.5),
    weakHash: prng.chance(0.25),
    clients: prng.int(1, 5),
    streamsPerClient: prng.int(1, 3),
    incarnations: prng.int(1, 6),
    opsPerIncarnation: prng.int(10, 60),
    crashAfterSteps: [prng.int(50, 500), prng.int(500, 20_000)],
    thinkTimeMs: prng.pick([0, 1, 5, 20]),
    faults: faulty
      ? {
        readError: prng.pick([0, 0.001, 0.01]),
        writeError: prng.pick([0, 0.001, 0.005]),
        syncError: prng.pick([0, 0.001, 0.005]),
        bitFlipOnRead: prng.pick([0, 0.001, 0.01]),
        latencyMs: { min: 0, max: prng.pick([1, 5, 20]) },
        latencyChance: prng.pick([0, 0.1, 0.5])
      }
      : undefined,
    capacityBytes: prng.chance(0.1) ? prng.int(20_000, 200_000) : undefined,
    maxEventSize: 4000
  }
}
