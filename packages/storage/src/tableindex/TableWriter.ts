/**
 * Writes a sorted entry source to a table file (format in Table.ts): entries streamed in large chunks, one
 * Disk write per chunk, then fences + bloom + footer in one write, the header last, then `sync`.
 *
 * It is the one way tables are made: the memtable flush, level merges and (later) the index scavenger,
 * which will wrap a source with a filter. The caller makes the directory entry durable (syncDir) before
 * it lists the table in the manifest. An out-of-order source is a bug in the caller: it dies.
 */
import { Effect } from "effect"
import { AssertionFailed, Disk, type DiskError, type FileHandle } from "@vellum/platform"
import { checksum, checksumUpdate } from "../codec/checksum.js"
import { BLOOM_PROBES, bloomAdd, bloomWordsFor } from "./Bloom.js"
import { allocEntries, bytesOf, ENTRY_BYTES, ENTRY_WORDS, type EntrySource, MAX_SAFE_HI } from "./Entry.js"
import { encodeFooter, encodeHeader, FENCE_BYTES, FOOTER_BYTES, HEADER_BYTES } from "./Table.js"

const FENCE_WORDS = FENCE_BYTES / 4

export interface WriteTableOptions {
  readonly entriesPerBlock: number
  /** Size of each entries write (rounded down to whole entries; default 1 MiB). */
  readonly chunkBytes?: number
}

export interface WrittenTable {
  readonly path: string
  readonly entryCount: number
  readonly distinctHashes: number
  readonly fileBytes: number
}

/** A growable u32 array (for the fences and the distinct hashes while streaming). */
class U32List {
  data = new Uint32Array(64)
  length = 0
  push2(a: number, b: number): void {
    if (this.length + 2 > this.data.length) {
      const next = new Uint32Array(this.data.length * 2)
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = a
    this.data[this.length++] = b
  }
}

/** Per-chunk bookkeeping, plain code: order check, fences, distinct hashes, safe-integer check. */
class ChunkScanner {
  count = 0
  private pHi = -1
  private pLo = -1
  private pEn = -1
  private pPos = -1
  readonly hashes = new U32List()
  /** Fences back to back: the first entry of every block, then the block's CRC (Table.ts). */
  fences = new Uint32Array(FENCE_WORDS * 16)
  fenceCount = 0
  private blockCrc = 0

  constructor(private readonly entriesPerBlock: number) {}

  /** Returns an error message for the first bad entry, if any. */
  scan(w: Uint32Array, n: number): string | undefined {
    for (let i = 0; i < n; i++) {
      const o = i * ENTRY_WORDS
      const hi = w[o]!
      const lo = w[o + 1]!
      const enHi = w[o + 3]!
      const posHi = w[o + 5]!
      if (enHi > MAX_SAFE_HI || posHi > MAX_SAFE_HI) return `entry ${this.count} is not a safe integer`
      const en = enHi * 4294967296 + w[o + 2]!
      const pos = posHi * 4294967296 + w[o + 4]!
      if (hi !== this.pHi || lo !== this.pLo) {
        if (this.count > 0 && (hi < this.pHi || (hi === this.pHi && lo < this.pLo)))
          return `entry ${this.count} out of order`
        this.hashes.push2(hi, lo)
      } else if (en < this.pEn || (en === this.pEn && pos < this.pPos)) return `entry ${this.count} out of order`
      if (this.count % this.entriesPerBlock === 0) this.addFence(w, o)
      this.pHi = hi
      this.pLo = lo
      this.pEn = en
      this.pPos = pos
      this.count++
    }
    return undefined
  }

  private addFence(w: Uint32Array, o: number): void {
    if ((this.fenceCount + 1) * FENCE_WORDS > this.fences.length) {
      const next = new Uint32Array(this.fences.length * 2)
      next.set(this.fences)
      this.fences = next
    }
    this.fences.set(w.subarray(o, o + ENTRY_WORDS), this.fenceCount * FENCE_WORDS)
    this.fenceCount++
  }

