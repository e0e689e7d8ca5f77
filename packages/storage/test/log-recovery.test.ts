/**
 * Recovery edge cases of the transaction log (openTransactionLog): crashes at chosen steps of a rollover,
 * files a crash or an operator can leave behind (extra chunks, temp files, older chunk versions), missing
 * chunks, damaged bytes, and record data shaped like a chunk footer.
 */
import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { MemoryDisk, Prng, type DiskService } from "@vellum/platform"
import { checksum } from "../src/codec/checksum.js"
import { createChunkFile, verifyChunkFile } from "../src/log/ChunkFile.js"
import { HEADER_SIZE, decodeHeader, encodeFooterPrefix } from "../src/log/chunkFormat.js"
import { openCheckpoint } from "../src/log/Checkpoint.js"
import { EventFlags, RecordKind, type NewRecord } from "../src/log/records.js"
import { openTransactionLog, type LogConfig, type TransactionLog } from "../src/log/TransactionLog.js"
import {
  DIR,
  chunkIds,
  eventOfSize,
  exitOn,
  filesIn,
  logConfig,
  openLog,
  powerCutDisk,
  runOn,
  sameRecord,
  scanAll,
  writeUnits,
  type PowerCut
} from "./log-support.js"

const CS = 1024
const chunkPath = (n: number, version = 0) =>
  `${DIR}/chunk-${String(n).padStart(6, "0")}.${String(version).padStart(6, "0")}`

interface Written {
  readonly record: NewRecord
  readonly position: number
}

/** Writes units of the given framed sizes (one record each) and returns what was written where. */
const writeSizes = (log: TransactionLog, prng: Prng, sizes: ReadonlyArray<number>): Array<Written> => {
  const records = sizes.map((n) => eventOfSize(prng, n))
  const batch = writeUnits(
    log,
    records.map((r) => ({ records: [r] }))
  )
  return records.map((record, i) => ({ record, position: batch.positions[i]![0]! }))
}

const expectAll = (log: TransactionLog, written: ReadonlyArray<Written>) => {
  const all = scanAll(log, 7)
  expect(all.map((r) => r.logPosition)).toEqual(written.map((w) => w.position))
  all.forEach((r, i) => expect(sameRecord(r, written[i]!.record, written[i]!.position)).toBe(true))
  for (const w of written) {
    const r = Effect.runSync(log.readRecord(w.position, log.writerPosition()))
    expect(r !== undefined && sameRecord(r, w.record, w.position)).toBe(true)
  }
}

