/**
 * Replacing completed chunk files by one scavenged chunk (scavenge execution: one physical chunk with the
 * scavenger's rule; merging: several physical chunks, keeping every record) and switching it in.
 *
 * Steps, each durable before the next:
 *   1. the new file is written under `chunk-{first}.{v+1}.scavenge.tmp` and synced (ChunkRewrite.ts);
 *   2. it is renamed to `chunk-{first}.{v+1}` (v: the highest version among the replaced files) and the
 *      directory synced — from here on the new file is the log: it wins over the file with the same start
 *      (higher version) and supersedes the others, whose start numbers lie inside its range;
 *   3. the in-memory chunk list points at it and the block cache forgets the replaced files;
 *   4. the replaced files are removed and the directory synced.
 * A crash before step 2 is durable leaves the old files (and at most a temp file, removed at open); a crash
 * after leaves the new file and possibly some old ones, which `openTransactionLog` removes
 * (chunkPrecedence.ts). A disk error before step 2 fails the replacement and leaves the old files in use;
 * the writer is not affected (the log does not fail-stop: only completed files are involved, and the
 * temp file is abandoned). Errors in step 4 are ignored: the leftovers are removed at the next open.
 *
 * Handles of replaced files are not closed at the switch: a read that picked its chunk before the switch
 * may still be reading it (an open handle keeps a removed file readable). They are closed at a later
 * switch once they have been retired for a grace period on Effect's Clock — long past any single read —
 * and all at log close. Closing on a timer would need a fiber per log; piggybacking on the next switch
 * needs none, and without further switches a few retired handles merely stay open until close.
 */
import { Clock, Effect } from "effect"
import { Disk, join, type DiskService } from "@vellum/platform"
import { StorageFailed, type ReadError } from "../errors.js"
import type { BlockCache } from "./BlockCache.js"
import type { BufferPool } from "./BufferPool.js"
import { isCompleted, makeChunkFile, type ChunkFile } from "./ChunkFile.js"
import { chunkFileName, completedFileSize, parseChunkFileName } from "./chunkFormat.js"
import { writeScavengedChunk, type KeepRecord, type RewrittenChunk } from "./ChunkRewrite.js"

/** The result of replacing physical chunks by one scavenged chunk. */
export interface ChunkReplacement {
  /** Logical chunk numbers the new file covers. */
  readonly startNumber: number
  readonly endNumber: number
  /** Total size of the replaced files. */
  readonly oldBytes: number
  /** Size of the new file. */
  readonly newBytes: number
  /** Records copied. */
  readonly kept: number
  /** Records left out. */
  readonly removed: number
}

/** How long a replaced file's handle stays open for reads that were in flight at the switch. */
export const RETIRED_HANDLE_GRACE_MILLIS = 60_000

export interface ReplacerContext {
  readonly dir: string
  readonly chunkSize: number
  /** The log's chunk list by logical chunk number (updated in place at a switch). */
  readonly byNumber: Array<ChunkFile | undefined>
  readonly active: () => ChunkFile
  readonly cache: BlockCache
  readonly disk: DiskService
  /** Why the writer stopped, if it did. */
  readonly failed: () => string | undefined
}

export interface ReplaceOptions {
  /** Scratch buffers shared by the rewrites of one scavenge run (BufferPool.ts). */
  readonly pool?: BufferPool
}

export interface ChunkReplacer {
  readonly replaceChunks: <E = never>(
    firstChunk: number,
    lastChunk: number,
    keep: KeepRecord<E>,
    options?: ReplaceOptions
  ) => Effect.Effect<ChunkReplacement, StorageFailed | ReadError | E>
  /** Closes every retired handle (at log close). */
  readonly closeRetired: Effect.Effect<void>
  /** Retires files another switch replaced (a chunk installed whole): as replaced files, after reads in flight. */
  readonly retire: (chunks: ReadonlyArray<ChunkFile>) => Effect.Effect<void>
  /** Why `replaceChunks(first, last)` would be refused now, or undefined. */
  readonly refusal: (firstChunk: number, lastChunk: number) => string | undefined
}

const versionOf = (chunk: ChunkFile): number =>
  parseChunkFileName(chunk.path.slice(chunk.path.lastIndexOf("/") + 1))?.version ?? 0

/** The version of a file replacing `files`: above all of theirs, so it wins at open. */
export const nextVersion = (files: ReadonlyArray<ChunkFile>): number => Math.max(...files.map(versionOf)) + 1

