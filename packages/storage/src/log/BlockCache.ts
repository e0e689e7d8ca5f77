/**
 * A read cache of fixed-size blocks of chunk files, bounded in bytes (LRU).
 *
 * Reads of the log go through it so that a page of events costs one disk read, not one per record.
 * Entries are keyed by a file's cache id (a chunk file replaced by a scavenge gets a new id, so stale
 * blocks are never served) and block number. A block shorter than the block size (the end of the data
 * written so far) is refetched when a read needs bytes past it: bytes below the writer checkpoint never
 * change, so a cached prefix is always valid.
 *
 * The caller says where the valid bytes of the file end (`validEnd`: a chunk's data end), and nothing at
 * or past it is cached: a preallocated active chunk reads as zeros past its data, and a block cached with
 * those zeros would keep serving them after the writer filled them in.
 */
import { Effect } from "effect"
import type { DiskError, FileHandle } from "@vellum/platform"

export const BLOCK_SIZE = 64 * 1024

interface Block {
  readonly bytes: Buffer
}

export class BlockCache {
  private readonly blocks = new Map<string, Block>()
  private bytes = 0
  hits = 0
  misses = 0

  constructor(readonly capacityBytes: number) {}

  private key(fileId: number, block: number): string {
    return `${fileId}:${block}`
  }

  private touch(key: string, block: Block): void {
    this.blocks.delete(key)
    this.blocks.set(key, block)
  }

  private put(key: string, bytes: Buffer): void {
    const old = this.blocks.get(key)
    if (old !== undefined) {
      this.bytes -= old.bytes.length
      this.blocks.delete(key)
    }
    if (this.capacityBytes <= 0) return
    this.blocks.set(key, { bytes })
    this.bytes += bytes.length
    while (this.bytes > this.capacityBytes) {
      const first = this.blocks.entries().next()
      if (first.done) break
      this.blocks.delete(first.value[0])
      this.bytes -= first.value[1].bytes.length
    }
  }

  /** Bytes [start, end) of the file if every block needed is cached with enough bytes; else undefined. */
  tryRange(fileId: number, start: number, end: number): Buffer | undefined {
    const first = Math.floor(start / BLOCK_SIZE)
    const last = Math.floor((end - 1) / BLOCK_SIZE)
    if (first === last) {
      const key = this.key(fileId, first)
      const block = this.blocks.get(key)
      const from = start - first * BLOCK_SIZE
      if (block === undefined || block.bytes.length < end - first * BLOCK_SIZE) return undefined
      this.touch(key, block)
      this.hits++
      return block.bytes.subarray(from, from + (end - start))
    }
    const parts: Array<Buffer> = []
    for (let b = first; b <= last; b++) {
      const key = this.key(fileId, b)
      const block = this.blocks.get(key)
      const blockStart = b * BLOCK_SIZE
      const need = Math.min(end, blockStart + BLOCK_SIZE) - blockStart
      if (block === undefined || block.bytes.length < need) return undefined
      this.touch(key, block)
      parts.push(block.bytes.subarray(Math.max(start, blockStart) - blockStart, need))
    }
    this.hits++
    return Buffer.concat(parts)
  }

  /**
   * Bytes [start, end) of the file (fewer if the file or its valid bytes end first), reading every missing
   * block in one disk read. Bytes at or past `validEnd` (the end of what the writer has written) are
   * neither returned nor cached; blocks are cached as far as the valid bytes go.
   */
  range(fileId: number, handle: FileHandle, start: number, end: number, validEnd: number): Effect.Effect<Buffer, DiskError> {
    end = Math.min(end, validEnd)
    if (end <= start) return Effect.succeed(Buffer.alloc(0))
    const hit = this.tryRange(fileId, start, end)
    if (hit !== undefined) return Effect.succeed(hit)
    this.misses++
    const first = Math.floor(start / BLOCK_SIZE)
    const last = Math.floor((end - 1) / BLOCK_SIZE)
    const readStart = first * BLOCK_SIZE
    return Effect.map(handle.read(readStart, Math.min((last - first + 1) * BLOCK_SIZE, validEnd - readStart)), (buf) => {
      for (let b = first; b <= last; b++) {
        const off = (b - first) * BLOCK_SIZE
        if (off >= buf.length) break
        // Copy: the read buffer may be large; keep only one block's bytes per entry.
        this.put(this.key(fileId, b), Buffer.from(buf.subarray(off, Math.min(buf.length, off + BLOCK_SIZE))))
      }
      return buf.subarray(start - readStart, Math.min(buf.length, end - readStart))
    })
  }

  /** Forgets every block of a file (its file was replaced or truncated). */
  evictFile(fileId: number): void {
    const prefix = `${fileId}:`
    for (const [key, block] of this.blocks) {
      if (key.startsWith(prefix)) {
        this.blocks.delete(key)
        this.bytes -= block.bytes.length
      }
    }
  }

  get residentBytes(): number {
    return this.bytes
  }
}
