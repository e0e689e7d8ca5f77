/**
 * Which chunk files of a log directory are the log, and which are leftovers of an interrupted chunk
 * replacement (scavenge execution or merge, see ChunkReplacer.ts). A replacement writes its new file under
 * a temp name, renames it to `chunk-{first}.{v+1}` and only then removes the files it replaces, so a crash
 * can leave, next to the new file:
 *   - its temp file (the new file never became the log: removed);
 *   - the replaced file with the same start number and a lower version (removed: the highest version of a
 *     start wins);
 *   - replaced files whose start number lies inside the new file's start..end range (superseded: removed).
 * Any other overlap of ranges was not made by a replacement and is reported as corruption.
 */
import type { ChunkFile } from "./ChunkFile.js"
import { isTempFileName, parseChunkFileName } from "./chunkFormat.js"

export interface ChunkNames {
  /** Name of the highest version of each start number, by start number. */
  readonly latest: ReadonlyMap<number, string>
  /** Temp files: never part of the log. */
  readonly temps: ReadonlyArray<string>
  /** Lower versions of a start: to remove once the highest version is known to be intact. */
  readonly older: ReadonlyArray<{ readonly startNumber: number; readonly name: string }>
}

/** Sorts a directory listing into the current chunk file names and leftovers. */
export const chunkNames = (names: ReadonlyArray<string>): ChunkNames => {
  const best = new Map<number, { version: number; name: string }>()
  const older: Array<{ startNumber: number; name: string }> = []
  for (const name of names) {
    const parsed = parseChunkFileName(name)
    if (parsed === undefined) continue
    const seen = best.get(parsed.startNumber)
    if (seen === undefined || parsed.version > seen.version) {
      if (seen !== undefined) older.push({ startNumber: parsed.startNumber, name: seen.name })
      best.set(parsed.startNumber, { version: parsed.version, name })
    } else older.push({ startNumber: parsed.startNumber, name })
  }
  const latest = new Map<number, string>()
  for (const [start, { name }] of best) latest.set(start, name)
  return { latest, temps: names.filter(isTempFileName), older }
}

export interface ChunkCover {
  /** The files that make up the log, ascending, with disjoint ranges. */
  readonly live: ReadonlyArray<ChunkFile>
  /** Files inside the range of a completed scavenged file that starts before them. */
  readonly superseded: ReadonlyArray<ChunkFile>
  /** The live files that supersede others (to verify before the others are removed). */
  readonly covers: ReadonlyArray<ChunkFile>
}

/**
 * Drops the files a replacement superseded from `opened` (sorted by start number). A string says why the
 * files cannot be a log: an overlap that no replacement leaves behind.
 */
export const resolveSuperseded = (opened: ReadonlyArray<ChunkFile>): ChunkCover | string => {
  const live: Array<ChunkFile> = []
  const superseded: Array<ChunkFile> = []
  const covers = new Set<ChunkFile>()
  for (const chunk of opened) {
    const cover = live[live.length - 1]
    if (cover === undefined || chunk.header.startNumber > cover.header.endNumber) {
      live.push(chunk)
      continue
    }
    // A replacement covers whole files and is completed (synced) before it gets its name.
    const replaced =
      cover.header.isScavenged && cover.footer !== undefined && chunk.header.endNumber <= cover.header.endNumber
    if (!replaced) {
      return `${chunk.path} (chunks ${chunk.header.startNumber}-${chunk.header.endNumber}) overlaps ${cover.path} (chunks ${cover.header.startNumber}-${cover.header.endNumber})`
    }
    superseded.push(chunk)
    covers.add(cover)
  }
  return { live, superseded, covers: [...covers] }
}