export const makeChunkReplacer = (ctx: ReplacerContext): ChunkReplacer => {
  const retired: Array<{ readonly chunk: ChunkFile; readonly atMillis: number }> = []
  /** Files being replaced right now: a second replacement of any of them is a caller bug. */
  const busy = new Set<ChunkFile>()

  /** The distinct files covering first..last, or why that range cannot be replaced. */
  const sourcesOf = (first: number, last: number): ReadonlyArray<ChunkFile> | string => {
    if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 0 || last < first) {
      return `replaceChunks(${first}, ${last}): not a range of chunk numbers`
    }
    const sources: Array<ChunkFile> = []
    for (let n = first; n <= last; n++) {
      const chunk = ctx.byNumber[n]
      if (chunk === undefined) return `replaceChunks(${first}, ${last}): chunk ${n} does not exist`
      if (chunk === ctx.active() || !isCompleted(chunk))
        return `replaceChunks(${first}, ${last}): chunk ${n} is not completed (the active chunk is never rewritten)`
      if (busy.has(chunk)) return `replaceChunks(${first}, ${last}): ${chunk.path} is already being replaced`
      if (sources[sources.length - 1] !== chunk) sources.push(chunk)
    }
    if (sources[0]!.header.startNumber !== first)
      return `replaceChunks(${first}, ${last}): chunk ${first} is inside ${sources[0]!.path}, which starts at ${sources[0]!.header.startNumber}`
    const end = sources[sources.length - 1]!
    if (end.header.endNumber !== last)
      return `replaceChunks(${first}, ${last}): chunk ${last} is inside ${end.path}, which ends at ${end.header.endNumber}`
    return sources
  }

  const closeHandles = (expired: (atMillis: number) => boolean) =>
    Effect.gen(function* () {
      for (let i = retired.length - 1; i >= 0; i--) {
        const { chunk, atMillis } = retired[i]!
        if (!expired(atMillis)) continue
        retired.splice(i, 1)
        yield* Effect.ignore(chunk.handle.close)
        // A read in flight at the switch may have cached blocks of it since.
        ctx.cache.evictFile(chunk.fileId)
      }
    })

  const replace = <E>(sources: ReadonlyArray<ChunkFile>, keep: KeepRecord<E>, pool: BufferPool | undefined) =>
    Effect.gen(function* () {
      const disk = yield* Disk
      const first = sources[0]!.header.startNumber
      const last = sources[sources.length - 1]!.header.endNumber
      const version = nextVersion(sources)
      const path = join(ctx.dir, chunkFileName(first, version))
      const tmpPath = `${path}.scavenge.tmp`
      // Writing the new file can be interrupted (a scavenge stop; the temp file is abandoned), steps 2 and 3
      // cannot: a switch durable on disk but not made in memory would leave the new file unused (and its
      // handle open) until a restart.
      const written = yield* Effect.uninterruptibleMask((restore) =>
        Effect.tap(restore(writeScavengedChunk({ tmpPath, chunkSize: ctx.chunkSize, sources, keep, pool })), (w) =>
          switchIn(sources, w, path, tmpPath)
        )
      )

      // Step 4.
      for (const source of sources) yield* Effect.ignore(disk.remove(source.path))
      yield* Effect.ignore(disk.syncDir(ctx.dir))

      let oldBytes = 0
      for (const source of sources) oldBytes += completedFileSize(source.footer!)
      const replacement: ChunkReplacement = {
        startNumber: first,
        endNumber: last,
        oldBytes,
        newBytes: written.fileBytes,
        kept: written.kept,
        removed: written.removed
      }
      return replacement
    })

  const switchIn = (sources: ReadonlyArray<ChunkFile>, written: RewrittenChunk, path: string, tmpPath: string) =>
    Effect.gen(function* () {
      const disk = yield* Disk
      const now = yield* Clock.currentTimeMillis
      // Step 2. Undone as far as possible on failure, so the old files stay the log; where the disk refuses
      // even that, both versions are valid and the next open picks the new one.
      yield* Effect.zipRight(disk.rename(tmpPath, path), disk.syncDir(ctx.dir)).pipe(
        Effect.tapError(() =>
          Effect.all(
            [written.handle.close, disk.remove(path), disk.remove(tmpPath)].map((e) => Effect.ignore(e)),
            { discard: true }
          )
        ),
        Effect.mapError(
          (error) => new StorageFailed({ message: `switching in the scavenged chunk ${path} failed: ${error.message}` })
        )
      )

      // Step 3: synchronous, so no read sees a half-updated list.
      const chunk = makeChunkFile(path, written.header, written.handle)
      chunk.footer = written.footer
      chunk.posMap = written.posMap
      chunk.dataSize = written.footer.physicalDataSize
      for (let n = written.header.startNumber; n <= written.header.endNumber; n++) ctx.byNumber[n] = chunk
      yield* retireAt(sources, now)
    })

  const retireAt = (sources: ReadonlyArray<ChunkFile>, now: number) =>
    Effect.suspend(() => {
      for (const source of sources) {
        ctx.cache.evictFile(source.fileId)
        retired.push({ chunk: source, atMillis: now })
      }
      return closeHandles((at) => now - at >= RETIRED_HANDLE_GRACE_MILLIS)
    })

  const replaceChunks = <E = never>(
    firstChunk: number,
    lastChunk: number,
    keep: KeepRecord<E>,
    options?: ReplaceOptions
  ) =>
    Effect.suspend((): Effect.Effect<ChunkReplacement, StorageFailed | ReadError | E> => {
      const failure = ctx.failed()
      if (failure !== undefined)
        return Effect.fail(new StorageFailed({ message: `chunks are not rewritten: ${failure}` }))
      const sources = sourcesOf(firstChunk, lastChunk)
      if (typeof sources === "string") return Effect.die(new RangeError(sources))
      for (const source of sources) busy.add(source)
      return replace(sources, keep, options?.pool).pipe(
        Effect.provideService(Disk, ctx.disk),
        Effect.ensuring(
          Effect.sync(() => {
            for (const source of sources) busy.delete(source)
          })
        )
      )
    })

  return {
    replaceChunks,
    closeRetired: closeHandles(() => true),
    retire: (chunks) => Effect.flatMap(Clock.currentTimeMillis, (now) => retireAt(chunks, now)),
    refusal: (first, last) => {
      const sources = sourcesOf(first, last)
      return typeof sources === "string" ? sources : undefined
    }
  }
}
