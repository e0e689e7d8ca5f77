/**
 * Damaged position maps in a log (log/PositionMap.ts, and the position checks of TransactionLog.ts and
 * RecordScanner.ts): map bytes flipped on disk after the open change nothing (the map is resident); flipped
 * before an open without verification they may make a live record read as absent but never give another
 * record, a removed one, or a scan out of order; bits flipped in transit change nothing.
 */
import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit } from "effect"
import type { FileHandle, MemoryDisk } from "@vellum/platform"
import { HEADER_SIZE, POSMAP_ENTRY_SIZE } from "../src/log/chunkFormat.js"
import { POSMAP_GROUP_ENTRIES as K } from "../src/log/PositionMap.js"
import { scanRecords } from "../src/log/RecordScanner.js"
import type { TransactionLog } from "../src/log/TransactionLog.js"
import type { Model, Placed } from "./log-rewrite-support.js"
import { openLog, sameRecord } from "./log-support.js"
import { probes, sized, visiblePositions } from "./log-posmap-support.js"

interface Outcome {
  corrupt: number
  right: number
  /** Live records read as nothing (only without `strict`: map damage on disk before an unverified open). */
  missed: number
}

const isCorrupt = <A>(exit: Exit.Exit<A, unknown>): boolean =>
  Exit.isFailure(exit) &&
  Cause.failureOption(exit.cause).pipe(
    (o) => o._tag === "Some" && (o.value as { _tag?: string })._tag === "StorageCorrupt"
  )

/**
 * Reads every written position of chunk 1 and scans across it both ways from probes: each read is right
 * (the record written there, or nothing for a removed one) or fails with StorageCorrupt, never anything
 * else. `strict` also refuses "nothing" for a live record and a scan that skips one.
 */
const readsAreRightOrCorrupt = (
  log: TransactionLog,
  model: Model,
  inChunk: ReadonlyArray<Placed>,
  kept: ReadonlyArray<number>,
  damagedEntry: number,
  outcome: Outcome,
  strict: boolean
) => {
  const limit = log.writerPosition()
  const visible = visiblePositions(model)
  for (const w of inChunk) {
    const exit = Effect.runSyncExit(log.readRecord(w.position, limit))
    if (isCorrupt(exit)) {
      outcome.corrupt++
      continue
    }
    expect(
      Exit.isSuccess(exit),
      `readRecord(${w.position}) failed otherwise: ${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""}`
    ).toBe(true)
    const record = Exit.isSuccess(exit) ? exit.value : undefined
    const alive = model.alive.has(w.position)
    if (record !== undefined)
      expect(alive && sameRecord(record, w.record, w.position), `readRecord(${w.position}) gave another record`).toBe(
        true
      )
    else if (strict) expect(alive, `readRecord(${w.position}) gave nothing for a live record`).toBe(false)
    else if (alive) {
      outcome.missed++
      continue
    }
    outcome.right++
  }
  // Every ninth kept record's surroundings (every group), and those of the entries near the damage.
  for (const p of probes(kept.filter((_, i) => i % 9 === 0 || Math.abs(i - damagedEntry) <= 2))) {
    for (const [scan, expected, inRange] of [
      [
        log.scanForward(p, limit, 3),
        visible.filter((v) => v >= p).slice(0, 3),
        (g: number, i: number, all: ReadonlyArray<number>) => g >= p && (i === 0 || g > all[i - 1]!)
      ],
      [
        log.scanBackward(p, limit, 3),
        visible
          .filter((v) => v < p)
          .slice(-3)
          .reverse(),
        (g: number, i: number, all: ReadonlyArray<number>) => g < p && (i === 0 || g < all[i - 1]!)
      ]
    ] as const) {
      const exit = Effect.runSyncExit(scan)
      if (isCorrupt(exit)) {
        outcome.corrupt++
        continue
      }
      expect(Exit.isSuccess(exit), `scan from ${p}: ${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""}`).toBe(true)
      const got = Exit.isSuccess(exit) ? exit.value.records.map((r) => r.logPosition) : []
      if (strict) expect(got, `scan from ${p}`).toEqual(expected)
      else
        got.forEach((g, i) =>
          expect(model.alive.has(g) && inRange(g, i, got), `scan from ${p} gave ${got.join(", ")}`).toBe(true)
        )
      outcome.right++
    }
    // The raw scanner (scavenge accumulation and chunk rewrites) enters the chunk through the map too.
    const scanned = Effect.runSyncExit(
      Effect.gen(function* () {
        const scan = scanRecords(log, p, limit, { pieceBytes: 4096 })
        const seen: Array<number> = []
        while (seen.length < 3 && (yield* scan.nextPiece))
          while (seen.length < 3 && scan.next()) seen.push(scan.logPosition)
        return seen
      })
    )
    if (isCorrupt(scanned)) outcome.corrupt++
    else {
      const seen = Exit.isSuccess(scanned) ? scanned.value : undefined
      if (strict) expect(seen, `raw scan from ${p}`).toEqual(visible.filter((v) => v >= p).slice(0, 3))
      else
        (seen ?? []).forEach((g, i, all) =>
          expect(
            model.alive.has(g) && g >= p && (i === 0 || g > all[i - 1]!),
            `raw scan from ${p} gave ${all.join(", ")}`
          ).toBe(true)
        )
    }
  }
}

