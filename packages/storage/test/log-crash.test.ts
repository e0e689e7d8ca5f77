/**
 * Crash safety of the transaction log, as a property over seeds.
 *
 * Each seed runs a few phases. A phase opens the log over a Disk that "loses power" after a random number
 * of mutating operations (so the cut lands anywhere: inside a segment write, between a segment's sync and
 * the checkpoint, and between every step of a rollover — checkpoint, footer, truncate, temp chunk, rename,
 * directory sync, checkpoint again), writes random batches until the cut or the end of the phase, then
 * crashes the MemoryDisk (random mode: unsynced bytes and directory entries kept, lost or torn at random;
 * sometimes strict), sometimes crashes again in the middle of recovery, and reopens. After every reopen:
 *
 *   (a) the log opens;
 *   (b) every unit of every batch whose `write` succeeded is readable, byte for byte, at its position;
 *   (c) every unit of the interrupted batch is entirely visible or entirely absent, and only a prefix of
 *       that batch's units can be visible (writes are ordered);
 *   (d) nothing else is visible: not past the writer checkpoint even when asked, no torn tail in the active
 *       chunk, no stray files, every earlier chunk completed with a valid checksum;
 *   (e) what was visible after one recovery stays visible after every later crash (the next phase writes
 *       more, crashes and checks again).
 */
import { describe, expect, it } from "vitest"
import { Effect, Exit } from "effect"
import { MemoryDisk, Prng } from "@vellum/platform"
import { verifyChunkFile } from "../src/log/ChunkFile.js"
import { HEADER_SIZE, parseChunkFileName } from "../src/log/chunkFormat.js"
import { framedLength, type LogRecord, type NewRecord } from "../src/log/records.js"
import { openTransactionLog, type LogConfig, type TransactionLog, type WriteUnit } from "../src/log/TransactionLog.js"
import {
  DIR,
  SEEDS_SCALE,
  bytesOf,
  chunkIds,
  eventOfSize,
  exitOn,
  filesIn,
  logConfig,
  powerCutDisk,
  randomRecord,
  sealUnit,
  sameRecord,
  type PowerCut
} from "./log-support.js"

const SEEDS = 300 * SEEDS_SCALE
const PHASES = 3

interface PlacedUnit {
  readonly records: ReadonlyArray<NewRecord>
  readonly positions: ReadonlyArray<number>
  readonly end: number
}

interface Stats {
  cutAt: Map<string, number>
  partialBatches: number
  lostBatches: number
  recoveryCrashes: number
  reopenedAtBoundary: number
  phases: number
}

/** A random unit; sized against the active chunk so exact fills, overflows and whole chunks are common. */
const randomUnit = (prng: Prng, cs: number, room: number): WriteUnit => {
  const roll = prng.int(0, 15)
  const completeChunkAfter = prng.chance(0.06)
  if (roll === 0 && room >= 74) return { records: [eventOfSize(prng, room)], completeChunkAfter }
  if (roll === 1) return { records: [eventOfSize(prng, cs)] }
  if (roll === 2 && room + 1 >= 74 && room + 1 <= cs) return { records: [eventOfSize(prng, room + 1)] }
  if (roll === 3) return { records: [], completeChunkAfter }
  const records: Array<NewRecord> = []
  let size = 0
  for (let i = prng.int(1, 4); i > 0; i--) {
    const r = randomRecord(prng, Math.floor(cs / 5))
    if (size + framedLength(r) > cs) break
    size += framedLength(r)
    records.push(r)
  }
  return { records: sealUnit(records), completeChunkAfter }
}

const roomIn = (log: TransactionLog): number => {
  const chunks = log.chunks()
  const active = chunks[chunks.length - 1]!
  return log.config.chunkSize - active.dataSize
}

const place = (
  units: ReadonlyArray<WriteUnit>,
  positions: ReadonlyArray<ReadonlyArray<number>>,
  ends: ReadonlyArray<number>
): Array<PlacedUnit> => units.map((u, i) => ({ records: u.records, positions: positions[i]!, end: ends[i]! }))

const flatten = (units: ReadonlyArray<PlacedUnit>) =>
  units.flatMap((u) => u.records.map((record, k) => ({ record, position: u.positions[k]! })))

const scanEverything = (log: TransactionLog, prng: Prng, limit: number): Array<LogRecord> => {
  const out: Array<LogRecord> = []
  let from = 0
  while (true) {
    const r = Effect.runSync(log.scanForward(from, limit, prng.int(1, 50)))
    out.push(...r.records)
    if (r.reachedEnd || r.records.length === 0) return out
    from = r.next
  }
}

/**
 * Checks a freshly recovered log against the model and returns the units that are now durable: all of
 * `durable`, plus the visible prefix of `inflight`.
 */
