/**
 * The two files of the scavenge state and how they are read back (the design is in ScavengeState.ts):
 * `scavenge-state.snapshot` (the page file of pageFile.ts: the whole state as of transaction `seq`; written
 * by compaction.ts) and `scavenge-state.journal` (one frame per committed transaction, seq = previous + 1).
 */
import { Disk, type DiskError, join, type FileHandle } from "@vellum/platform"
import { Effect } from "effect"
import { CodecError, decodeChange } from "./codec.js"
import { emptySnapshot, type LoadedSnapshot } from "./CommittedState.js"
import { scanFrames, type Frame, type JournalScan } from "./frames.js"
import { CachedPages, PageCache } from "./PageCache.js"
import { loadDirectory } from "./pageFile.js"
import { READ_ATTEMPTS, unstableReads } from "./rereads.js"
import { METASTREAMS, ORIGINALS } from "./tables.js"
import { StateCorrupt, type StateChange } from "./types.js"

export const stateFiles = (dir: string) => ({
  dir,
  journal: join(dir, "scavenge-state.journal"),
  snapshot: join(dir, "scavenge-state.snapshot"),
  snapshotTemp: join(dir, "scavenge-state.snapshot.tmp")
})
export type StateFiles = ReturnType<typeof stateFiles>

const readWhole = (handle: FileHandle): Effect.Effect<Buffer, DiskError> =>
  Effect.flatMap(handle.size, (size) => handle.read(0, size))

/** A scan that stops early would make recovery cut committed frames: it is only believed when reads agree (rereads.ts). */
const readScan = (
  handle: FileHandle
): Effect.Effect<{ readonly bytes: Buffer; readonly scan: JournalScan }, DiskError> =>
  Effect.gen(function* () {
    const earlier: Array<Buffer> = []
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const bytes = yield* readWhole(handle)
      const scan = scanFrames(bytes)
      if (scan.validEnd === bytes.length || earlier.some((b) => b.equals(bytes))) return { bytes, scan }
      earlier.push(bytes)
    }
    return yield* unstableReads(handle.path)
  })

const decodeFrame = (path: string, frame: Frame): Effect.Effect<StateChange, StateCorrupt> =>
  Effect.try({
    try: () => decodeChange(frame.payload),
    catch: (e) =>
      new StateCorrupt({ path, detail: `transaction ${frame.seq}: ${e instanceof CodecError ? e.message : String(e)}` })
  })

/** The snapshot opened for reading (its directory loaded), or an empty one when there is none. */
export const openSnapshot = (files: StateFiles): Effect.Effect<LoadedSnapshot, DiskError | StateCorrupt, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk
    if (!(yield* disk.exists(files.snapshot))) return emptySnapshot()
    const handle = yield* disk.open(files.snapshot, { readOnly: true })
    const directory = yield* Effect.tapError(loadDirectory(handle, [ORIGINALS, METASTREAMS]), () =>
      Effect.ignore(handle.close)
    )
    const cache = new PageCache()
    return {
      handle,
      directory,
      cache,
      originals: new CachedPages(cache, ORIGINALS.id),
      metastreams: new CachedPages(cache, METASTREAMS.id)
    }
  })

export interface RecoveredJournal {
  /** The committed transactions after the snapshot, in order. */
  readonly changes: ReadonlyArray<StateChange>
  readonly lastSeq: number
  /** Where the next transaction is written. */
  readonly end: number
}

/**
 * Replays the journal after `snapshotSeq` and cuts the file after the last committed transaction (a torn
 * or never-synced tail), durably, so that new frames never follow garbage. Frames already in the snapshot
 * (left when a compaction stopped before emptying the journal) are skipped.
 */
export const recoverJournal = (
  journal: FileHandle,
  snapshotSeq: number
): Effect.Effect<RecoveredJournal, DiskError | StateCorrupt> =>
  Effect.gen(function* () {
    const { bytes, scan } = yield* readScan(journal)
    if (scan.damagedInside) {
      return yield* new StateCorrupt({
        path: journal.path,
        detail: `damaged frame at byte ${scan.validEnd} before valid ones`
      })
    }
    const changes: Array<StateChange> = []
    let lastSeq = snapshotSeq
    for (const frame of scan.frames) {
      if (frame.seq <= snapshotSeq) continue
      if (frame.seq !== lastSeq + 1) {
        return yield* new StateCorrupt({ path: journal.path, detail: `transaction ${frame.seq} follows ${lastSeq}` })
      }
      changes.push(yield* decodeFrame(journal.path, frame))
      lastSeq = frame.seq
    }
    // Only frames the snapshot already holds: start the journal afresh.
    const end = changes.length === 0 ? 0 : scan.validEnd
    if (end < bytes.length) {
      yield* journal.truncate(end)
      yield* journal.sync
    }
    return { changes, lastSeq, end }
  })

/** A temp snapshot left by a compaction that crashed before its rename is garbage. */
export const removeLeftovers = (files: StateFiles): Effect.Effect<void, DiskError, Disk> =>
  Effect.flatMap(Disk, (disk) =>
    Effect.flatMap(disk.exists(files.snapshotTemp), (exists) =>
      exists ? disk.remove(files.snapshotTemp) : Effect.void
    )
  )