/** Every chunk but the last is completed with a matching checksum; the last is empty or ongoing. */
const expectWellFormed = (mem: MemoryDisk, log: TransactionLog) => {
  const chunks = log.chunks()
  chunks.forEach((c, i) => {
    expect(c.header.startNumber).toBe(i)
    if (i < chunks.length - 1) {
      expect(c.footer, `chunk ${i} completed`).toBeDefined()
      expect(Exit.isSuccess(Effect.runSyncExit(verifyChunkFile(c)))).toBe(true)
    } else expect(c.footer).toBeUndefined()
  })
  expect(filesIn(mem).sort()).toEqual([...chunks.map((c) => c.path.slice(DIR.length + 1)), "writer.chk"].sort())
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure, got success")
  const e = Cause.failureOption(exit.cause)
  if (Option.isNone(e)) throw new Error(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return e.value
}

const expectCorrupt = <A, E>(exit: Exit.Exit<A, E>, ...fragments: ReadonlyArray<string>) => {
  const error = failureOf(exit) as { _tag?: string; message?: string }
  expect(error._tag).toBe("StorageCorrupt")
  for (const f of fragments) expect(error.message).toContain(f)
  return error
}

const reopen = (disk: DiskService, config: LogConfig, seed = 99) =>
  exitOn(disk, openTransactionLog(config, chunkIds(seed)))

/** Flips one bit of a file on disk (durably). */
const damage = (mem: MemoryDisk, path: string, offset: number) => {
  const h = runOn(mem.service, mem.service.open(path))
  const byte = Effect.runSync(h.read(offset, 1))
  byte[0] = byte[0]! ^ 0x10
  Effect.runSync(h.write(offset, byte))
  Effect.runSync(h.sync)
  Effect.runSync(h.close)
}

const chunkIdOf = (mem: MemoryDisk, path: string): string => {
  const header = decodeHeader(mem.readFileSync(path).subarray(0, HEADER_SIZE))
  if (typeof header === "string") throw new Error(header)
  return header.chunkId
}

/**
 * Runs `act` on a log opened over a disk whose power fails at the first operation `when` matches, then
 * crashes the disk and returns it (the test reopens). The log holds `prefill` first.
 */
const crashWhen = (
  config: LogConfig,
  seed: number,
  mode: "strict" | "random",
  prefill: ReadonlyArray<number>,
  when: PowerCut["when"],
  act: (log: TransactionLog, prng: Prng) => void
) => {
  const prng = new Prng(seed)
  const mem = new MemoryDisk({ prng: prng.fork("disk") })
  const setup = openLog(mem.service, config, seed)
  const written = writeSizes(setup, prng, prefill)
  Effect.runSync(setup.close)
  let armed = false // only once the log is open: opening does its own writes and syncs
  const cut: PowerCut = {
    budget: Number.MAX_SAFE_INTEGER,
    used: 0,
    cutAt: undefined,
    when: (op, path, pos) => armed && when!(op, path, pos)
  }
  const log = openLog(powerCutDisk(mem, cut), config, seed + 1)
  armed = true
  act(log, prng)
  expect(cut.cutAt, "the power cut happened").toBeDefined()
  mem.crash(prng.fork("crash"), mode)
  return { mem, written }
}

const MODES = ["strict", "random"] as const

describe("recovery: a crash inside a rollover", () => {
  for (const preallocate of [false, true]) {
    const config = logConfig({ chunkSize: CS, preallocate, verifyOnOpen: true })
    const cuts: Array<[string, PowerCut["when"]]> = [
      ["at the footer write", (op, path, pos) => op === "write" && path === chunkPath(0) && pos === HEADER_SIZE + CS],
      [
        "at the truncate after the footer",
        (op, path, pos) => op === "truncate" && path === chunkPath(0) && pos === HEADER_SIZE + CS + 128
      ],
      ["at the footer's sync", (op, path) => op === "sync" && path === chunkPath(0)]
    ]
    for (const [where, when] of cuts) {
      it(`checkpoint exactly at a chunk boundary, footer not durable: cut ${where} (preallocate ${preallocate})`, () => {
        for (let seed = 1; seed <= 20; seed++) {
          const mode = MODES[seed % 2]!
          let filler: Written | undefined
          let footerWritten = false
          const { mem, written } = crashWhen(
            config,
            seed,
            mode,
            [300],
            (op, path, pos) => {
              const hit = when!(op, path, pos) && (op !== "sync" || footerWritten) // the footer's sync, not the data's
              if (op === "write" && path === chunkPath(0) && pos === HEADER_SIZE + CS) footerWritten = true
              return hit
            },
            (log, prng) => {
              const record = eventOfSize(prng, CS - 300)
              const batch = log.prepare([{ records: [record] }])
              expect(batch.endPosition).toBe(CS)
              expect(Exit.isFailure(Effect.runSyncExit(log.write(batch)))).toBe(true)
              filler = { record, position: 300 }
            }
          )
          const log = openLog(mem.service, config, seed + 2)
          // The checkpoint moved to the chunk's end before the footer: the filling unit is durable.
          expect(log.writerPosition()).toBe(CS)
          expectAll(log, [...written, filler!])
          expectWellFormed(mem, log)
          expect(log.chunks().length).toBe(2)
          expect(log.chunks()[0]!.footer?.physicalDataSize).toBe(CS)
          // And the log goes on.
          const more = writeSizes(log, new Prng(seed), [200])
          expectAll(log, [...written, filler!, ...more])
        }
      })
    }

    for (const full of [false, true]) {
      it(`crash after the footer is durable, before the next chunk exists (${full ? "full" : "partly filled"} chunk, preallocate ${preallocate})`, () => {
        const steps: Array<PowerCut["when"]> = [
          (op, path) => op === "open" && path.endsWith(".tmp"),
          (op, path) => op === "rename" && path === chunkPath(1),
          (op) => op === "syncDir"
        ]
        for (let seed = 1; seed <= 24; seed++) {
          const mode = MODES[seed % 2]!
          const when = steps[seed % steps.length]!
          let record: NewRecord | undefined
          const { mem, written } = crashWhen(config, seed, mode, [300, 200], when, (log, prng) => {
            // Either a unit that fills the chunk exactly, or one that does not fit (500 + 600 > 1024).
            record = eventOfSize(prng, full ? CS - 500 : 600)
            expect(Exit.isFailure(Effect.runSyncExit(log.write(log.prepare([{ records: [record] }]))))).toBe(true)
          })
          const log = openLog(mem.service, config, seed + 2)
          expect(log.writerPosition()).toBe(CS)
          expect(log.chunks()[0]!.footer).toBeDefined()
          // The filling unit was checkpointed before the footer; the one that did not fit was never written.
          expectAll(log, full ? [...written, { record: record!, position: 500 }] : written)
          expectWellFormed(mem, log)
        }
      })
    }

    it(`an extra chunk created ahead of the checkpoint is removed (crash before the checkpoint moves into it, preallocate ${preallocate})`, () => {
      for (let seed = 1; seed <= 10; seed++) {
        let renamed = false
        const { mem, written } = crashWhen(
          config,
          seed,
          "strict",
          [300, 200],
          (op, path) => {
            if (op === "rename" && path === chunkPath(1)) renamed = true
            // The checkpoint write that moves into the new chunk, after the rename and its syncDir.
            return renamed && op === "write" && path.endsWith("writer.chk")
          },
          (log, prng) => {
            expect(
              Exit.isFailure(Effect.runSyncExit(log.write(log.prepare([{ records: [eventOfSize(prng, 600)] }]))))
            ).toBe(true)
          }
        )
        expect(filesIn(mem)).toContain("chunk-000001.000000")
        const extraId = chunkIdOf(mem, chunkPath(1))
        const log = openLog(mem.service, config, seed + 1000)
        // Removed, and a new chunk 1 created in its place (a different chunk id).
        expect(chunkIdOf(mem, chunkPath(1))).not.toBe(extraId)
        expect(log.writerPosition()).toBe(CS)
        expectAll(log, written)
        expectWellFormed(mem, log)
      }
    })
  }
})

describe("recovery: files left behind", () => {
  const config = logConfig({ chunkSize: CS, verifyOnOpen: true })

  /** A log with chunks 0..2 completed and chunk 3 ongoing, cleanly closed. */
  const fourChunks = (seed = 1) => {
    const prng = new Prng(seed)
    const mem = new MemoryDisk({ prng: prng.fork("disk") })
    const log = openLog(mem.service, config, seed)
    const written = writeSizes(log, prng, [600, 600, 600, 300, 300])
    expect(log.chunks().length).toBe(4)
    Effect.runSync(log.close)
    return { mem, written, prng }
  }

  it("a checkpoint exactly at a chunk boundary reopens cleanly", () => {
    const prng = new Prng(3)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, config)
    const written = writeSizes(log, prng, [400, CS - 400, CS])
    expect(log.writerPosition()).toBe(2 * CS)
    Effect.runSync(log.close)
    for (let i = 0; i < 2; i++) {
      const again = openLog(mem.service, config, 10 + i)
      expect(again.writerPosition()).toBe(2 * CS)
      expectAll(again, written)
      expectWellFormed(mem, again)
      Effect.runSync(again.close)
    }
  })

  it("an extra (empty, ongoing) chunk file ahead of the checkpoint is removed", () => {
    const { mem, written } = fourChunks()
    runOn(
      mem.service,
      Effect.asVoid(
        createChunkFile({
          dir: DIR,
          startNumber: 4,
          chunkSize: CS,
          chunkId: "00000000-0000-4000-8000-00000000000e",
          preallocate: false
        })
      )
    )
    const log = openLog(mem.service, config)
    expect(log.chunks().length).toBe(4)
    expect(filesIn(mem)).not.toContain("chunk-000004.000000")
    expectAll(log, written)
    // The removal is durable.
    mem.crash(new Prng(1), "strict")
    expect(filesIn(mem)).not.toContain("chunk-000004.000000")
  })

  it("two extra chunks are corruption, and nothing is removed", () => {
    const { mem } = fourChunks()
    for (const n of [4, 5]) {
      runOn(
        mem.service,
        Effect.asVoid(
          createChunkFile({
            dir: DIR,
            startNumber: n,
            chunkSize: CS,
            chunkId: "00000000-0000-4000-8000-00000000000e",
            preallocate: false
          })
        )
      )
    }
    const before = filesIn(mem).sort()
    expectCorrupt(
      reopen(mem.service, config),
      "past the writer checkpoint",
      "chunk-000004.000000",
      "chunk-000005.000000"
    )
    expect(filesIn(mem).sort()).toEqual(before)
  })

  it("a completed chunk ahead of the checkpoint is corruption", () => {
    const { mem } = fourChunks()
    // Point the checkpoint at the end of chunk 1's data: completed chunk 2 is then ahead of it.
    runOn(mem.service, mem.service.remove(chunkPath(3)))
    const cp = runOn(mem.service, openCheckpoint(`${DIR}/writer.chk`, 0))
    runOn(mem.service, cp.write(CS + 600))
    Effect.runSync(cp.close)
    const before = filesIn(mem).sort()
    expectCorrupt(reopen(mem.service, config), "past the writer checkpoint")
    expect(filesIn(mem).sort()).toEqual(before)
  })

  it("a checkpoint inside a completed chunk (not at its data end) is corruption, and nothing is removed", () => {
    const { mem } = fourChunks()
    runOn(mem.service, mem.service.remove(chunkPath(3)))
    const cp = runOn(mem.service, openCheckpoint(`${DIR}/writer.chk`, 0))
    // Chunk 2 holds 600 bytes; point into it and leave chunk 3 as an "extra" one.
    runOn(mem.service, cp.write(2 * CS + 100))
    Effect.runSync(cp.close)
    runOn(
      mem.service,
      Effect.asVoid(
        createChunkFile({
          dir: DIR,
          startNumber: 3,
          chunkSize: CS,
          chunkId: "00000000-0000-4000-8000-00000000000e",
          preallocate: false
        })
      )
    )
    const before = filesIn(mem).sort()
    expectCorrupt(reopen(mem.service, config), "inside completed chunk")
    expect(filesIn(mem).sort()).toEqual(before)
  })

  it("a missing chunk is corruption: in the middle, the first, the one holding the checkpoint", () => {
    for (const [missing, fragment] of [
      [1, "chunk 1 is missing"],
      [0, "chunk 0 is missing"],
      [3, "is missing"]
    ] as const) {
      const { mem } = fourChunks()
      runOn(mem.service, mem.service.remove(chunkPath(missing)))
      expectCorrupt(reopen(mem.service, config), fragment)
    }
  })

  it("missing chunks below a checkpoint at a chunk boundary are corruption, not a silently shorter log", () => {
    const prng = new Prng(5)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, config)
    writeSizes(log, prng, [CS, CS, CS])
    expect(log.writerPosition()).toBe(3 * CS)
    Effect.runSync(log.close)
    // Chunk 3 (empty, at the checkpoint) may be missing: a crash before it was created looks like that.
    runOn(mem.service, mem.service.remove(chunkPath(3)))
    const ok = reopen(mem.service, config)
    expect(Exit.isSuccess(ok)).toBe(true)
    if (Exit.isSuccess(ok)) Effect.runSync(ok.value.close)
    // Chunks 2 and 3 missing: chunk 2 held acknowledged records.
    runOn(mem.service, mem.service.remove(chunkPath(3)))
    runOn(mem.service, mem.service.remove(chunkPath(2)))
    expectCorrupt(reopen(mem.service, config), "chunk 2 is missing")
  })

  it("a missing writer.chk next to chunk files is corruption (not a log truncated to 0)", () => {
    const prng = new Prng(6)
    const mem = new MemoryDisk()
    const log = openLog(mem.service, config)
    writeSizes(log, prng, [100, 100])
    Effect.runSync(log.close)
    runOn(mem.service, mem.service.remove(`${DIR}/writer.chk`))
    expectCorrupt(reopen(mem.service, config), "writer.chk is missing")
    expect(mem.readFileSync(chunkPath(0)).length).toBe(HEADER_SIZE + 200)
  })

  it("leftover temp files are removed, durably", () => {
    const { mem, written } = fourChunks()
    for (const name of ["chunk-000004.000000.tmp", "chunk-000001.000001.tmp", "whatever.tmp"]) {
      const h = runOn(mem.service, mem.service.open(`${DIR}/${name}`, { create: true }))
      Effect.runSync(h.write(0, Buffer.from("junk")))
      Effect.runSync(h.sync)
      Effect.runSync(h.close)
    }
    runOn(mem.service, mem.service.syncDir(DIR))
    const log = openLog(mem.service, config)
    expect(filesIn(mem).filter((f) => f.endsWith(".tmp"))).toEqual([])
    expectAll(log, written)
    mem.crash(new Prng(2), "strict")
    expect(filesIn(mem).filter((f) => f.endsWith(".tmp"))).toEqual([])
  })

  it("an older chunk version next to a newer one: the newer wins and the older is removed", () => {
    const { mem, written } = fourChunks()
    // Version 1 of chunk 1 (what a scavenge would write: here the same records), and version 0 damaged.
    const bytes = mem.readFileSync(chunkPath(1))
    const h = runOn(mem.service, mem.service.open(chunkPath(1, 1), { create: true }))
    Effect.runSync(h.write(0, bytes))
    Effect.runSync(h.sync)
    Effect.runSync(h.close)
    runOn(mem.service, mem.service.syncDir(DIR))
    damage(mem, chunkPath(1), HEADER_SIZE + 20)
    const log = openLog(mem.service, config)
    expect(log.chunks()[1]!.path).toBe(chunkPath(1, 1))
    expect(filesIn(mem)).not.toContain("chunk-000001.000000")
    expectAll(log, written)
    mem.crash(new Prng(3), "strict")
    expect(filesIn(mem)).not.toContain("chunk-000001.000000")
  })
})