const checkRecovered = (
  seed: number,
  mem: MemoryDisk,
  log: TransactionLog,
  durable: ReadonlyArray<PlacedUnit>,
  inflight: ReadonlyArray<PlacedUnit>,
  inflightEnd: number,
  prng: Prng,
  stats: Stats
): Array<PlacedUnit> => {
  const fail = (message: string): never => {
    throw new Error(`seed ${seed}: ${message}`)
  }
  const cs = log.config.chunkSize
  const writer = log.writerPosition()
  const visible = scanEverything(log, prng, writer)
  const must = flatten(durable)
  // (b) every acknowledged record, in order, byte for byte.
  if (visible.length < must.length) fail(`only ${visible.length} records visible, ${must.length} were acknowledged`)
  must.forEach((m, i) => {
    if (!sameRecord(visible[i]!, m.record, m.position))
      fail(`acknowledged record ${i} at ${m.position} differs (found ${visible[i]!.logPosition})`)
  })
  // (c) the rest is a prefix of whole units of the interrupted batch.
  let at = must.length
  let k = 0
  while (at < visible.length) {
    const unit = inflight[k]
    if (unit === undefined) fail(`record at ${visible[at]!.logPosition} is visible but was never written`)
    for (let j = 0; j < unit!.records.length; j++) {
      const v = visible[at + j]
      if (v === undefined)
        fail(`unit ${k} of the interrupted batch is only partly visible (${j} of ${unit!.records.length} records)`)
      if (!sameRecord(v!, unit!.records[j]!, unit!.positions[j]!))
        fail(`record ${j} of interrupted unit ${k} differs at ${v!.logPosition}`)
    }
    at += unit!.records.length
    k++
  }
  // Units with no records are "visible" when the next unit with records is; count them by position.
  while (k < inflight.length && inflight[k]!.records.length === 0 && inflight[k]!.end <= writer) k++
  const nowDurable = [...durable, ...inflight.slice(0, k)]
  if (k > 0 && k < inflight.length) stats.partialBatches++
  if (inflight.length > 0 && k === 0) stats.lostBatches++

  // Every visible record is readable on its own, and its bytes on disk are the bytes written.
  const fileBytes = new Map<string, Buffer>()
  for (const u of nowDurable) {
    u.records.forEach((record, j) => {
      const position = u.positions[j]!
      const r = Effect.runSync(log.readRecord(position, writer))
      if (r === undefined || !sameRecord(r, record, position)) fail(`readRecord(${position}) differs`)
      const chunk = log.chunks()[Math.floor(position / cs)]!
      let file = fileBytes.get(chunk.path)
      if (file === undefined) fileBytes.set(chunk.path, (file = mem.readFileSync(chunk.path)))
      const expected = bytesOf(record, position)
      const at = HEADER_SIZE + position - chunk.startPosition
      if (!file.subarray(at, at + expected.length).equals(expected))
        fail(`the bytes at ${position} on disk differ from those written`)
    })
  }
  // (d) the checkpoint sits at the end of the visible data (or at a later chunk start, after a rollover),
  // and nothing is readable past it even when asked.
  const lastEnd = nowDurable.length > 0 ? nowDurable[nowDurable.length - 1]!.end : 0
  if (writer < lastEnd) fail(`writer checkpoint ${writer} is below the end of the visible data ${lastEnd}`)
  if (writer > Math.max(lastEnd, inflightEnd) && writer % cs !== 0)
    fail(`writer checkpoint ${writer} is past everything written`)
  const unlimited = scanEverything(log, prng, Number.MAX_SAFE_INTEGER)
  if (unlimited.length !== visible.length)
    fail(`${unlimited.length - visible.length} records visible past the writer checkpoint`)
  if (writer % cs === 0) stats.reopenedAtBoundary++

  const chunks = log.chunks()
  const names = filesIn(mem).sort()
  const expectedNames = [...chunks.map((c) => c.path.slice(DIR.length + 1)), "writer.chk"].sort()
  if (names.join() !== expectedNames.join()) fail(`files ${names.join(", ")}; expected ${expectedNames.join(", ")}`)
  chunks.forEach((chunk, i) => {
    if (chunk.header.startNumber !== i) fail(`chunk ${i} is ${chunk.path}`)
    if (parseChunkFileName(chunk.path.slice(DIR.length + 1))?.startNumber !== i)
      fail(`chunk ${i} has the name ${chunk.path}`)
    if (i < chunks.length - 1) {
      if (chunk.footer === undefined) fail(`chunk ${i} is not completed`)
      const v = Effect.runSyncExit(verifyChunkFile(chunk))
      if (Exit.isFailure(v)) fail(`chunk ${i} fails verification`)
      return
    }
    // The active chunk: exactly the checkpoint's bytes, then nothing (or preallocated zeros).
    if (chunk.footer !== undefined) fail("the active chunk is completed")
    const off = writer - chunk.startPosition
    if (chunk.dataSize !== off) fail(`active chunk holds ${chunk.dataSize} bytes, the checkpoint says ${off}`)
    const bytes = mem.readFileSync(chunk.path)
    const expectedSize = HEADER_SIZE + (log.config.preallocate ? cs : off)
    if (bytes.length !== expectedSize) fail(`active chunk file is ${bytes.length} bytes, expected ${expectedSize}`)
    if (bytes.subarray(HEADER_SIZE + off).some((b) => b !== 0))
      fail("bytes past the checkpoint survived in the active chunk")
  })
  return nowDurable
}

