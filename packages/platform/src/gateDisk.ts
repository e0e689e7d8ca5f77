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
