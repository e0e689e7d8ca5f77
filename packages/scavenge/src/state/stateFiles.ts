/**
 * The two files of the scavenge state and how they are read back and rewritten (the design is in
 * ScavengeState.ts): `scavenge-state.snapshot` (one frame: the whole state as of transaction `seq`) and
 * `scavenge-state.journal` (one frame per committed transaction, seq = previous + 1).
 */
import { Disk, DiskError, join, type FileHandle } from "@vellum/platform"
import { Effect } from "effect"
import { CodecError, decodeChange, encodeChange } from "./codec.js"
import { encodeFrame, scanFrames, type Frame, type JournalScan } from "./frames.js"
import { StateCorrupt, type StateChange } from "./types.js"

export const stateFiles = (dir: string) => ({
  dir,
  journal: join(dir, "scavenge-state.journal"),
  snapshot: join(dir, "scavenge-state.snapshot"),
  snapshotTemp: join(dir, "scavenge-state.snapshot.tmp")
})
export type StateFiles = ReturnType<typeof stateFiles>

/**
 * A read can return damaged bytes without the disk being damaged. A scan that stops early would make
 * recovery cut committed frames, so such a result is only believed once two reads return the same bytes.
 */
const READ_ATTEMPTS = 5

const readWhole = (handle: FileHandle): Effect.Effect<Buffer, DiskError> =>
  Effect.flatMap(handle.size, (size) => handle.read(0, size))

const readScan = (handle: FileHandle): Effect.Effect<{ readonly bytes: Buffer; readonly scan: JournalScan }, DiskError> =>
  Effect.gen(function*() {
    const earlier: Array<Buffer> = []
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const bytes = yield* readWhole(handle)
      const scan = scanFrames(bytes)
      if (scan.validEnd === bytes.length || earlier.some((b) => b.equals(bytes))) return { bytes, scan }
      earlier.push(bytes)
    }
    return yield* new DiskError({
      reason: "IOError", op: "read", path: handle.path, message: `${READ_ATTEMPTS} reads of ${handle.path} returned different bytes`
    })
  })

const decodeFrame = (path: string, frame: Frame): Effect.Effect<StateChange, StateCorrupt> =>
  Effect.try({
    try: () => decodeChange(frame.payload),
    catch: (e) => new StateCorrupt({ path, reason: `transaction ${frame.seq}: ${e instanceof CodecError ? e.message : String(e)}` })
  })

export interface LoadedSnapshot {
  readonly seq: number
  readonly change: StateChange
  readonly bytes: number
}

/** The snapshot, or undefined when there is none. It was renamed into place whole, so any damage is corruption. */
export const loadSnapshot = (files: StateFiles): Effect.Effect<LoadedSnapshot | undefined, DiskError | StateCorrupt, Disk> =>
  Effect.gen(function*() {
    const disk = yield* Disk
    if (!(yield* disk.exists(files.snapshot))) return undefined
    const handle = yield* disk.open(files.snapshot, { readOnly: true })
    const { bytes, scan } = yield* Effect.ensuring(readScan(handle), Effect.ignore(handle.close))
    const frame = scan.frames[0]
    if (scan.frames.length !== 1 || scan.validEnd !== bytes.length || frame === undefined) {
      return yield* new StateCorrupt({ path: files.snapshot, reason: "the snapshot is not one whole, valid frame" })
    }
    return { seq: frame.seq, change: yield* decodeFrame(files.snapshot, frame), bytes: bytes.length }
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
  journal: FileHandle, snapshotSeq: number
): Effect.Effect<RecoveredJournal, DiskError | StateCorrupt> =>
  Effect.gen(function*() {
    const { bytes, scan } = yield* readScan(journal)
    if (scan.damagedInside) {
      return yield* new StateCorrupt({ path: journal.path, reason: `damaged frame at byte ${scan.validEnd} before valid ones` })
    }
    const changes: Array<StateChange> = []
    let lastSeq = snapshotSeq
    for (const frame of scan.frames) {
      if (frame.seq <= snapshotSeq) continue
      if (frame.seq !== lastSeq + 1) {
        return yield* new StateCorrupt({ path: journal.path, reason: `transaction ${frame.seq} follows ${lastSeq}` })
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

/**
 * Writes `change` (the whole state as of `seq`) as the new snapshot: temp file, sync, rename, directory
 * sync. Returns the snapshot's size. The caller empties the journal only after this returned.
 */
export const writeSnapshot = (
  files: StateFiles, seq: number, change: StateChange, pageSize: number
): Effect.Effect<number, DiskError, Disk> =>
  Effect.gen(function*() {
    const disk = yield* Disk
    const frame = encodeFrame(seq, encodeChange(change), pageSize)
    if (yield* disk.exists(files.snapshotTemp)) yield* disk.remove(files.snapshotTemp)
    const temp = yield* disk.open(files.snapshotTemp, { create: true })
    yield* Effect.ensuring(
      Effect.zipRight(temp.write(0, frame), temp.sync),
      Effect.ignore(temp.close)
    )
    yield* disk.rename(files.snapshotTemp, files.snapshot)
    yield* disk.syncDir(files.dir)
    return frame.length
  })

/** A temp snapshot left by a compaction that crashed before its rename is garbage. */
export const removeLeftovers = (files: StateFiles): Effect.Effect<void, DiskError, Disk> =>
  Effect.flatMap(Disk, (disk) =>
    Effect.flatMap(disk.exists(files.snapshotTemp), (exists) => (exists ? disk.remove(files.snapshotTemp) : Effect.void)))
