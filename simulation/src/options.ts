/**
 * Swarm options: every seed picks its own configuration (TigerBeetle's swarm testing / FoundationDB's
 * buggified knobs) — tiny chunks and memtables so rollovers, flushes and merges happen in every run,
 * sometimes a degenerate stream hash so collisions are constant, its own fault mix, and how often (if at
 * all) the operator scavenges.
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
  /** The operator scavenges while clients run (undefined: never, so the strict checks stay exercised). */
  readonly scavenge: ScavengeOperatorOptions | undefined
  /**
   * The persistent subscriptions workload runs beside the clients (subscriptions/subsWorkload.ts; over HTTP
   * only, where the node runs the service).
   */
  readonly subscriptions: boolean
  /**
   * The projections workload runs beside the clients (projections/projectionsWorkload.ts; over HTTP only,
   * where the node runs the service).
   */
  readonly projections: boolean
  /**
   * How far acknowledged data may lie past the synced writer checkpoint (undefined: the node's default, which
   * the sim's small chunks never reach, so the checkpoint is synced only at chunk completions and stops).
   */
  readonly checkpointLagBytes: number | undefined
  /** Crashes may be followed by damage at rest to acknowledged data (damageAtRest.ts). */
  readonly damageAtRest: boolean
}

export interface ScavengeOperatorOptions {
  /** Client operations between two operator actions (drawn between these). */
  readonly opsBetween: readonly [number, number]
}

export const weakHash: HashFn = (stream) => {
  let h = 0
  for (let i = 0; i < stream.length; i++) h = (h * 31 + stream.charCodeAt(i)) | 0
  return { hi: 0, lo: (h >>> 0) & 3 }
}

export const chooseOptions = (prng: Prng): SimOptions => {
  const faulty = prng.chance(0.6)
  const chunkSize = prng.pick([512, 1024, 2048, 4096, 16384])
  const memtableMaxEntries = prng.pick([2, 4, 16, 64, 1000])
  const preallocateChunks = prng.chance(0.5)
  const weakHash = prng.chance(0.25)
  return {
    chunkSize,
    memtableMaxEntries,
    preallocateChunks,
    weakHash,
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
    maxEventSize: 4000,
    // Drawn last, in this order: the choices above stay what they were for every seed.
    scavenge: scavengeWith(prng, weakHash),
    subscriptions: prng.chance(SubscriptionsShare),
    projections: prng.chance(ProjectionsShare),
    checkpointLagBytes: prng.pick([undefined, undefined, 0, 300, 2000]),
    damageAtRest: prng.chance(0.3)
  }
}

/** The share of swarm seeds that run the persistent subscriptions workload. */
export const SubscriptionsShare = 0.2

/** The share of swarm seeds that run the projections workload (drawn after every other choice). */
export const ProjectionsShare = 0.2

/**
 * A seed's options as it runs: with the subscriptions workload, chunks of at least 8 KiB, since one record
 * holds every group's definition (a few hundred bytes each) and a record never spans chunks; likewise with
 * the projections workload (a definition record holds the query, a checkpoint the state).
 */
export const fitted = (options: SimOptions): SimOptions =>
  (options.subscriptions || options.projections) && options.chunkSize < 8192 ? { ...options, chunkSize: 8192 } : options

/** Seeds with the 2-bit stream hash scavenge too (seed 42 found index execution dropping epoch entries). */
export const scavengeWithWeakHash = true

const scavengeWith = (prng: Prng, weakHash: boolean): ScavengeOperatorOptions | undefined => {
  const wanted = prng.chance(0.7)
  const opsBetween = [prng.int(3, 8), prng.int(10, 40)] as const
  return wanted && (scavengeWithWeakHash || !weakHash) ? { opsBetween } : undefined
}
