/**
 * Crash safety of chunk replacement: the power is cut before the k-th mutating Disk operation of a
 * replacement, for every k until the replacement runs through (so the cut lands on the temp file's open,
 * each write, its sync, the rename, the directory sync, each removal of a replaced file and the last
 * directory sync), then the MemoryDisk crashes (strict: nothing undurable survives; random: each undurable
 * change survives or not) — sometimes again in the middle of the recovery — and the log is reopened.
 * After every reopen:
 *   (a) the log opens, with no leftover (temp file, older version, superseded file);
 *   (b) its content is exactly the old one or exactly the new one (every kept record readable through every
 *       read path, removed ones either all there or all gone), never a mix; the new one whenever the
 *       replacement had returned success;
 *   (c) the writer accepts and returns new records.
 */
import { describe, expect, it } from "vitest"
import { Effect, Exit } from "effect"
import { Prng, type CrashMode } from "@vellum/platform"
import { decodeHeader, parseChunkFileName } from "../src/log/chunkFormat.js"
import {
  DIR,
  filesIn,
  logConfig,
  openLog,
  powerCutDisk,
  sameRecord,
  sealUnit,
  writeUnits,
  type PowerCut
} from "./log-support.js"
import {
  CHUNK_SIZE,
  Model,
  buildLog,
  checkContent,
  checkFiles,
  keepByPosition,
  type Built
} from "./log-rewrite-support.js"

interface Scenario {
  readonly name: string
  /** Replacements done before the one that is cut. */
  readonly before: ReadonlyArray<readonly [number, number, number | undefined]>
  /** The replacement that is cut: first, last, salt of the predicate (undefined: keep everything). */
  readonly target: readonly [number, number, number | undefined]
}

const SCENARIOS: ReadonlyArray<Scenario> = [
  { name: "chunk execution", before: [], target: [2, 2, 1] },
  { name: "execution of a merged chunk", before: [[1, 2, undefined]], target: [1, 2, 2] },
  {
    name: "merge of 0, 1..2, 3",
    before: [
      [0, 0, 3],
      [1, 2, undefined]
    ],
    target: [0, 3, undefined]
  },
  { name: "merge that also scavenges", before: [[1, 2, undefined]], target: [0, 3, 4] }
]

const keepOf = (salt: number | undefined) => (salt === undefined ? () => true : keepByPosition(salt))

interface Stats {
  runs: number
  sawOld: number
  sawNew: number
  superseded: number
  recoveryCrashes: number
  cutAt: Map<string, number>
}

/** Files left by the crash inside the range of a higher-versioned file starting at `first` (open must remove them). */
const supersededOnDisk = (built: Built, first: number, last: number): number => {
  const names = filesIn(built.mem).filter((n) => parseChunkFileName(n) !== undefined)
  const covering = names.some((n) => {
    const header = decodeHeader(built.mem.readFileSync(`${DIR}/${n}`))
    return typeof header !== "string" && header.startNumber === first && header.endNumber === last
  })
  return covering
    ? names.filter((n) => parseChunkFileName(n)!.startNumber > first && parseChunkFileName(n)!.startNumber <= last)
        .length
    : 0
}

