/**
 * Installing a completed chunk file received whole from a leader. A scavenged chunk's records no longer
 * lie at contiguous positions, so a follower behind it cannot be sent them record by record: the leader
 * sends the file as it lies on disk, in pieces, and the follower puts it in place of its own files of that
 * range — the same kind of switch a local scavenge makes (ChunkReplacer.ts). The file holds every record
 * of the range that the leader kept, and a scavenge removes only what no reader may see any more, so
 * nothing this node still needs is lost; its index entries of removed records read as absent, as after a
 * local scavenge.
 *
 * The follower's writer checkpoint lies in the range (the leader sends the file because the follower's
 * next position is in it): the chunk holding it — the active chunk, partly written — is replaced with the
 * completed ones before it, and the log goes on at the next chunk after the range.
 *
 * Steps, each durable before the next:
 *   1. the pieces are written in order to `chunk-{first}.{v+1}.install.tmp`; with the last one the file is
 *      synced, then opened and checked as open checks a chunk (header, footer, position map) plus its
 *      whole-file checksum, and against what was announced (range, id, size) and this log (chunk size, the
 *      range holds the writer checkpoint and starts where a file of this log starts, its data reaches it);
 *   2. it is renamed to `chunk-{first}.{v+1}` and the directory synced — the commit point: from here on
 *      open takes it (it wins over the files of its range, chunkPrecedence.ts) and, finding the writer
 *      checkpoint inside this last, completed scavenged file, moves the checkpoint to its end;
 *   3. the in-memory chunk list points at it, the replaced files are retired (cached blocks dropped,
 *      handles closed later) and removed (errors ignored: open removes leftovers);
 *   4. the next chunk is created and the writer checkpoint moved to its start.
 * A crash before step 2 leaves the previous state (the temp file is removed at open); after it, the new
 * chunk, however far steps 3-4 got. A disk error before step 2 changes nothing; after it, writes are refused
 * until `finish` (steps 3-4, safe to run again) succeeds: the log's `recover` runs it.
 */
import { Effect, Either } from "effect"
import { Disk, join, type DiskError, type FileHandle } from "@vellum/platform"
import { InvalidRequest, StorageFailed } from "../errors.js"
import { makeChunkFile, openChunkFile, verifyChunkFile, type ChunkFile } from "./ChunkFile.js"
import { nextVersion, type ReplacerContext } from "./ChunkReplacer.js"
import { FOOTER_SIZE, HEADER_SIZE, chunkFileName, completedFileSize } from "./chunkFormat.js"

/** A piece of a completed chunk file sent whole (the replica's RawChunk). */
export interface ChunkPiece {
  readonly startNumber: number
  readonly endNumber: number
  readonly chunkId: string
  readonly fileSize: number
  readonly offset: number
  readonly bytes: Uint8Array
}

/** The log's directory, chunk size, chunk list (updated in place at the switch) and disk, as a replacer has them. */
export interface InstallerContext extends Pick<ReplacerContext, "dir" | "chunkSize" | "byNumber" | "disk"> {
  readonly writerPosition: () => number
  /** Replaced files: their cached blocks go now, their handles after reads in flight (ChunkReplacer.ts). */
  readonly retire: (chunks: ReadonlyArray<ChunkFile>) => Effect.Effect<void>
  /** Makes a new chunk after `installed` the active one and moves the writer checkpoint to its start. */
  readonly continueAfter: (installed: ChunkFile) => Effect.Effect<void, DiskError, Disk>
}

/** What `receive` did with a piece. */
export type Received =
  | { readonly _tag: "Partial"; readonly received: number }
  /** The file is the log now; `finish` (steps 3-4) must run, and run again until it succeeds. */
  | { readonly _tag: "Switched"; readonly finish: Effect.Effect<void, DiskError> }

interface Transfer {
  readonly announced: ChunkPiece
  readonly tmpPath: string
  readonly handle: FileHandle
  received: number
}