describe("recovery: damaged bytes", () => {
  const setup = (verifyOnOpen: boolean) => {
    const prng = new Prng(11)
    const mem = new MemoryDisk({ prng: prng.fork("disk") })
    const config = logConfig({ chunkSize: CS, verifyOnOpen })
    const log = openLog(mem.service, config)
    const written = writeSizes(log, prng, [300, 300, 300, 300, 300, 300, 300, 200])
    // Chunks: 0 = [0, 300, 600], 1 = [1024, 1324, 1624], 2 = [2048, 2348] (active).
    Effect.runSync(log.close)
    return { mem, config, written }
  }

  it("a completed chunk with a damaged byte fails to open when verifyOnOpen is set, with a clear message", () => {
    const { mem, config } = setup(true)
    damage(mem, chunkPath(1), HEADER_SIZE + 300 + 150)
    const error = expectCorrupt(reopen(mem.service, config), "chunk-000001.000000", "checksum mismatch")
    expect(error.message).toMatch(/damaged/)
  })

  it("without verifyOnOpen the log opens, and only reads of the damaged record fail with StorageCorrupt", () => {
    const { mem, config, written } = setup(false)
    damage(mem, chunkPath(1), HEADER_SIZE + 300 + 150) // inside the record at 1324
    const log = openLog(mem.service, config)
    const writer = log.writerPosition()
    for (const w of written) {
      const exit = Effect.runSyncExit(log.readRecord(w.position, writer))
      if (w.position === 1324) {
        expectCorrupt(exit, "chunk-000001.000000", "1324", "damaged")
      } else {
        expect(Exit.isSuccess(exit) && exit.value !== undefined && sameRecord(exit.value, w.record, w.position)).toBe(
          true
        )
      }
    }
    expectCorrupt(Effect.runSyncExit(log.scanForward(0, writer, 100)), "damaged")
    expectCorrupt(Effect.runSyncExit(log.scanBackward(writer, writer, 100)), "damaged")
    // Scans that do not touch it work.
    expect(Effect.runSync(log.scanForward(1624, writer, 100)).records.length).toBe(3)
    expect(Effect.runSync(log.scanBackward(1324, writer, 100)).records.length).toBe(4)
  })

  it("damage in the active chunk below the checkpoint is StorageCorrupt on read", () => {
    const { mem, config, written } = setup(true)
    damage(mem, chunkPath(2), HEADER_SIZE + 300 + 8) // the record at 2348
    const log = openLog(mem.service, config)
    expectCorrupt(Effect.runSyncExit(log.readRecord(2348, log.writerPosition())), "2348")
    expect(Effect.runSync(log.readRecord(2048, log.writerPosition()))).toBeDefined()
    expect(written.length).toBe(8)
  })

  it("a damaged length prefix is StorageCorrupt, never a read past the data", () => {
    const { mem, config } = setup(false)
    const h = runOn(mem.service, mem.service.open(chunkPath(0)))
    Effect.runSync(h.write(HEADER_SIZE + 300, Buffer.from([0xff, 0xff, 0xff, 0x7f])))
    Effect.runSync(h.sync)
    const log = openLog(mem.service, config)
    expectCorrupt(Effect.runSyncExit(log.readRecord(300, log.writerPosition())), "300")
    expectCorrupt(Effect.runSyncExit(log.scanForward(0, log.writerPosition(), 100)))
  })

  it("a damaged footer or header is StorageCorrupt at open", () => {
    for (const [offset, fragment] of [
      [-5, "footer checksum mismatch"],
      [HEADER_SIZE - 60, "header"]
    ] as const) {
      const { mem, config } = setup(false)
      const size = mem.readFileSync(chunkPath(1)).length
      damage(mem, chunkPath(1), offset < 0 ? size + offset : offset)
      expectCorrupt(reopen(mem.service, config), "chunk-000001.000000", fragment)
    }
  })

  it("a flipped bit on the way from the disk is reported, and not cached: the next read is clean", () => {
    const { mem, config, written } = setup(false)
    const log = openLog(mem.service, config)
    const writer = log.writerPosition()
    mem.setFaults({ bitFlipOnRead: 1 })
    let corrupt = 0
    for (const w of written) {
      const exit = Effect.runSyncExit(log.readRecord(w.position, writer))
      if (Exit.isFailure(exit)) {
        expectCorrupt(exit)
        corrupt++
      }
    }
    expect(corrupt).toBeGreaterThan(0)
    mem.setFaults(undefined)
    expectAll(log, written)
  })
})