const runScenario = (scenario: Scenario, seed: number, mode: CrashMode, stats: Stats) => {
  const [first, last, salt] = scenario.target
  const prng = new Prng(seed).fork(`${scenario.name}/${mode}`)
  // k = -1: the power goes at the first write of the new file (reads come before it in the budget order).
  for (let k = -1; k < 100; k++) {
    let armed = false
    const built = buildLog(
      seed,
      5,
      k === -1 ? (op, path) => armed && op === "write" && path.endsWith(".scavenge.tmp") : undefined
    )
    const { mem, cut, log } = built
    const model = new Model(built.written)
    for (const [f, l, s] of scenario.before) {
      model.remove(f, l, keepOf(s))
      Effect.runSync(log.replaceChunks(f, l, keepOf(s)))
    }
    const after = model.clone()
    after.remove(first, last, keepOf(salt))
    if (k >= 0) cut.budget = cut.used + k
    armed = true
    const exit = Effect.runSyncExit(log.replaceChunks(first, last, keepOf(salt)))
    if (cut.cutAt !== undefined) stats.cutAt.set(cut.cutAt, (stats.cutAt.get(cut.cutAt) ?? 0) + 1)
    const finished = Exit.isSuccess(exit) && cut.cutAt === undefined
    mem.crash(prng, mode)
    stats.superseded += supersededOnDisk(built, first, last) > 0 ? 1 : 0

    // Sometimes the power goes again while recovery repairs.
    if (mode === "random" && prng.chance(0.3)) {
      const again: PowerCut = { budget: prng.int(0, 6), used: 0, cutAt: undefined }
      const reopen = Effect.runSyncExit(
        Effect.sync(() => openLog(powerCutDisk(mem, again), logConfig({ chunkSize: CHUNK_SIZE }), seed))
      )
      if (Exit.isFailure(reopen)) {
        stats.recoveryCrashes++
        mem.crash(prng, mode)
      } else Effect.runSync(reopen.value.close)
    }

    const where = `${scenario.name}, seed ${seed}, ${mode}, cut before operation ${k} (${cut.cutAt ?? "none"})`
    const reopened = openLog(mem.service, logConfig({ chunkSize: CHUNK_SIZE }), seed)
    try {
      checkFiles(mem, reopened)
      let isNew = true
      try {
        checkContent(reopened, after)
      } catch (newError) {
        if (Exit.isSuccess(exit)) throw newError
        isNew = false
        checkContent(reopened, model)
      }
      // For a merge that keeps everything the content is the same either way: the files tell.
      const covering = reopened.chunks().find((c) => c.header.startNumber === first)!
      if (salt === undefined) isNew = covering.header.endNumber === last
      if (Exit.isSuccess(exit) && !isNew) throw new Error("the replacement succeeded but the old files came back")
      if (isNew) {
        expect([covering.header.startNumber, covering.header.endNumber, covering.header.isScavenged]).toEqual([
          first,
          last,
          true
        ])
        stats.sawNew++
      } else stats.sawOld++
      const record = sealUnit([built.written[0]!.record])[0]!
      const batch = writeUnits(reopened, [{ records: [record] }])
      const position = batch.positions[0]![0]!
      const r = Effect.runSync(reopened.readRecord(position, reopened.writerPosition()))
      if (r === undefined || !sameRecord(r, record, position))
        throw new Error("a record written after recovery is not readable")
    } catch (error) {
      throw new Error(`${where}: ${error instanceof Error ? error.message : String(error)}`)
    }
    stats.runs++
    if (finished) return
  }
  throw new Error(`${scenario.name}: the replacement never finished`)
}

describe("replaceChunks: crash at every step", () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: the reopened log holds the old or the new content, never a mix`, () => {
      const stats: Stats = { runs: 0, sawOld: 0, sawNew: 0, superseded: 0, recoveryCrashes: 0, cutAt: new Map() }
      for (const seed of [1, 2]) {
        runScenario(scenario, seed, "strict", stats)
        for (let repeat = 0; repeat < 3; repeat++) runScenario(scenario, seed * 100 + repeat, "random", stats)
      }
      // The cuts covered the whole replacement and both outcomes happened.
      for (const op of ["exists", "read", "write", "sync", "rename", "syncDir", "remove"])
        expect(stats.cutAt.get(op) ?? 0).toBeGreaterThan(0)
      expect(stats.sawOld).toBeGreaterThan(0)
      expect(stats.sawNew).toBeGreaterThan(0)
      expect(stats.recoveryCrashes).toBeGreaterThan(0)
      if (scenario.name.startsWith("merge")) expect(stats.superseded).toBeGreaterThan(0)
    })
  }
})
