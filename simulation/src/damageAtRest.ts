/**
 * Damage to acknowledged data at rest: between a crash and the next start, a bit flips in a record of the
 * active chunk past the durable writer checkpoint that a valid record follows — synced bytes, acknowledged
 * or at least whole on disk, which open must not mistake for a torn tail. The writer checkpoint is synced
 * lazily (one fsync per batch), so such records are there in most crashes.
 *
 * The rule (the storage's tailRecovery.ts) makes the outcome exact: the next open must refuse with
 * StorageCorrupt naming the chunk file and the damaged record's position. Anything else — an open that
 * succeeds has cut acknowledged records silently — fails the run. Once refused, the simulator puts the bit
 * back (an operator restoring the chunk from a backup) and the node opens on the repaired disk, where the
 * checkers verify that every acknowledged write is there.
 */
import type { MemoryDisk, Prng } from "@vellum/platform"
import {
  CHUNK_HEADER_SIZE,
  DEFAULT_CHECKPOINT_LAG,
  decodeRecord,
  parseChunkFileName,
  readCheckpointValue
} from "@vellum/storage"

export interface PlantedDamage {
  /** The chunk file's path. */
  readonly path: string
  /** The damaged record's log position: where the refusal must say the damage is. */
  readonly position: number
  readonly offset: number
  readonly bit: number
}

/**
 * Flips a bit of a record of the active chunk in `dir` that lies past the durable writer checkpoint and that
 * a valid record follows within the checkpoint's lag (`lag`, the node's setting); undefined (nothing changed)
 * when there is no such record. Call it after `disk.crash`.
 */
export const plantDamage = (
  disk: MemoryDisk,
  dir: string,
  chunkSize: number,
  lag: number | undefined,
  prng: Prng
): PlantedDamage | undefined => {
  const files = disk.files()
  const checkpointPath = `${dir}/writer.chk`
  if (!files.includes(checkpointPath)) return undefined
  const checkpoint = readCheckpointValue(disk.readFileSync(checkpointPath))
  if (checkpoint === undefined) return undefined
  // The newest version of the chunk holding the checkpoint.
  const startNumber = Math.floor(checkpoint / chunkSize)
  let path: string | undefined
  let version = -1
  for (const file of files) {
    if (!file.startsWith(`${dir}/`)) continue
    const parsed = parseChunkFileName(file.slice(dir.length + 1))
    if (parsed?.startNumber === startNumber && parsed.version > version) {
      path = file
      version = parsed.version
    }
  }
  if (path === undefined) return undefined
  const bytes = disk.readFileSync(path)
  const start = startNumber * chunkSize
  const windowEnd = checkpoint + (lag ?? DEFAULT_CHECKPOINT_LAG)
  // The valid records from the checkpoint on, in order.
  const records: Array<{ readonly position: number; readonly length: number }> = []
  for (let position = checkpoint; ;) {
    const offset = CHUNK_HEADER_SIZE + position - start
    if (offset >= Math.min(bytes.length, CHUNK_HEADER_SIZE + chunkSize)) break
    const result = decodeRecord(bytes, offset, Math.min(bytes.length, CHUNK_HEADER_SIZE + chunkSize), position)
    if (!result.ok) break
    records.push({ position, length: result.length })
    position += result.length
  }
  // A record the next one follows, within the window open searches.
  const candidates = records.filter((r, i) => i + 1 < records.length && records[i + 1]!.position <= windowEnd)
  if (candidates.length === 0) return undefined
  const target = prng.pick(candidates)
  const offset = CHUNK_HEADER_SIZE + target.position - start + prng.int(0, target.length - 1)
  const bit = prng.int(0, 7)
  disk.flipBitAtRest(path, offset, bit)
  return { path, position: target.position, offset, bit }
}

/** Puts the flipped bit back. */
export const repairDamage = (disk: MemoryDisk, damage: PlantedDamage): void =>
  disk.flipBitAtRest(damage.path, damage.offset, damage.bit)

/** Whether an open's failure is the refusal the damage calls for: StorageCorrupt naming chunk and position. */
export const isRefusalOf = (damage: PlantedDamage, failure: string): boolean =>
  failure.includes(damage.path) && failure.includes(`log position ${damage.position} is damaged`)