  /** Folds the bytes of entries first..first+n (already scanned) into the running block CRCs. */
  blockCrcs(bytes: Buffer, first: number, n: number): void {
    const per = this.entriesPerBlock
    let i = 0
    while (i < n) {
      const inBlock = (first + i) % per
      const take = Math.min(n - i, per - inBlock)
      this.blockCrc = checksumUpdate(
        inBlock === 0 ? 0 : this.blockCrc,
        bytes,
        i * ENTRY_BYTES,
        (i + take) * ENTRY_BYTES
      )
      // The block's fence exists (scan added it); its CRC slot is the fence's last word.
      this.fences[Math.floor((first + i) / per) * FENCE_WORDS + 6] = this.blockCrc
      i += take
    }
  }
}

/** Writes `source` to a new table at `path` (replacing any file there) and syncs it. */
export const writeTable = <E>(
  path: string,
  source: EntrySource<E>,
  options: WriteTableOptions
): Effect.Effect<WrittenTable, DiskError | E, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk
    return yield* Effect.acquireUseRelease(
      disk.open(path, { create: true }),
      (handle) => writeTo(handle, path, source, options),
      (handle) => Effect.ignore(handle.close)
    )
  })

/** The entries of a table's first write (then doubled up to the chunk size). */
const FirstChunkEntries = 1024

const writeTo = <E>(
  handle: FileHandle,
  path: string,
  source: EntrySource<E>,
  options: WriteTableOptions
): Effect.Effect<WrittenTable, DiskError | E> =>
  Effect.gen(function* () {
    const per = options.entriesPerBlock
    const chunkEntries = Math.max(1, Math.floor((options.chunkBytes ?? 1 << 20) / ENTRY_BYTES))
    // Chunks start small and double up to chunkEntries: a table of a few entries (a small memtable's flush)
    // costs no megabyte-sized buffer, and a large one reaches full chunks after a few writes.
    let capacity = Math.min(chunkEntries, FirstChunkEntries)
    yield* handle.truncate(0)
    const scanner = new ChunkScanner(per)
    let crcEntries = 0
    let offset = HEADER_BYTES
    for (;;) {
      // A fresh chunk each time: nothing assumes the Disk copies what it is given.
      const w = allocEntries(capacity)
      const n = yield* source.pull(w)
      if (n === 0) break
      if (n === capacity) capacity = Math.min(chunkEntries, 2 * capacity)
      const bad = scanner.scan(w, n)
      // Tables stay sorted: every lookup binary-searches them. (The message is built only when it fails.)
      if (bad !== undefined) throw new AssertionFailed(`TableWriter: the entries of ${path} are not sorted: ${bad}`)
      const bytes = bytesOf(w, n)
      scanner.blockCrcs(bytes, scanner.count - n, n)
      crcEntries = checksumUpdate(crcEntries, bytes)
      yield* handle.write(offset, bytes)
      offset += bytes.length
    }
    const entryCount = scanner.count
    const distinct = scanner.hashes.length / 2
    const words = new Uint32Array(bloomWordsFor(distinct))
    const hashes = scanner.hashes.data
    for (let i = 0; i < scanner.hashes.length; i += 2) bloomAdd(words, BLOOM_PROBES, hashes[i]!, hashes[i + 1]!)

    const fenceBytes = scanner.fenceCount * FENCE_BYTES
    const tail = Buffer.alloc(fenceBytes + words.length * 4 + FOOTER_BYTES)
    Buffer.from(scanner.fences.buffer, 0, fenceBytes).copy(tail, 0)
    for (let i = 0; i < words.length; i++) tail.writeUInt32LE(words[i]!, fenceBytes + i * 4)
    const fencesOffset = offset
    const bloomOffset = fencesOffset + fenceBytes
    const footer = encodeFooter({
      entryCount,
      entriesOffset: HEADER_BYTES,
      fencesOffset,
      bloomOffset,
      distinctHashes: distinct,
      fenceCount: scanner.fenceCount,
      bloomWords: words.length,
      bloomProbes: BLOOM_PROBES,
      entriesPerBlock: per,
      crcEntries,
      crcFences: checksum(tail, 0, fenceBytes),
      crcBloom: checksum(tail, fenceBytes, fenceBytes + words.length * 4)
    })
    footer.copy(tail, fenceBytes + words.length * 4)
    yield* handle.write(offset, tail)
    yield* handle.write(0, encodeHeader(per, entryCount))
    yield* handle.sync
    return { path, entryCount, distinctHashes: distinct, fileBytes: offset + tail.length }
  })