const flipAt = (mem: MemoryDisk, path: string, offset: number, mask: number) =>
  Effect.runSync(
    Effect.gen(function* () {
      const handle: FileHandle = yield* mem.service.open(path)
      const byte = yield* handle.read(offset, 1)
      byte[0] ^= mask
      yield* handle.write(offset, byte)
      yield* handle.close
    })
  )

/** Byte offsets in the map region to damage: a few per entry of every group's edges and middle. */
const entryAt = (mapStart: number, offset: number): number => Math.floor((offset - mapStart) / POSMAP_ENTRY_SIZE)

const mapBytesToFlip = (mapStart: number, count: number): Array<number> => {
  const out: Array<number> = []
  for (let g = 0; g * K < count; g++) {
    for (const entry of [g * K, g * K + 1, g * K + (K >> 1), Math.min(count, (g + 1) * K) - 1]) {
      if (entry >= count) continue
      for (const field of [0, 4, 6]) out.push(mapStart + entry * POSMAP_ENTRY_SIZE + field)
    }
  }
  return [...new Set(out)]
}

describe("damaged position maps in a log", () => {
  /** A log whose second chunk is scavenged with 3 groups and a bit, and the map bytes of it to damage. */
  const damageSetup = () => {
    const log = sized(3 * K + 5)
    const probe = openLog(log.mem.service, log.config).chunks()[1]!
    const mapStart = HEADER_SIZE + probe.dataSize
    const outcome: Outcome = { corrupt: 0, right: 0, missed: 0 }
    return { ...log, probe, mapStart, offsets: mapBytesToFlip(mapStart, 3 * K + 5), outcome }
  }

  it("map bytes damaged on disk after the open change nothing: the map was read whole at open", () => {
    const { mem, config, model, inChunk, kept, probe, mapStart, offsets, outcome } = damageSetup()
    for (const offset of offsets) {
      const log = openLog(mem.service, config)
      flipAt(mem, probe.path, offset, 1 << (offset % 8))
      readsAreRightOrCorrupt(log, model, inChunk, kept, entryAt(mapStart, offset), outcome, true)
      flipAt(mem, probe.path, offset, 1 << (offset % 8))
    }
    expect(outcome.corrupt).toBe(0)
    expect(outcome.right).toBeGreaterThan(100)
  })

  it("map bytes damaged on disk before an open without verification: no read gives another record or a removed one", () => {
    const { mem, config, model, inChunk, kept, probe, mapStart, offsets, outcome } = damageSetup()
    for (const offset of offsets) {
      flipAt(mem, probe.path, offset, 1 << (offset % 8))
      readsAreRightOrCorrupt(
        openLog(mem.service, config),
        model,
        inChunk,
        kept,
        entryAt(mapStart, offset),
        outcome,
        false
      )
      flipAt(mem, probe.path, offset, 1 << (offset % 8))
    }
    expect(outcome.corrupt).toBeGreaterThan(100)
  })

  it("bits flipped in transit on any read of a log with a scavenged chunk never give a wrong record", () => {
    const { mem, config, model, inChunk, kept } = sized(3 * K + 5)
    const outcome: Outcome = { corrupt: 0, right: 0, missed: 0 }
    for (const seed of [1, 2, 3]) {
      const log = openLog(mem.service, config)
      mem.setFaults({ bitFlipOnRead: 0.2 })
      // Reads may now also fail with a DiskError where reads never agree; those are not wrong answers.
      readsAreRightOrCorruptOrDisk(log, model, inChunk, kept, outcome, seed)
      mem.setFaults(undefined)
    }
    expect(outcome.right).toBeGreaterThan(100)
  })
})

/** As `readsAreRightOrCorrupt` (strict) for reads that may meet transit damage: right, or a typed failure. */
const readsAreRightOrCorruptOrDisk = (
  log: TransactionLog,
  model: Model,
  inChunk: ReadonlyArray<Placed>,
  kept: ReadonlyArray<number>,
  outcome: Outcome,
  seed: number
) => {
  const limit = log.writerPosition()
  const visible = visiblePositions(model)
  const failedTyped = (exit: Exit.Exit<unknown, unknown>) =>
    Exit.isFailure(exit) &&
    Cause.failureOption(exit.cause).pipe(
      (o) => o._tag === "Some" && ["StorageCorrupt", "DiskError"].includes((o.value as { _tag?: string })._tag ?? "")
    )
  for (let i = seed % 3; i < inChunk.length; i += 3) {
    const w = inChunk[i]!
    const exit = Effect.runSyncExit(log.readRecord(w.position, limit))
    if (failedTyped(exit)) {
      outcome.corrupt++
      continue
    }
    const record = Exit.isSuccess(exit) ? exit.value : undefined
    expect(Exit.isSuccess(exit)).toBe(true)
    if (model.alive.has(w.position))
      expect(record !== undefined && sameRecord(record, w.record, w.position), `readRecord(${w.position})`).toBe(true)
    else expect(record).toBeUndefined()
    outcome.right++
  }
  for (const p of probes(kept.filter((_, i) => i % 5 === seed))) {
    const exit = Effect.runSyncExit(log.scanForward(p, limit, 3))
    if (failedTyped(exit)) continue
    expect(Exit.isSuccess(exit) ? exit.value.records.map((r) => r.logPosition) : []).toEqual(
      visible.filter((v) => v >= p).slice(0, 3)
    )
  }
}