export const makeChunkInstaller = (ctx: InstallerContext) => {
  const cs = ctx.chunkSize
  let transfer: Transfer | undefined

  const refused = (piece: ChunkPiece, why: string) =>
    new InvalidRequest({
      message: `the chunk file ${piece.chunkId} (chunks ${piece.startNumber}-${piece.endNumber}) is refused: ${why}`
    })

  /** The distinct files of this log holding the range's positions, or why the range cannot replace them. */
  const replacedFiles = (piece: ChunkPiece): ReadonlyArray<ChunkFile> | string => {
    const { startNumber: first, endNumber: last } = piece
    const writer = ctx.writerPosition()
    if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 0 || last < first)
      return "not a range of chunk numbers"
    if (writer < first * cs || writer >= (last + 1) * cs)
      return `it covers [${first * cs}, ${(last + 1) * cs}), and this log ends at ${writer}, outside it`
    const files: Array<ChunkFile> = []
    for (let n = first; n <= Math.floor(writer / cs); n++) {
      const chunk = ctx.byNumber[n]
      if (chunk === undefined) return `chunk ${n} of this log is missing`
      if (files[files.length - 1] !== chunk) files.push(chunk)
    }
    const head = files[0]!
    // A file of this log straddling the range's start (merged otherwise by a scavenge here) cannot be cut.
    if (head.header.startNumber !== first)
      return `this log's ${head.path} starts before it, at chunk ${head.header.startNumber}`
    return files
  }

  const abandon = Effect.suspend(() => {
    const current = transfer
    transfer = undefined
    if (current === undefined) return Effect.void
    return Effect.zipRight(Effect.ignore(current.handle.close), Effect.ignore(ctx.disk.remove(current.tmpPath)))
  })

  const failedWriting = (path: string) => (error: DiskError) =>
    new StorageFailed({ message: `writing the received chunk ${path} failed: ${error.message}` })

  const begin = (piece: ChunkPiece) =>
    Effect.gen(function* () {
      yield* abandon
      const files = replacedFiles(piece)
      if (typeof files === "string") return yield* refused(piece, files)
      if (!Number.isSafeInteger(piece.fileSize) || piece.fileSize < HEADER_SIZE + FOOTER_SIZE)
        return yield* refused(piece, `${piece.fileSize} bytes is not the size of a completed chunk file`)
      const tmpPath = `${join(ctx.dir, chunkFileName(piece.startNumber, nextVersion(files)))}.install.tmp`
      const handle = yield* Effect.mapError(
        Effect.gen(function* () {
          if (yield* ctx.disk.exists(tmpPath)) yield* ctx.disk.remove(tmpPath)
          return yield* ctx.disk.open(tmpPath, { create: true, exclusive: true })
        }),
        failedWriting(tmpPath)
      )
      const started: Transfer = { announced: piece, tmpPath, handle, received: 0 }
      transfer = started
      return started
    })

  /** Why a received file cannot be installed (its header, footer and map as open read them), or undefined. */
  const mismatchOf = (chunk: ChunkFile, piece: ChunkPiece): string | undefined => {
    const { header, footer } = chunk
    if (footer === undefined) return `it is not completed (${chunk.footerProblem ?? "no footer"})`
    if (!header.isScavenged) return "it is not a scavenged chunk"
    if (header.startNumber !== piece.startNumber || header.endNumber !== piece.endNumber)
      return `its header says chunks ${header.startNumber}-${header.endNumber}`
    if (header.chunkId !== piece.chunkId) return `its header's id is ${header.chunkId}`
    if (completedFileSize(footer) !== piece.fileSize) return "its footer does not match its size"
    if (chunk.posMap?.problem !== undefined) return `its position map is damaged (${chunk.posMap.problem})`
    if (chunk.startPosition + footer.logicalDataSize < ctx.writerPosition())
      return `its data ends before this log's end at ${ctx.writerPosition()}`
    return undefined
  }

  /**
   * Opens the complete temp file as a chunk and checks it, its whole-file checksum last: the chunk (open on
   * the temp file), or InvalidRequest saying what is wrong with it. A disk error fails.
   */
  const check = (current: Transfer): Effect.Effect<ChunkFile | InvalidRequest, DiskError, Disk> =>
    Effect.gen(function* () {
      const piece = current.announced
      const opened = yield* Effect.either(openChunkFile(current.tmpPath, cs))
      if (opened._tag === "Left")
        return opened.left._tag === "DiskError" ? yield* opened.left : refused(piece, opened.left.message)
      const chunk = opened.right
      const mismatch = mismatchOf(chunk, piece)
      const verified =
        mismatch === undefined ? yield* Effect.either(verifyChunkFile(chunk)) : Either.left(refused(piece, mismatch))
      if (verified._tag === "Right") return chunk
      yield* Effect.ignore(chunk.handle.close)
      const problem = verified.left
      if (problem._tag === "DiskError") return yield* problem
      return problem instanceof InvalidRequest ? problem : refused(piece, problem.message)
    })

  /** Steps 2 (the commit point) and 3's in-memory part; `finish` is the rest. */
  const switchIn = (received: ChunkFile, replaced: ReadonlyArray<ChunkFile>, tmpPath: string) =>
    Effect.gen(function* () {
      // Named after the files it replaces now (a local scavenge may have replaced one since the first piece).
      const path = join(ctx.dir, chunkFileName(received.header.startNumber, nextVersion(replaced)))
      yield* Effect.zipRight(ctx.disk.rename(tmpPath, path), ctx.disk.syncDir(ctx.dir)).pipe(
        // Undone as far as the disk lets us; where it refuses, both states are valid and open takes the new one.
        Effect.tapError(() =>
          Effect.all(
            [received.handle.close, ctx.disk.remove(path), ctx.disk.remove(tmpPath)].map((e) => Effect.ignore(e)),
            { discard: true }
          )
        ),
        Effect.mapError(failedWriting(path))
      )
      const installed = makeChunkFile(path, received.header, received.handle)
      installed.footer = received.footer
      installed.posMap = received.posMap
      installed.dataSize = received.footer!.physicalDataSize
      for (let n = installed.header.startNumber; n <= installed.header.endNumber; n++) ctx.byNumber[n] = installed
      yield* ctx.retire(replaced)
      const finish = Effect.gen(function* () {
        for (const old of replaced) yield* Effect.ignore(ctx.disk.remove(old.path))
        yield* Effect.ignore(ctx.disk.syncDir(ctx.dir))
        yield* ctx.continueAfter(installed)
      }).pipe(Effect.provideService(Disk, ctx.disk))
      return finish
    })

  /**
   * Takes one piece. A piece at offset 0 starts a file (dropping any other in progress); any other must
   * continue the file in progress exactly. InvalidRequest drops the file in progress; nothing else changes.
   */
  const receive = (piece: ChunkPiece): Effect.Effect<Received, StorageFailed | InvalidRequest> =>
    Effect.gen(function* () {
      const current = piece.offset === 0 ? yield* begin(piece) : transfer
      const a = current?.announced
      if (
        current === undefined ||
        a!.chunkId !== piece.chunkId ||
        a!.startNumber !== piece.startNumber ||
        a!.endNumber !== piece.endNumber ||
        a!.fileSize !== piece.fileSize ||
        piece.offset !== current.received
      ) {
        yield* abandon
        return yield* refused(piece, `a piece at offset ${piece.offset} continues no file being received`)
      }
      const end = piece.offset + piece.bytes.length
      if (end > piece.fileSize || piece.bytes.length === 0) {
        yield* abandon
        return yield* refused(piece, `a piece of ${piece.bytes.length} bytes at ${piece.offset} does not fit it`)
      }
      const bytes = Buffer.from(piece.bytes.buffer, piece.bytes.byteOffset, piece.bytes.length)
      yield* Effect.tapError(
        Effect.mapError(current.handle.write(piece.offset, bytes), failedWriting(current.tmpPath)),
        () => abandon
      )
      current.received = end
      if (end < piece.fileSize) return { _tag: "Partial", received: end } as const
      transfer = undefined
      const switched = Effect.gen(function* () {
        yield* current.handle.sync
        yield* current.handle.close
        const chunk = yield* check(current)
        if (chunk instanceof InvalidRequest) return chunk
        // The log may have changed since the first piece (nothing writes it meanwhile on a follower, but
        // the check is cheap).
        const replaced = replacedFiles(piece)
        if (typeof replaced === "string") {
          yield* Effect.ignore(chunk.handle.close)
          return refused(piece, replaced)
        }
        return yield* switchIn(chunk, replaced, current.tmpPath)
      })
      const outcome = yield* switched.pipe(
        Effect.mapError((error) => (error instanceof StorageFailed ? error : failedWriting(current.tmpPath)(error))),
        Effect.tapError(() => Effect.ignore(ctx.disk.remove(current.tmpPath)))
      )
      if (outcome instanceof InvalidRequest) {
        yield* Effect.ignore(ctx.disk.remove(current.tmpPath))
        return yield* outcome
      }
      return { _tag: "Switched", finish: outcome } as const
    }).pipe(Effect.provideService(Disk, ctx.disk))

  return { receive, abandon }
}
