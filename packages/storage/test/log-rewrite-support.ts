/**
 * Helpers for the chunk-replacement tests (log-rewrite*.test.ts): a log of several completed chunks built
 * over a power-cut Disk, a model of which records should be visible, and one check that compares every
 * read path (readRecord, readRecordCached, paged forward and backward scans, chunk checksums) with it.
 */
import { Effect } from "effect"
import { MemoryDisk, Prng } from "@vellum/platform"
import { verifyChunkFile } from "../src/log/ChunkFile.js"
import { parseChunkFileName } from "../src/log/chunkFormat.js"
import type { LogRecord, NewRecord } from "../src/log/records.js"
import { NotCached, type TransactionLog } from "../src/log/TransactionLog.js"
import {
  filesIn,
  logConfig,
  openLog,
  powerCutDisk,
  randomRecord,
  sealUnit,
  sameRecord,
  writeUnits,
  type PowerCut
} from "./log-support.js"

export const CHUNK_SIZE = 2048

export interface Placed {
  readonly record: NewRecord
  readonly position: number
}

export interface Built {
  readonly mem: MemoryDisk
  readonly cut: PowerCut
  readonly log: TransactionLog
  readonly written: ReadonlyArray<Placed>
}

/** A fresh power-cut budget that never cuts (tests lower `budget` to cut). */
export const noCut = (when?: PowerCut["when"]): PowerCut => ({
  budget: Number.POSITIVE_INFINITY,
  used: 0,
  cutAt: undefined,
  when
})

/** A log (opened over a power-cut Disk) whose chunks 0..completed-1 are completed, filled from `seed`. */
export const buildLog = (seed: number, completed = 5, when?: PowerCut["when"]): Built => {
  const mem = new MemoryDisk()
  const cut = noCut(when)
  const disk = powerCutDisk(mem, cut)
  const log = openLog(disk, logConfig({ chunkSize: CHUNK_SIZE }), seed)
  const written = appendRandom(log, new Prng(seed).fork("records"), completed * CHUNK_SIZE)
  return { mem, cut, log, written }
}

/** Appends random units until the writer passes `until`; returns the records with their positions. */
export const appendRandom = (log: TransactionLog, prng: Prng, until: number): Array<Placed> => {
  const written: Array<Placed> = []
  while (log.writerPosition() < until) {
    const records = sealUnit(Array.from({ length: prng.int(1, 3) }, () => randomRecord(prng, 150)))
    const batch = writeUnits(log, [{ records, completeChunkAfter: prng.chance(0.03) }])
    records.forEach((record, i) => written.push({ record, position: batch.positions[0]![i]! }))
  }
  return written
}

/** A deterministic predicate on positions (so the model can apply it to records not yet read). */
export const keepByPosition =
  (salt: number) =>
  (record: { readonly logPosition: number }): boolean =>
    (Math.imul(record.logPosition ^ salt, 0x9e3779b1) >>> 29) % 3 !== 0

/** Positions still visible: all written ones at first; `remove` applies a replacement to it. */
export class Model {
  readonly alive = new Set<number>()
  constructor(
    readonly written: ReadonlyArray<Placed>,
    readonly chunkSize = CHUNK_SIZE
  ) {
    for (const w of written) this.alive.add(w.position)
  }

  clone(): Model {
    const m = new Model(this.written, this.chunkSize)
    for (const w of this.written) if (!this.alive.has(w.position)) m.alive.delete(w.position)
    return m
  }

  /** Removes the records of chunks first..last that `keep` rejects; returns [kept, removed]. */
  remove(first: number, last: number, keep: (r: { logPosition: number }) => boolean): [number, number] {
    let kept = 0
    let removed = 0
    for (const w of this.written) {
      if (
        w.position < first * this.chunkSize ||
        w.position >= (last + 1) * this.chunkSize ||
        !this.alive.has(w.position)
      )
        continue
      if (keep({ logPosition: w.position })) kept++
      else {
        this.alive.delete(w.position)
        removed++
      }
    }
    return [kept, removed]
  }

  visible(): Array<Placed> {
    return this.written.filter((w) => this.alive.has(w.position))
  }
}

const fail = (message: string): never => {
  throw new Error(message)
}

const sameList = (what: string, got: ReadonlyArray<LogRecord>, expected: ReadonlyArray<Placed>) => {
  if (got.length !== expected.length) fail(`${what}: ${got.length} records, expected ${expected.length}`)
  got.forEach((r, i) => {
    if (!sameRecord(r, expected[i]!.record, expected[i]!.position))
      fail(`${what}: record ${i} is at ${r.logPosition}, expected ${expected[i]!.position}`)
  })
}

/** Every record forward in pages of `page`. */
export const scanForwardAll = (log: TransactionLog, page: number): Array<LogRecord> => {
  const out: Array<LogRecord> = []
  const limit = log.writerPosition()
  for (let from = 0, guard = 0; guard < 100_000; guard++) {
    const r = Effect.runSync(log.scanForward(from, limit, page))
    out.push(...r.records)
    if (r.reachedEnd || r.records.length === 0) return out
    from = r.next
  }
  return fail("scanForward did not terminate")
}

/** Every record backward from the writer position in pages of `page`, newest first. */
export const scanBackwardAll = (log: TransactionLog, page: number): Array<LogRecord> => {
  const out: Array<LogRecord> = []
  const limit = log.writerPosition()
  for (let from = limit, guard = 0; guard < 100_000; guard++) {
    const r = Effect.runSync(log.scanBackward(from, limit, page))
    out.push(...r.records)
    if (r.reachedEnd || r.records.length === 0) return out
    from = r.next
  }
  return fail("scanBackward did not terminate")
}

/** Throws unless every read path of `log` shows exactly the model's visible records. */
export const checkContent = (log: TransactionLog, model: Model): void => {
  const visible = model.visible()
  const limit = log.writerPosition()
  for (const page of [1, 3, 1000]) {
    sameList(`scanForward(page ${page})`, scanForwardAll(log, page), visible)
    sameList(`scanBackward(page ${page})`, scanBackwardAll(log, page), [...visible].reverse())
  }
  for (const w of model.written) {
    const alive = model.alive.has(w.position)
    const r = Effect.runSync(log.readRecord(w.position, limit))
    if (alive ? r === undefined || !sameRecord(r, w.record, w.position) : r !== undefined) {
      fail(
        `readRecord(${w.position}) gave ${r === undefined ? "nothing" : `a record at ${r.logPosition}`}, expected ${alive ? "the record" : "nothing"}`
      )
    }
    const c = log.readRecordCached(w.position, limit)
    if (c !== NotCached && (alive ? c === undefined || !sameRecord(c, w.record, w.position) : c !== undefined)) {
      fail(`readRecordCached(${w.position}) disagrees with the model`)
    }
  }
}

/** Throws unless the chunk files are sound: completed ones verify, names are unique per start, no leftovers. */
export const checkFiles = (mem: MemoryDisk, log: TransactionLog): void => {
  const chunks = log.chunks()
  chunks.slice(0, -1).forEach((c) => {
    if (c.footer === undefined) fail(`${c.path} is not completed`)
    Effect.runSync(verifyChunkFile(c))
  })
  const names = filesIn(mem).filter((n) => n !== "writer.chk")
  const starts = names.map((n) => parseChunkFileName(n)?.startNumber ?? fail(`stray file ${n}`))
  if (new Set(starts).size !== starts.length) fail(`several versions of a chunk: ${names.join(", ")}`)
  if (names.length !== chunks.length)
    fail(`files ${names.join(", ")} but the log has ${chunks.map((c) => c.path).join(", ")}`)
}
