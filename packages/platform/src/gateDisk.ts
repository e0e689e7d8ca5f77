/**
 * A Disk whose every operation first passes through `gate`: how tests make operations yield (to interleave
 * fibers finely), count them, or fail them from the k-th on (a crash at an exact point).
 */
import { Effect } from "effect"
import type { DiskError, DiskService, FileHandle } from "./Disk.js"

export type DiskGate = <A, E>(operation: Effect.Effect<A, E>) => Effect.Effect<A, E | DiskError>

export const gateDisk = (inner: DiskService, gate: DiskGate): DiskService => {
  const wrap = (h: FileHandle): FileHandle => ({
    path: h.path,
    read: (p, l) => gate(h.read(p, l)),
    readInto: (p, t) => gate(h.readInto(p, t)),
    write: (p, d) => gate(h.write(p, d)),
    append: (d) => gate(h.append(d)),
    sync: gate(h.sync),
    size: gate(h.size),
    truncate: (l) => gate(h.truncate(l)),
    close: gate(h.close)
  })
  return {
    open: (p, o) => Effect.map(gate(inner.open(p, o)), wrap),
    list: (d) => gate(inner.list(d)),
    mkdir: (d) => gate(inner.mkdir(d)),
    remove: (p) => gate(inner.remove(p)),
    rename: (a, b) => gate(inner.rename(a, b)),
    syncDir: (d) => gate(inner.syncDir(d)),
    exists: (p) => gate(inner.exists(p))
  }
}

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
 * A Disk that runs `before(op, path, position)` ahead of every operation but `close` (reads, `readInto`
 * included, count as "read"; `position` is the offset of a write or the length of a truncate): how tests
 * cut the power at the k-th mutating operation, or at one they pick by name and file.
 */
export const checkDiskOps = (
  inner: DiskService,
  before: (op: string, path: string, position?: number) => Effect.Effect<void, DiskError>
): DiskService => {
  const handle = (h: FileHandle): FileHandle => ({
    path: h.path,
    read: (p, n) => Effect.zipRight(before("read", h.path), h.read(p, n)),
    readInto: (p, t) => Effect.zipRight(before("read", h.path), h.readInto(p, t)),
    write: (p, d) => Effect.zipRight(before("write", h.path, p), h.write(p, d)),
    append: (d) => Effect.zipRight(before("append", h.path), h.append(d)),
    sync: Effect.zipRight(before("sync", h.path), h.sync),
    size: Effect.zipRight(before("size", h.path), h.size),
    truncate: (n) => Effect.zipRight(before("truncate", h.path, n), h.truncate(n)),
    close: h.close
  })
  return {
    open: (path, options) => Effect.zipRight(before("open", path), Effect.map(inner.open(path, options), handle)),
    list: (dir) => Effect.zipRight(before("list", dir), inner.list(dir)),
    mkdir: (dir) => Effect.zipRight(before("mkdir", dir), inner.mkdir(dir)),
    remove: (path) => Effect.zipRight(before("remove", path), inner.remove(path)),
    rename: (from, to) => Effect.zipRight(before("rename", to), inner.rename(from, to)),
    syncDir: (dir) => Effect.zipRight(before("syncDir", dir), inner.syncDir(dir)),
    exists: (path) => Effect.zipRight(before("exists", path), inner.exists(path))
  }
}
