/**
 * Helpers for the position-map tests over whole logs (log-posmap*.test.ts): a log of 64 KiB chunks of
 * 100-byte records (655 a chunk) whose chunk 1 is scavenged to a chosen number of records, spread over it
 * (some next to each other, some with removed records between), and the positions worth probing around them.
 */
import { Effect } from "effect"
import { MemoryDisk, Prng } from "@vellum/platform"
import { Model, type Placed } from "./log-rewrite-support.js"
import { eventOfSize, logConfig, openLog, writeUnits } from "./log-support.js"

export const CHUNK = 64 * 1024
export const RECORD = 100

export const sized = (count: number) => {
  const mem = new MemoryDisk()
  const config = logConfig({ chunkSize: CHUNK, verifyOnOpen: false })
  const log = openLog(mem.service, config, count + 1)
  const prng = new Prng(count + 7)
  const written: Array<Placed> = []
  while (log.writerPosition() < 2 * CHUNK + 40 * RECORD) {
    const record = eventOfSize(prng, RECORD)
    written.push({ record, position: writeUnits(log, [{ records: [record] }]).positions[0]![0]! })
  }
  const inChunk = written.filter((w) => w.position >= CHUNK && w.position < 2 * CHUNK)
  const kept = new Set<number>()
  for (let i = 0; i < count; i++) kept.add(inChunk[Math.floor((i * inChunk.length) / Math.max(count, 1))]!.position)
  for (let i = 0; kept.size < count; i++) kept.add(inChunk[i]!.position)
  const keep = (r: { readonly logPosition: number }) =>
    r.logPosition < CHUNK || r.logPosition >= 2 * CHUNK || kept.has(r.logPosition)
  const model = new Model(written, CHUNK)
  model.remove(1, 1, keep)
  const replaced = Effect.runSync(log.replaceChunks(1, 1, keep))
  if (replaced.kept !== count) throw new Error(`kept ${replaced.kept} records, wanted ${count}`)
  return { mem, config, log, model, inChunk, kept: [...kept].sort((a, b) => a - b) }
}

export const visiblePositions = (model: Model): Array<number> => model.visible().map((w) => w.position)

/** Positions around every given kept record and at chunk 1's edges (for at-or-after and before). */
export const probes = (kept: ReadonlyArray<number>): Array<number> => {
  const out = new Set<number>([
    CHUNK,
    CHUNK + 1,
    2 * CHUNK - 1,
    2 * CHUNK,
    CHUNK + 655 * RECORD,
    CHUNK + 655 * RECORD + 1
  ])
  for (const p of kept) for (const d of [-RECORD, -1, 0, 1, RECORD - 1]) out.add(p + d)
  return [...out].filter((p) => p >= CHUNK && p <= 2 * CHUNK).sort((a, b) => a - b)
}