describe("recovery: record data shaped like a footer", () => {
  /** Sets the 4 bytes at `at` so that checksum(buf[start, end)) === target (CRCs are affine over GF(2)). */
  const forgeCrc = (buf: Buffer, start: number, end: number, at: number, target: number) => {
    buf.fill(0, at, at + 4)
    const flip = (i: number) => (buf[at + (i >> 3)] = buf[at + (i >> 3)]! ^ (1 << (i & 7)))
    const base = checksum(buf, start, end)
    const cols: Array<number> = []
    for (let i = 0; i < 32; i++) {
      flip(i)
      cols.push((checksum(buf, start, end) ^ base) >>> 0)
      flip(i)
    }
    const want = (base ^ target) >>> 0
    const rows = Array.from({ length: 32 }, (_, b) => {
      let mask = 0
      for (let i = 0; i < 32; i++) if ((cols[i]! >>> b) & 1) mask |= 1 << i
      return { mask: mask >>> 0, rhs: (want >>> b) & 1 }
    })
    const pivot: Array<number> = []
    let r = 0
    for (let i = 0; i < 32; i++) {
      const p = rows.findIndex((row, k) => k >= r && ((row.mask >>> i) & 1) === 1)
      if (p < 0) continue
      ;[rows[r], rows[p]] = [rows[p]!, rows[r]!]
      for (let k = 0; k < 32; k++) {
        if (k !== r && ((rows[k]!.mask >>> i) & 1) === 1) {
          rows[k]!.mask = (rows[k]!.mask ^ rows[r]!.mask) >>> 0
          rows[k]!.rhs ^= rows[r]!.rhs
        }
      }
      pivot[i] = r++
    }
    for (let i = 0; i < 32; i++) if (pivot[i] !== undefined && rows[pivot[i]!]!.rhs === 1) flip(i)
    expect(checksum(buf, start, end)).toBe(target)
  }

  /** An event of `framed` bytes whose last 128 bytes form a footer claiming the given sizes (a client can send this). */
  const footerShapedEvent = (framed: number, physicalDataSize: number, logicalDataSize: number): NewRecord => {
    const body = framed - 12
    const footer = encodeFooterPrefix({ physicalDataSize, logicalDataSize, posMapCount: 0 })
    // Footer bytes 124..128 are the footer's own CRC; in the file they are the record's length suffix.
    forgeCrc(footer, 0, 124, 40, body)
    return {
      kind: RecordKind.Event,
      flags: EventFlags.BatchBegin | EventFlags.BatchEnd,
      eventNumber: 0,
      createdMicros: 0,
      eventId: "00000000-0000-4000-8000-0000000000aa",
      stream: "s",
      eventType: "T",
      data: Buffer.alloc(body - 60 - 2 - 124, 0x61),
      metadata: footer.subarray(0, 124)
    }
  }

  it("an ongoing chunk that ends in a footer-shaped record is not taken as completed on reopen", () => {
    const prng = new Prng(21)
    const mem = new MemoryDisk()
    const config = logConfig({ chunkSize: 4096, preallocate: false, verifyOnOpen: false })
    const log = openLog(mem.service, config)
    const written = writeSizes(log, prng, [300])
    const framed = 700
    const end = 300 + framed // the file will be HEADER_SIZE + end bytes
    const event = footerShapedEvent(framed, HEADER_SIZE + end - 256, end)
    const b = writeUnits(log, [{ records: [event] }])
    written.push({ record: event, position: b.positions[0]![0]! })
    Effect.runSync(log.close)
    const again = openLog(mem.service, config)
    expect(again.writerPosition()).toBe(end)
    expect(again.chunks().length).toBe(1)
    expect(again.chunks()[0]!.footer).toBeUndefined()
    expectAll(again, written)
    const more = writeSizes(again, prng, [100])
    expectAll(again, [...written, ...more])
  })

  for (const preallocate of [false, true]) {
    it(`a full chunk ending in a footer-shaped record, crashed before its real footer, is completed properly (preallocate ${preallocate})`, () => {
      for (const mode of MODES) {
        const config = logConfig({ chunkSize: 4096, preallocate, verifyOnOpen: false })
        const framed = 4096 - 300
        const event = footerShapedEvent(framed, 4096 - 128, 4096 - 128)
        const { mem, written } = crashWhen(
          config,
          5,
          mode,
          [300],
          (op, path, pos) => op === "write" && path === chunkPath(0) && pos === HEADER_SIZE + 4096,
          (log) => {
            expect(Exit.isFailure(Effect.runSyncExit(log.write(log.prepare([{ records: [event] }]))))).toBe(true)
          }
        )
        const log = openLog(mem.service, config)
        expect(log.writerPosition()).toBe(4096)
        expect(log.chunks()[0]!.footer?.physicalDataSize).toBe(4096)
        expectAll(log, [...written, { record: event, position: 300 }])
        expectWellFormed(mem, log)
      }
    })
  }
})
