/**
 * A read cache of fixed-size blocks of chunk files, bounded in bytes.
 *
 * Reads of the log go through it so that a page of events costs one disk read, not one per record.
 * Entries are keyed by a file's cache id (a chunk file replaced by a scavenge gets a new id, so stale
 * blocks are never served) and block number, packed into one number so a lookup builds no string. A block
 * shorter than the block size (the end of the data written so far) is refetched when a read needs bytes
 * past it: bytes below the writer checkpoint never change, so a cached prefix is always valid.
 *
 * The caller says where the valid bytes of the file end (`validEnd`: a chunk's data end), and nothing at
 * or past it is cached: a preallocated active chunk reads as zeros past its data, and a block cached with
 * those zeros would keep serving them after the writer filled them in.
 */
import { Effect } from "effect"
import type { DiskError, FileHandle } from "@vellum/platform"
import { GenerationalCache } from "../cache/GenerationalCache.js"

export const BLOCK_SIZE = 64 * 1024

/** Blocks per file id in the packed key: 2^24 blocks of 64 KiB is 1 TiB per file. */
const FILE_STRIDE = 0x1000000

const keyOf = (fileId: number, block: number): number => fileId * FILE_STRIDE + block

export class BlockCache {
  private readonly blocks: GenerationalCache<number, Buffer>
  hits = 0
  misses = 0
  /** How many times a file's blocks were forgotten: what a cache of things decoded from blocks checks. */
  evictions = 0

  constructor(readonly capacityBytes: number) {
    this.blocks = new GenerationalCache(capacityBytes, (bytes) => bytes.length)
  }

  /**
   * The cached block holding bytes [start, end) when that range lies inside one block that is cached with
   * enough bytes (the caller reads at `start % BLOCK_SIZE`); else undefined. No copy, no view: the hot path
   * of reading one record.
   */
  blockHolding(fileId: number, start: number, end: number): Buffer | undefined {
    const block = Math.floor(start / BLOCK_SIZE)
    if (Math.floor((end - 1) / BLOCK_SIZE) !== block) return undefined
    const bytes = this.blocks.get(keyOf(fileId, block))
    if (bytes === undefined || bytes.length < end - block * BLOCK_SIZE) return undefined
    this.hits++
    return bytes
  }

  /** Bytes [start, end) of the file if every block needed is cached with enough bytes; else undefined. */
  tryRange(fileId: number, start: number, end: number): Buffer | undefined {
    const first = Math.floor(start / BLOCK_SIZE)
    const last = Math.floor((end - 1) / BLOCK_SIZE)
    if (first === last) {
      const bytes = this.blockHolding(fileId, start, end)
      const from = start - first * BLOCK_SIZE
      return bytes?.subarray(from, from + (end - start))
    }
    const parts: Array<Buffer> = []
    for (let b = first; b <= last; b++) {
      const bytes = this.blocks.get(keyOf(fileId, b))
      const blockStart = b * BLOCK_SIZE
      const need = Math.min(end, blockStart + BLOCK_SIZE) - blockStart
      if (bytes === undefined || bytes.length < need) return undefined
      parts.push(bytes.subarray(Math.max(start, blockStart) - blockStart, need))
    }
    this.hits++
    return Buffer.concat(parts)
  }

  /**
   * Bytes [start, end) of the file (fewer if the file or its valid bytes end first), reading every missing
   * block in one disk read (with the blocks of `fetch`, if given). Bytes at or past `validEnd` (the end of
   * what the writer has written) are neither returned nor cached; blocks are cached as far as the valid
   * bytes go.
   */
  range(
    fileId: number,
    handle: FileHandle,
    start: number,
    end: number,
    validEnd: number,
    fetch?: { readonly start: number; readonly end: number }
  ): Effect.Effect<Buffer, DiskError> {
    end = Math.min(end, validEnd)
    if (end <= start) return Effect.succeed(Buffer.alloc(0))
    const hit = this.tryRange(fileId, start, end)
    if (hit !== undefined) return Effect.succeed(hit)
    this.misses++
    // `fetch` widens the disk read (a scan reads ahead, so its next spans are cached), never the answer.
    const first = Math.floor(Math.max(0, Math.min(start, fetch?.start ?? start)) / BLOCK_SIZE)
    const last = Math.floor((Math.min(validEnd, Math.max(end, fetch?.end ?? end)) - 1) / BLOCK_SIZE)
    const readStart = first * BLOCK_SIZE
    return Effect.map(
      handle.read(readStart, Math.min((last - first + 1) * BLOCK_SIZE, validEnd - readStart)),
      (buf) => {
        for (let b = first; b <= last; b++) {
          const off = (b - first) * BLOCK_SIZE
          if (off >= buf.length) break
          // Copy: the read buffer may be large; keep only one block's bytes per entry.
          this.blocks.set(keyOf(fileId, b), Buffer.from(buf.subarray(off, Math.min(buf.length, off + BLOCK_SIZE))))
        }
        return buf.subarray(start - readStart, Math.min(buf.length, end - readStart))
      }
    )
  }

  /** Forgets every block of a file (its file was replaced or truncated). */
  evictFile(fileId: number): void {
    this.evictions++
    this.blocks.deleteWhere((key) => Math.floor(key / FILE_STRIDE) === fileId)
  }

  get residentBytes(): number {
    return this.blocks.weight
  }
}
