/**
 * The raw record scanner (log/RecordScanner.ts) against `TransactionLog.scanForward`: the same records in
 * the same order for any start and limit, over plain, scavenged and merged chunks and the active one, with
 * pieces small enough to cut records; its in-place fields equal the decoded record's; damage fails the
 * scan with StorageCorrupt as it fails `scanForward`.
 */
import { describe, expect, it } from "vitest"
import { Effect, Exit } from "effect"
import { Prng, transformReads } from "@vellum/platform"
import { HEADER_SIZE } from "../src/log/chunkFormat.js"
import { EventFlags, RecordKind, type LogRecord, type NewRecord } from "../src/log/records.js"
import { scanRecords } from "../src/log/RecordScanner.js"
import type { TransactionLog } from "../src/log/TransactionLog.js"
import { CHUNK_SIZE, buildLog, keepByPosition } from "./log-rewrite-support.js"
import { bytesOf, uuidFrom, writeUnits } from "./log-support.js"

const viaScanForward = (log: TransactionLog, from: number, limit: number): Array<LogRecord> => {
  const out: Array<LogRecord> = []
  let position = from
  for (let guard = 0; guard < 100_000; guard++) {
    const scan = Effect.runSync(log.scanForward(position, limit, 7))
    out.push(...scan.records)
    if (scan.reachedEnd || scan.records.length === 0) return out
    position = scan.next
  }
  throw new Error("scanForward did not terminate")
}

interface Seen {
  readonly record: LogRecord
  readonly kind: number
  readonly logPosition: number
  readonly flags: number | undefined
  readonly created: number | undefined
  readonly isMetastream: boolean | undefined
  readonly spTime: number | undefined
}

const viaScanner = (log: TransactionLog, from: number, limit: number, pieceBytes: number, verifyFiles = false) =>
  Effect.gen(function* () {
    const scan = scanRecords(log, from, limit, { pieceBytes, verifyFiles })
    const out: Array<Seen> = []
    while (yield* scan.nextPiece) {
      while (scan.next()) {
        const kind = scan.kind
        out.push({
          record: scan.decode(),
          kind,
          logPosition: scan.logPosition,
          flags: kind === RecordKind.Event ? scan.flags : undefined,
          created: kind === RecordKind.Event ? scan.createdMicros : undefined,
          isMetastream: kind === RecordKind.Event ? scan.isMetastreamEvent : undefined,
          spTime: kind === RecordKind.ScavengePoint ? scan.scavengePointTimeMicros : undefined
        })
      }
    }
    return out
  })

/** Events the state of a scavenge cares about, so every seed has some: metastream records and tombstones. */
const notable = (prng: Prng): Array<NewRecord> => [
  {
    kind: RecordKind.Event,
    flags: EventFlags.Json,
    eventNumber: 0,
    createdMicros: 7,
    eventId: uuidFrom(prng),
    stream: "$$orders",
    eventType: "$metadata",
    data: Buffer.from("{}"),
    metadata: Buffer.alloc(0)
  },
  {
    kind: RecordKind.Event,
    flags: EventFlags.Tombstone,
    eventNumber: 2 ** 53 - 1,
    createdMicros: 9,
    eventId: uuidFrom(prng),
    stream: "orders",
    eventType: "$streamDeleted",
    data: Buffer.alloc(0),
    metadata: Buffer.alloc(0)
  },
  {
    kind: RecordKind.Event,
    flags: 0,
    eventNumber: 3,
    createdMicros: 11,
    eventId: uuidFrom(prng),
    stream: "$",
    eventType: "T",
    data: Buffer.alloc(0),
    metadata: Buffer.alloc(0)
  },
  {
    kind: RecordKind.ScavengePoint,
    number: 0,
    eventId: uuidFrom(prng),
    effectiveNowMicros: 5,
    threshold: 0,
    timeMicros: 13
  }
]

/** A log with plain, scavenged and merged completed chunks and an active chunk holding notable records. */
const mixedLog = (seed: number) => {
  const built = buildLog(seed, 6)
  const { log } = built
  const prng = new Prng(seed).fork("notable")
  writeUnits(log, [{ records: notable(prng) }])
  Effect.runSync(log.replaceChunks(1, 1, keepByPosition(seed)))
  Effect.runSync(log.replaceChunks(3, 3, keepByPosition(seed + 1)))
  Effect.runSync(log.replaceChunks(3, 4, () => true))
  writeUnits(log, [{ records: notable(prng) }])
  return built
}

