/**
 * A Disk whose every operation first passes through `gate`: how tests make operations yield (to interleave
 * fibers finely), count them, or fail them from the k-th on (a crash at an exact point).
 */
import { Effect } from "effect"
import type { DiskError, DiskService, FileHandle } from "./Disk.js"

export type DiskGate = <A, E>(operation: Effect.Effect<A, E>) => Effect.Effect<A, E | DiskError>

/**
 * The gate with the operation's name and file: `op` is the FileHandle/DiskService method (reads, `readInto`
 * included, are "read"; a rename is reported with its destination), `position` the offset of a write or the
 * length of a truncate.
 */
export type NamedDiskGate = <A, E>(
  op: string,
  path: string,
  operation: Effect.Effect<A, E>,
  position?: number
) => Effect.Effect<A, E | DiskError>

/** A Disk whose every operation passes through `gate`, told which operation it is. */
export const gateDiskOps = (inner: DiskService, gate: NamedDiskGate): DiskService => {
  const wrap = (h: FileHandle): FileHandle => ({
    path: h.path,
    read: (p, l) => gate("read", h.path, h.read(p, l)),
    readInto: (p, t) => gate("read", h.path, h.readInto(p, t)),
    write: (p, d) => gate("write", h.path, h.write(p, d), p),
    append: (d) => gate("append", h.path, h.append(d)),
    sync: gate("sync", h.path, h.sync),
    size: gate("size", h.path, h.size),
    truncate: (l) => gate("truncate", h.path, h.truncate(l), l),
    close: gate("close", h.path, h.close)
  })
  return {
    open: (p, o) => Effect.map(gate("open", p, inner.open(p, o)), wrap),
    list: (d) => gate("list", d, inner.list(d)),
    mkdir: (d) => gate("mkdir", d, inner.mkdir(d)),
    remove: (p) => gate("remove", p, inner.remove(p)),
    rename: (a, b) => gate("rename", b, inner.rename(a, b)),
    syncDir: (d) => gate("syncDir", d, inner.syncDir(d)),
    exists: (p) => gate("exists", p, inner.exists(p)),
    lock: (d) => gate("lock", d, inner.lock(d))
  }
}

export const gateDisk = (inner: DiskService, gate: DiskGate): DiskService =>
  gateDiskOps(inner, (_op, _path, operation) => gate(operation))

/**
 * A handle whose reads (`read` and `readInto` alike) come back through `transform`, given the position and
 * the bytes read: how tests damage bytes on their way from the disk without changing what it holds.
 */
export const transformReads = (h: FileHandle, transform: (position: number, bytes: Buffer) => Buffer): FileHandle => ({
  ...h,
  read: (position, length) => Effect.map(h.read(position, length), (bytes) => transform(position, bytes)),
  readInto: (position, target) =>
    Effect.map(h.read(position, target.length), (bytes) => {
      const out = transform(position, bytes)
      target.set(out)
      return out.length
    })
})

/**
 * A Disk that runs `before(op, path, position)` ahead of every operation but `close` (see NamedDiskGate):
 * how tests cut the power at the k-th mutating operation, or at one they pick by name and file.
 */
export const checkDiskOps = (
  inner: DiskService,
  before: (op: string, path: string, position?: number) => Effect.Effect<void, DiskError>
): DiskService =>
  gateDiskOps(inner, (op, path, operation, position) =>
    op === "close" ? operation : Effect.zipRight(before(op, path, position), operation)
  )