const runSeed = (seed: number, stats: Stats) => {
  const prng = new Prng(seed)
  const mem = new MemoryDisk({ prng: prng.fork("disk") })
  const config: LogConfig = logConfig({
    chunkSize: prng.pick([512, 768, 1024, 2048, 4096]),
    preallocate: prng.chance(0.3),
    verifyOnOpen: prng.chance(0.5),
    cacheBytes: prng.pick([0, 4096, 1 << 20])
  })
  const cs = config.chunkSize
  let durable: Array<PlacedUnit> = []
  let nextId = seed * 100
  const open = (disk: MemoryDisk["service"]) => exitOn(disk, openTransactionLog(config, chunkIds(nextId++)))

  let log: TransactionLog
  {
    const first = open(mem.service)
    if (Exit.isFailure(first)) throw new Error(`seed ${seed}: first open failed`)
    log = first.value
  }
  for (let phase = 0; phase < PHASES; phase++) {
    stats.phases++
    const batches = prng.int(1, 10)
    const cut: PowerCut = { budget: prng.int(0, batches * 12), used: 0, cutAt: undefined }
    // Reopen over the power-cut disk (the log from the previous phase is abandoned with the crash).
    Effect.runSync(log.close)
    const cuttable = powerCutDisk(mem, cut)
    const opened = open(cuttable)
    let inflight: Array<PlacedUnit> = []
    let inflightEnd = 0
    if (Exit.isSuccess(opened)) {
      const phaseLog = opened.value
      for (let b = 0; b < batches; b++) {
        const units: Array<WriteUnit> = []
        for (let u = prng.int(1, 5); u > 0; u--) units.push(randomUnit(prng, cs, roomIn(phaseLog)))
        const batch = phaseLog.prepare(units)
        const placed = place(units, batch.positions, batch.unitEnds)
        const exit = Effect.runSyncExit(phaseLog.write(batch))
        if (Exit.isSuccess(exit)) {
          durable.push(...placed)
          continue
        }
        inflight = placed
        inflightEnd = batch.endPosition
        // Fail-stop: nothing more is accepted.
        const again = Effect.runSyncExit(phaseLog.write(phaseLog.prepare([{ records: [eventOfSize(prng, 80)] }])))
        if (!Exit.isFailure(again)) throw new Error(`seed ${seed}: a write after a failed write succeeded`)
        break
      }
    }
    if (cut.cutAt !== undefined) stats.cutAt.set(cut.cutAt, (stats.cutAt.get(cut.cutAt) ?? 0) + 1)
    mem.crash(prng.fork(`crash-${phase}`), prng.chance(0.15) ? "strict" : "random")

    // Sometimes the power fails again during recovery.
    if (prng.chance(0.25)) {
      const recoveryCut: PowerCut = { budget: prng.int(0, 12), used: 0, cutAt: undefined }
      const attempt = open(powerCutDisk(mem, recoveryCut))
      if (Exit.isFailure(attempt)) {
        stats.recoveryCrashes++
        mem.crash(prng.fork(`recovery-crash-${phase}`), "random")
      } else Effect.runSync(attempt.value.close)
    }
    const reopened = open(mem.service)
    if (Exit.isFailure(reopened))
      throw new Error(`seed ${seed} phase ${phase}: reopening failed: ${String(reopened.cause)}`)
    log = reopened.value
    durable = checkRecovered(seed, mem, log, durable, inflight, inflightEnd, prng, stats)
  }
  // The recovered log accepts writes.
  const last = log.prepare([{ records: [eventOfSize(prng, 100)] }])
  Effect.runSync(log.write(last))
  expect(Effect.runSync(log.readRecord(last.positions[0]![0]!, log.writerPosition()))).toBeDefined()
}

describe("transaction log: crash safety", () => {
  it(`acknowledged batches survive power loss anywhere, units are atomic, nothing else appears (${SEEDS} seeds × ${PHASES} crashes)`, async () => {
    const stats: Stats = {
      cutAt: new Map(),
      partialBatches: 0,
      lostBatches: 0,
      recoveryCrashes: 0,
      reopenedAtBoundary: 0,
      phases: 0
    }
    const first = Number(process.env["LOG_CRASH_SEED"] ?? 1)
    const count = Number(process.env["LOG_CRASH_SEEDS"] ?? SEEDS)
    for (let seed = first; seed < first + count; seed++) {
      runSeed(seed, stats)
      if (seed % 25 === 0) await new Promise<void>((resolve) => setImmediate(resolve))
    }
    // The cuts must have landed in every kind of step, rollovers included.
    for (const op of ["write", "sync", "truncate", "open", "rename", "syncDir"]) {
      expect(stats.cutAt.get(op) ?? 0, `power cuts at ${op}`).toBeGreaterThan(0)
    }
    expect(stats.partialBatches + stats.lostBatches).toBeGreaterThan(0)
    expect(stats.recoveryCrashes).toBeGreaterThan(0)
    expect(stats.reopenedAtBoundary).toBeGreaterThan(0)
    console.log(`log crash property: ${count} seeds, ${stats.phases} crashes`, Object.fromEntries(stats.cutAt), stats)
  })
})
