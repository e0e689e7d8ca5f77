/**
 * Shared helpers for the transaction-log tests (log-*.test.ts): deterministic record generators, a way to
 * run log effects synchronously over a MemoryDisk, a Disk wrapper that "cuts the power" after N
 * mutating operations, and comparison helpers that work on the encoded bytes of records.
 */
import { Effect, Exit } from "effect"
import { Disk, DiskError, checkDiskOps, type DiskService, type MemoryDisk, Prng } from "@vellum/platform"
import { ByteWriter } from "../src/codec/bytes.js"
import {
  EventFlags,
  RecordKind,
  encodeRecord,
  framedLength,
  type LogRecord,
  type NewRecord
} from "../src/log/records.js"
import { openTransactionLog, type LogConfig, type TransactionLog, type WriteUnit } from "../src/log/TransactionLog.js"

export const DIR = "/db"

/** Multiplies the seed counts of the log property tests (e.g. LOG_SEEDS_SCALE=20 for a soak run). */
export const SEEDS_SCALE = Math.max(1, Number(process.env["LOG_SEEDS_SCALE"] ?? 1))

export const logConfig = (overrides: Partial<LogConfig> = {}): LogConfig => ({
  dir: DIR,
  chunkSize: 1024,
  preallocate: false,
  verifyOnOpen: true,
  cacheBytes: 1 << 20,
  ...overrides
})