describe("RecordScanner", () => {
  it("returns what scanForward returns for any start and limit, with the record's fields read in place", () => {
    let compared = 0
    let metastreamEvents = 0
    for (let seed = 1; seed <= 6; seed++) {
      const { log, written } = mixedLog(seed)
      const prng = new Prng(seed).fork("ranges")
      const end = log.writerPosition()
      const starts = [0, CHUNK_SIZE, 3 * CHUNK_SIZE, ...written.filter(() => prng.chance(0.1)).map((w) => w.position)]
      for (const from of starts) {
        const limits = [
          end,
          end + 100,
          from + 1,
          2 * CHUNK_SIZE,
          4 * CHUNK_SIZE + 1,
          prng.int(from, end + 50),
          prng.int(from, end)
        ]
        for (const limit of limits) {
          const expected = viaScanForward(log, from, limit)
          const seen = Effect.runSync(viaScanner(log, from, limit, prng.pick([9, 64, 300, 4096]), prng.chance(0.5)))
          expect(seen.map((s) => s.logPosition)).toEqual(expected.map((r) => r.logPosition))
          seen.forEach((s, i) => {
            const r = expected[i]!
            expect(bytesOf(s.record, s.logPosition).equals(bytesOf(r, r.logPosition))).toBe(true)
            expect(s.kind).toBe(r.kind)
            if (r.kind === RecordKind.Event) {
              expect([s.flags, s.created, s.isMetastream]).toEqual([
                r.flags,
                r.createdMicros,
                r.stream.startsWith("$$")
              ])
              if (s.isMetastream === true) metastreamEvents++
            }
            if (r.kind === RecordKind.ScavengePoint) expect(s.spTime).toBe(r.timeMicros)
          })
          compared += expected.length
        }
      }
    }
    expect(compared).toBeGreaterThan(1000)
    expect(metastreamEvents).toBeGreaterThan(0)
  })

  it("fails with StorageCorrupt on a damaged record, as scanForward does", () => {
    const { log, mem } = mixedLog(11)
    const chunk = log.chunks().find((c) => c.header.startNumber === 2)!
    const handle = Effect.runSync(mem.service.open(chunk.path))
    const offset = HEADER_SIZE + 300
    const byte = Effect.runSync(handle.read(offset, 1))
    Effect.runSync(handle.write(offset, Buffer.from([byte[0]! ^ 0x10])))
    const from = 2 * CHUNK_SIZE
    const exit = Effect.runSyncExit(viaScanner(log, from, 3 * CHUNK_SIZE, 4096))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : "no failure").toBe(
      "StorageCorrupt"
    )
    const reference = Effect.runSyncExit(log.scanForward(from, 3 * CHUNK_SIZE, 10_000))
    expect(Exit.isFailure(reference)).toBe(true)
    // Chunks before the damage still scan.
    expect(Effect.runSync(viaScanner(log, 0, 2 * CHUNK_SIZE, 4096)).length).toBe(
      viaScanForward(log, 0, 2 * CHUNK_SIZE).length
    )
  })

  it("checking file checksums, damage anywhere in a chunk read whole fails the scan when it leaves that chunk", () => {
    for (const [startNumber, where] of [
      [2, "record"],
      [2, "tail"],
      [1, "posmap"]
    ] as const) {
      const { log, mem } = mixedLog(12)
      const chunk = log.chunks().find((c) => c.header.startNumber === startNumber)!
      const from = startNumber * CHUNK_SIZE
      const limit = chunk.endPosition - 1
      const expected = viaScanForward(log, from, limit).length
      const handle = Effect.runSync(mem.service.open(chunk.path))
      const size = Effect.runSync(handle.size)
      // A byte inside a record's data (its own checksum is not looked at), in the last record, or in the
      // position map of a scavenged chunk: only the file checksum can tell.
      const offset =
        where === "record" ? HEADER_SIZE + 300 : where === "tail" ? HEADER_SIZE + chunk.dataSize - 10 : size - 128 - 5
      const byte = Effect.runSync(handle.read(offset, 1))
      Effect.runSync(handle.write(offset, Buffer.from([byte[0]! ^ 0x10])))
      const seen: Array<number> = []
      const exit = Effect.runSyncExit(
        Effect.gen(function* () {
          const scan = scanRecords(log, from, limit, { pieceBytes: 4096, verifyFiles: true })
          while (yield* scan.nextPiece) while (scan.next()) seen.push(scan.logPosition)
        })
      )
      expect(
        Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.message : "no failure",
        where
      ).toContain("file checksum")
      // The whole-file check costs no per-record check: the records were handed out before it failed.
      if (where !== "record") expect(seen.length).toBe(expected)
    }
  })

  it("a chunk the scan does not read whole is checked record by record even when files are verified", () => {
    const { log, mem } = mixedLog(13)
    const chunk = log.chunks().find((c) => c.header.startNumber === 2)!
    const first = viaScanForward(log, 2 * CHUNK_SIZE, 3 * CHUNK_SIZE)[0]!
    const handle = Effect.runSync(mem.service.open(chunk.path))
    const offset = HEADER_SIZE + 300
    const byte = Effect.runSync(handle.read(offset, 1))
    Effect.runSync(handle.write(offset, Buffer.from([byte[0]! ^ 0x10])))
    // Starting after the chunk's first record: the file checksum cannot be computed, so records are checked.
    const exit = Effect.runSyncExit(viaScanner(log, first.logPosition + 1, 3 * CHUNK_SIZE, 4096, true))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.message : "no failure").toContain(
      "damaged"
    )
  })

  it("checking file checksums, a bit flipped in transit anywhere in a read fails the scan or changes nothing", () => {
    const { log } = mixedLog(14)
    const chunk = log.chunks().find((c) => c.header.startNumber === 2)!
    const from = 2 * CHUNK_SIZE
    const limit = chunk.endPosition - 1
    const expected = viaScanForward(log, from, limit).map((r) => r.logPosition)
    let outcomes = { failed: 0, same: 0 }
    for (let piece = 0; piece < 3; piece++) {
      for (let byte = 0; byte < 4096; byte += 5) {
        // The piece-th read of the chunk (header reads included) comes back with one bit flipped.
        let reads = 0
        const handle = transformReads(chunk.handle, (_, bytes) => {
          if (reads++ !== piece || byte >= bytes.length) return bytes
          const copy = Buffer.from(bytes)
          copy[byte] ^= 1 << (byte % 8)
          return copy
        })
        const damagedLog = { chunks: () => log.chunks().map((c) => (c === chunk ? { ...c, handle } : c)) }
        const seen: Array<number> = []
        const exit = Effect.runSyncExit(
          Effect.gen(function* () {
            const scan = scanRecords(damagedLog, from, limit, { pieceBytes: 1024, verifyFiles: true })
            while (yield* scan.nextPiece) while (scan.next()) seen.push(scan.logPosition)
          })
        )
        if (Exit.isFailure(exit)) outcomes = { ...outcomes, failed: outcomes.failed + 1 }
        else {
          expect(seen, `bit ${byte} of read ${piece}`).toEqual(expected)
          outcomes = { ...outcomes, same: outcomes.same + 1 }
        }
      }
    }
    expect(outcomes.failed).toBeGreaterThan(100)
  })

  it("a scavenged chunk that kept no record is checked whole and scans as empty", () => {
    const { log } = mixedLog(15)
    Effect.runSync(log.replaceChunks(2, 2, () => false))
    const emptied = log.chunks().find((c) => c.header.startNumber === 2)!
    expect(emptied.dataSize).toBe(0)
    const seen = Effect.runSync(viaScanner(log, CHUNK_SIZE, 4 * CHUNK_SIZE, 4096, true)).map((s) => s.logPosition)
    expect(seen).toEqual(viaScanForward(log, CHUNK_SIZE, 4 * CHUNK_SIZE).map((r) => r.logPosition))
    expect(seen.some((p) => p >= 2 * CHUNK_SIZE && p < 3 * CHUNK_SIZE)).toBe(false)
  })
})
