/**
 * Disk: the narrow file-storage port every byte of Vellum goes through.
 *
 * It is deliberately smaller than @effect/platform's FileSystem: positional reads and writes (no shared
 * cursor), append, an explicit `sync` (data durable) and `syncDir` (directory entries durable), and typed
 * errors. Two implementations exist:
 * - `NodeDisk.layer` (live/NodeDisk.ts) over node:fs, for the real server and benchmarks;
 * - `MemoryDisk.layer` (MemoryDisk.ts), an in-memory disk with a durability model (unsynced bytes and
 *   directory entries can be lost on a simulated crash) and seeded fault injection, for tests and the
 *   simulator.
 *
 * Durability contract (both implementations, and what the storage engine relies on):
 * - bytes written to a file are durable only after `sync` on that file's handle returned;
 * - a file created, renamed or removed is durable in its directory only after `syncDir` of that directory;
 * - a failed write or sync leaves the file in an unknown state: the caller must not build on it, but
 *   recover from what is durable — at a restart, or (the transaction log) by durably restoring a known
 *   state before it writes again.
 */
import { Context, Effect, Schema } from "effect"

export const DiskErrorReason = Schema.Literal(
  "NotFound",
  "AlreadyExists",
  "DiskFull",
  "IOError",
  "Closed",
  "InvalidArgument",
  "Locked"
)
export type DiskErrorReason = typeof DiskErrorReason.Type

export class DiskError extends Schema.TaggedError<DiskError>()("DiskError", {
  reason: DiskErrorReason,
  /** The Disk operation that failed, e.g. "open", "write", "sync". */
  op: Schema.String,
  path: Schema.String,
  message: Schema.String
}) {}

export interface OpenOptions {
  /** Create the file if it does not exist (default false: fail with NotFound). */
  readonly create?: boolean
  /** With `create`: fail with AlreadyExists when the file exists. */
  readonly exclusive?: boolean
  /** Open for reading only; writes fail with InvalidArgument. */
  readonly readOnly?: boolean
}

/** An exclusive hold on a directory, taken with `DiskService.lock`. */
export interface DirLock {
  /** What holds the lock on disk (NodeDisk: the lock file), for messages. */
  readonly path: string
  /** Gives the lock up. After a crash took it away (or someone else holds it since), it does nothing. */
  readonly release: Effect.Effect<void, DiskError>
}

/** An open file. Positions and lengths are byte offsets (safe integers). */
export interface FileHandle {
  readonly path: string
  /** Reads `length` bytes at `position`; fewer only when the file ends first. */
  readonly read: (position: number, length: number) => Effect.Effect<Buffer, DiskError>
  /**
   * Reads into `target` (up to its length) at `position`; answers how many bytes came (fewer only when the
   * file ends first). For large sequential passes that reuse their buffers instead of allocating per read.
   */
  readonly readInto: (position: number, target: Uint8Array) => Effect.Effect<number, DiskError>
  /** Writes all of `data` at `position`, growing the file (zero-filled) if needed. */
  readonly write: (position: number, data: Uint8Array) => Effect.Effect<void, DiskError>
  /** Writes all of `data` at the current end of the file; returns the position written at. */
  readonly append: (data: Uint8Array) => Effect.Effect<number, DiskError>
  /** Makes every byte written so far (and the file size) durable. */
  readonly sync: Effect.Effect<void, DiskError>
  readonly size: Effect.Effect<number, DiskError>
  /** Sets the file size: shrinks, or grows with zeros. */
  readonly truncate: (length: number) => Effect.Effect<void, DiskError>
  readonly close: Effect.Effect<void, DiskError>
}

export interface DiskService {
  readonly open: (path: string, options?: OpenOptions) => Effect.Effect<FileHandle, DiskError>
  /** Names (not paths) of the entries of a directory, sorted. */
  readonly list: (dir: string) => Effect.Effect<ReadonlyArray<string>, DiskError>
  /** Creates a directory and its missing parents; succeeds if it exists. */
  readonly mkdir: (dir: string) => Effect.Effect<void, DiskError>
  /** Removes a file (or an empty directory). NotFound if it does not exist. */
  readonly remove: (path: string) => Effect.Effect<void, DiskError>
  /** Atomically replaces `to` with `from`. */
  readonly rename: (from: string, to: string) => Effect.Effect<void, DiskError>
  /** Makes the directory's entries (creations, renames, removals) durable. */
  readonly syncDir: (dir: string) => Effect.Effect<void, DiskError>
  readonly exists: (path: string) => Effect.Effect<boolean, DiskError>
  /**
   * Takes the exclusive lock of an existing directory: one holder at a time, across processes. It is held
   * until released or until its holder dies (a crash, or SIGKILL, releases it; a restart can take it again).
   * Fails with reason "Locked" while another holder has it, with a message naming the lock (and the pid
   * holding it, when known).
   */
  readonly lock: (dir: string) => Effect.Effect<DirLock, DiskError>
}

export class Disk extends Context.Tag("@vellum/platform/Disk")<Disk, DiskService>() {}

/** Opens a file for the lifetime of the current scope. */
export const openScoped = (path: string, options?: OpenOptions) =>
  Effect.flatMap(Disk, (disk) =>
    Effect.acquireRelease(disk.open(path, options), (handle) => Effect.orDie(Effect.ignore(handle.close)))
  )

/** Holds the directory's lock for the lifetime of the current scope. */
export const lockScoped = (dir: string) =>
  Effect.flatMap(Disk, (disk) => Effect.acquireRelease(disk.lock(dir), (held) => Effect.ignore(held.release)))

/** Joins path segments with "/" (all Disk paths are POSIX-style, in both implementations). */
export const join = (...parts: ReadonlyArray<string>): string =>
  parts
    .filter((p) => p.length > 0)
    .join("/")
    .replace(/\/{2,}/g, "/")