/** A UUID string from 16 PRNG bytes. */
export const uuidFrom = (prng: Prng): string => {
  const hex = Array.from({ length: 16 }, () => prng.int(0, 255).toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Chunk ids for openTransactionLog: deterministic per generator. */
export const chunkIds = (seed: number): Effect.Effect<string> => {
  const prng = new Prng(seed).fork("chunk-ids")
  return Effect.sync(() => uuidFrom(prng))
}

const ALPHABET = ["a", "b", "z", "-", "$", "é", "Ω", "中", "😀", "\u0000"]

const randomName = (prng: Prng, max: number): string => {
  const n = prng.int(0, max)
  let s = ""
  for (let i = 0; i < n; i++) s += prng.pick(ALPHABET)
  return s
}

const randomBytes = (prng: Prng, n: number): Buffer => {
  const buf = Buffer.alloc(n)
  for (let i = 0; i < n; i++) buf[i] = prng.int(0, 255)
  return buf
}

/** A random record of any kind; event payloads up to `maxData` bytes. */
export const randomRecord = (prng: Prng, maxData: number): NewRecord => {
  const roll = prng.int(0, 19)
  if (roll === 0) {
    return {
      kind: RecordKind.Commit,
      transactionPosition: prng.int(0, 1e12),
      firstEventNumber: prng.int(0, 1e9),
      correlationId: uuidFrom(prng),
      timeMicros: prng.int(0, 2 ** 52)
    }
  }
  if (roll === 1) {
    return {
      kind: RecordKind.Epoch,
      epochNumber: prng.int(0, 1000),
      prevEpochPosition: prng.int(-1, 1e9),
      epochId: uuidFrom(prng),
      leaderInstanceId: uuidFrom(prng),
      timeMicros: prng.int(0, 2 ** 52)
    }
  }
  if (roll === 2) {
    return {
      kind: RecordKind.ScavengePoint,
      number: prng.int(0, 100),
      eventId: uuidFrom(prng),
      effectiveNowMicros: prng.int(0, 2 ** 52),
      threshold: prng.int(-1, 10),
      timeMicros: prng.int(0, 2 ** 52)
    }
  }
  return {
    kind: RecordKind.Event,
    // BatchEnd always: a unit of random records ends with one (tests of unit atomicity use `sealUnit`).
    flags: prng.int(0, 0x1f) | EventFlags.BatchEnd,
    eventNumber: prng.int(0, 1e6),
    createdMicros: prng.int(0, 2 ** 52),
    eventId: uuidFrom(prng),
    stream: randomName(prng, 12),
    eventType: randomName(prng, 8),
    data: randomBytes(prng, prng.int(0, maxData)),
    metadata: randomBytes(prng, prng.chance(0.3) ? prng.int(0, 16) : 0)
  }
}

/**
 * The records of one write unit as the writer seals them (planner.ts): a record of another kind than an event
 * only alone (the others of a mixed draw are dropped), BatchBegin on the first event and BatchEnd on the last
 * only — the log finds where units end by these flags (tailRecovery.ts).
 */
export const sealUnit = (records: ReadonlyArray<NewRecord>): Array<NewRecord> => {
  const events = records.length <= 1 ? [...records] : records.filter((r) => r.kind === RecordKind.Event)
  const unit = events.length === 0 ? records.slice(0, 1) : events
  return unit.map((r, i) => {
    if (r.kind !== RecordKind.Event) return r
    const bounds = (i === 0 ? EventFlags.BatchBegin : 0) | (i === unit.length - 1 ? EventFlags.BatchEnd : 0)
    return { ...r, flags: (r.flags & ~(EventFlags.BatchBegin | EventFlags.BatchEnd)) | bounds }
  })
}

/** An event record of exactly `framed` bytes on disk (framed ≥ 80). */
export const eventOfSize = (prng: Prng, framed: number): NewRecord => {
  const base = 12 + 10 + 2 + 8 + 8 + 16 + 4 + 1 + 4 + 1 + 4 + 4 // framing + header + fields + "s" + "T" + 2 lengths
  if (framed < base) throw new RangeError(`an event needs at least ${base} bytes`)
  return {
    kind: RecordKind.Event,
    flags: EventFlags.BatchBegin | EventFlags.BatchEnd,
    eventNumber: prng.int(0, 1000),
    createdMicros: 1,
    eventId: uuidFrom(prng),
    stream: "s",
    eventType: "T",
    data: randomBytes(prng, framed - base),
    metadata: Buffer.alloc(0)
  }
}

/** The framed bytes of a record at a position (what the log writes for it). */
export const bytesOf = (record: NewRecord | LogRecord, position: number): Buffer => {
  const out = new ByteWriter(framedLength(record))
  encodeRecord(out, record, position)
  return out.buf.subarray(0, out.length)
}

/**
 * A record read back equals the one written at `position`: every field, payloads byte for byte. (The
 * codec tests prove that equal fields encode to equal bytes; the crash test also compares raw bytes.)
 */
export const sameRecord = (a: LogRecord, expected: NewRecord, position: number): boolean => {
  if (a.logPosition !== position || a.kind !== expected.kind) return false
  const x = expected as unknown as Record<string, unknown>
  const y = a as unknown as Record<string, unknown>
  for (const key in x) {
    const v = x[key]
    const w = y[key]
    if (Buffer.isBuffer(v)) {
      if (!Buffer.isBuffer(w) || !v.equals(w)) return false
    } else if (v !== w) return false
  }
  return true
}

/** Runs a log effect synchronously over a Disk service; throws (with the cause) on failure. */
export const runOn = <A, E>(disk: DiskService, effect: Effect.Effect<A, E, Disk>): A =>
  Effect.runSync(Effect.provideService(effect, Disk, disk))

export const exitOn = <A, E>(disk: DiskService, effect: Effect.Effect<A, E, Disk>): Exit.Exit<A, E> =>
  Effect.runSyncExit(Effect.provideService(effect, Disk, disk))

export const openLog = (disk: DiskService, config: LogConfig, idSeed = 1): TransactionLog =>
  runOn(disk, openTransactionLog(config, chunkIds(idSeed)))

/** The records of one unit and the positions the log gave them. */
export interface Placed {
  readonly records: ReadonlyArray<NewRecord>
  readonly positions: ReadonlyArray<number>
}

/** Every record of `units`, in order, with its position. */
export const flatten = (units: ReadonlyArray<Placed>) =>
  units.flatMap((u) => u.records.map((record, k) => ({ record, position: u.positions[k]! })))

/** Writes units (prepare + write) and returns their positions; throws if the write fails. */
export const writeUnits = (log: TransactionLog, units: ReadonlyArray<WriteUnit>) => {
  const batch = log.prepare(units)
  Effect.runSync(log.write(batch))
  return batch
}

/** Every record below the writer checkpoint, scanned forward in pages of `page`. */
export const scanAll = (log: TransactionLog, page = 1000, limit = log.writerPosition()): Array<LogRecord> => {
  const out: Array<LogRecord> = []
  let from = 0
  for (let guard = 0; guard < 1_000_000; guard++) {
    const r = Effect.runSync(log.scanForward(from, limit, page))
    out.push(...r.records)
    if (r.records.length === 0 || r.reachedEnd) return out
    from = r.next
  }
  throw new Error("scanAll did not terminate")
}

/** Which Disk operation a power cut hit, for coverage statistics. */
export interface PowerCut {
  /** Mutating operations allowed before the cut. */
  budget: number
  used: number
  /** The operation that was refused (the first one past the budget). */
  cutAt: string | undefined
  /** Cut the power at the first operation this matches, whatever the budget (`position` for writes). */
  readonly when?: (op: string, path: string, position: number | undefined) => boolean
}

const MUTATING = new Set(["write", "append", "truncate", "sync", "open", "remove", "rename", "syncDir", "mkdir"])

/**
 * A Disk service over `mem.service` that counts mutating operations (writes, truncates, syncs, opens,
 * renames, removals, directory syncs) and fails every operation from the `budget`-th on with an IOError:
 * the power went off just before that operation. The test then crashes the MemoryDisk.
 */
export const powerCutDisk = (mem: MemoryDisk, cut: PowerCut): DiskService => {
  const inner = mem.service
  const gate = (op: string, path: string, position?: number): Effect.Effect<void, DiskError> =>
    Effect.suspend(() => {
      if (cut.cutAt === undefined && cut.when?.(op, path, position) === true) cut.budget = cut.used
      if (cut.used >= cut.budget) {
        cut.cutAt ??= op
        return Effect.fail(new DiskError({ reason: "IOError", op, path, message: `${op} ${path}: power cut` }))
      }
      if (MUTATING.has(op)) cut.used++
      return Effect.void
    })
  return checkDiskOps(inner, gate)
}

/** Names of the files in the log directory. */
export const filesIn = (mem: MemoryDisk, dir = DIR): Array<string> =>
  mem
    .files()
    .filter((p) => p.startsWith(`${dir}/`))
    .map((p) => p.slice(dir.length + 1))
