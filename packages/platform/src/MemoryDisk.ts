/**
 * MemoryDisk: an in-memory `Disk` with a durability model and seeded fault injection, for tests and the
 * simulator (a simulated disk after LevelDB's FaultInjectionTestEnv and RocksDB's
 * FaultInjectionTestFS).
 *
 * Model:
 * - A file is an inode with its current bytes, its durable bytes (what a crash would leave) and the log of
 *   operations (writes, truncates) since its last `sync`. `sync` applies that log to the durable bytes.
 * - A directory holds a current and a durable entry map (name → node). create/rename/remove change the
 *   current map; `syncDir` copies it to the durable map. Directories themselves are always durable
 *   (`mkdir`, removing an empty directory and renaming a directory take effect in both maps at once).
 * - `crash(prng)` is power loss: handles die, each undurable entry change is reverted or kept, and each
 *   file keeps its durable bytes plus a random prefix of its unsynced operations, the last write possibly
 *   torn. The MemoryDisk object survives, so the simulator can boot a new node on what is left.
 *
 * Damage at rest (`flipBitAtRest`): a bit of a file's stored bytes flips while no process touches it (bit rot, a
 * misdirected write), current and durable alike — unlike `bitFlipOnRead`, which damages only a read's copy.
 * The simulator plants it between a crash and the next start, in synced (acknowledged) data.
 *
 * Directory locks are held in memory (no file): a second `lock` of a directory fails with Locked until the
 * first is released or the disk crashes (the process holding it died).
 *
 * Faults (only while `faulty` is true), each drawn from its own fork of the seeded Prng so that enabling
 * one kind does not reshuffle the others: read/write/sync errors (reason IOError), a flipped bit in the
 * copy a read returns, latency slept on Effect's Clock, and `capacityBytes` (DiskFull). A failed write or
 * truncate changes nothing; a failed sync makes nothing durable.
 *
 * Everything runs synchronously inside Effect.suspend (apart from injected latency), so a simulator step
 * stays synchronous and deterministic. Paths are POSIX strings; relative paths are taken from the root.
 */
import { Duration, Effect, Layer } from "effect"
import {
  Disk,
  DiskError,
  type DirLock,
  type DiskErrorReason,
  type DiskService,
  type FileHandle,
  type OpenOptions
} from "./Disk.js"
import { Prng } from "./Prng.js"

/** Per-operation probabilities in [0, 1]. */
export interface MemoryDiskFaults {
  /** A `read` fails with IOError. */
  readonly readError?: number
  /** A `write`, `append` or `truncate` fails with IOError and changes nothing. */
  readonly writeError?: number
  /** A `sync` or `syncDir` fails with IOError and makes nothing durable. */
  readonly syncError?: number
  /** A successful non-empty `read` returns a copy with one random bit flipped (stored bytes unchanged). */
  readonly bitFlipOnRead?: number
  /** Latency slept (on Effect's Clock) before an I/O operation, uniform in [min, max] whole milliseconds. */
  readonly latencyMs?: { readonly min: number; readonly max: number }
  /** Probability that an operation gets latency (default 1 when `latencyMs` is set). */
  readonly latencyChance?: number
}

export interface MemoryDiskOptions {
  /** Source of every fault decision (default: `new Prng(0)`). */
  readonly prng?: Prng
  readonly faults?: MemoryDiskFaults
  /** Total bytes of all files; growing past it fails with DiskFull (only while `faulty`). */
  readonly capacityBytes?: number
}

/** "random": each undurable change independently survives or not. "strict": nothing undurable survives. */
export type CrashMode = "random" | "strict"

export interface CrashSummary {
  readonly mode: CrashMode
  readonly handlesInvalidated: number
  readonly entriesReverted: number
  readonly entriesKept: number
  /** Files that had unsynced operations. */
  readonly filesWithUnsyncedOps: number
  readonly opsKept: number
  readonly opsDropped: number
  readonly tornWrites: number
}

export interface MemoryDiskStats {
  reads: number
  writes: number
  truncates: number
  syncs: number
  dirSyncs: number
  bytesRead: number
  bytesWritten: number
  faultsInjected: number
  /** Operations refused with DiskFull (the `capacityBytes` limit), counted among `faultsInjected` too. */
  diskFullErrors: number
  /** Each injected fault by kind (all counted among `faultsInjected` too), so a run can say which fired. */
  readErrors: number
  /** Failed writes, appends and truncates. */
  writeErrors: number
  /** Failed file and directory syncs. */
  syncErrors: number
  bitFlips: number
  /** Operations that slept an injected latency. */
  latencies: number
  /** Bits flipped at rest (`flipBitAtRest`). */
  damagedAtRest: number
}

/** A growable byte array; bytes past `length` are always zero, so growing never exposes stale data. */
class Bytes {
  buf: Buffer = Buffer.alloc(0)
  length = 0

  private ensure(capacity: number): void {
    if (capacity <= this.buf.length) return
    const next = Buffer.alloc(Math.max(capacity, this.buf.length * 2, 64))
    this.buf.copy(next, 0, 0, this.length)
    this.buf = next
  }

  write(position: number, data: Uint8Array): void {
    // As pwrite: writing nothing does not extend the file.
    if (data.length === 0) return
    this.ensure(position + data.length)
    this.buf.set(data, position)
    this.length = Math.max(this.length, position + data.length)
  }

  truncate(length: number): void {
    if (length < this.length) this.buf.fill(0, length, this.length)
    else this.ensure(length)
    this.length = length
  }

  apply(op: Op): void {
    if (op._tag === "write") this.write(op.position, op.data)
    else this.truncate(op.length)
  }

  read(position: number, length: number): Buffer {
    const end = Math.min(this.length, position + length)
    return position >= end ? Buffer.alloc(0) : Buffer.from(this.buf.subarray(position, end))
  }

  snapshot(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.length))
  }

  clone(): Bytes {
    const copy = new Bytes()
    copy.write(0, this.buf.subarray(0, this.length))
    copy.length = this.length
    return copy
  }
}

type Op =
  | { readonly _tag: "write"; readonly position: number; readonly data: Buffer }
  | { readonly _tag: "truncate"; readonly length: number }

interface FileNode {
  readonly kind: "file"
  current: Bytes
  durable: Bytes
  /** Operations since the last sync, in order. */
  log: Array<Op>
}

interface DirNode {
  readonly kind: "dir"
  readonly entries: Map<string, Node>
  durable: Map<string, Node>
}

type Node = FileNode | DirNode

interface HandleState {
  closed: boolean
  readonly generation: number
}

const newFile = (): FileNode => ({ kind: "file", current: new Bytes(), durable: new Bytes(), log: [] })
const newDir = (): DirNode => ({ kind: "dir", entries: new Map(), durable: new Map() })

/** Path segments with ".", ".." and empty segments resolved; "/a/b", "a/b" and "a//b/" are the same. */
const segmentsOf = (path: string): Array<string> => {
  const out: Array<string> = []
  for (const s of path.split("/")) {
    if (s === "" || s === ".") continue
    if (s === "..") out.pop()
    else out.push(s)
  }
  return out
}

const fail = (reason: DiskErrorReason, op: string, path: string, message: string): DiskError =>
  new DiskError({ reason, op, path, message: `${op} ${path}: ${message}` })

/** Runs a synchronous body that throws DiskError for expected failures; anything else is a defect. */
const run = <A>(body: () => A): Effect.Effect<A, DiskError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(body())
    } catch (e) {
      if (e instanceof DiskError) return Effect.fail(e)
      throw e
    }
  })

const sortedKeys = (...maps: ReadonlyArray<ReadonlyMap<string, Node>>): Array<string> => {
  const names = new Set<string>()
  for (const m of maps) for (const k of m.keys()) names.add(k)
  return [...names].sort()
}

export class MemoryDisk {
  /** A `Disk` layer over `disk`, or over a fresh MemoryDisk (one per build) when none is given. */
  static readonly layer = (disk?: MemoryDisk): Layer.Layer<Disk> =>
    Layer.sync(Disk, () => (disk ?? new MemoryDisk()).service)

  /** Master switch for every fault (including `capacityBytes`); the liveness phase turns it off. */
  faulty = true
  /**
   * How long a file `sync` takes (slept on Effect's Clock before it makes anything durable; 0: no time), so a
   * crash can fall between a write and its sync (the write then survives in part, possibly torn) — a crash
   * during a sync, where the synchronous model would otherwise let a write and its sync happen at one instant.
   */
  syncMillis = 0
  /** File syncs taking their `syncMillis` now (a crash now falls between their writes and their syncs). */
  private readonly syncing = new Set<{ readonly path: string }>()
  capacityBytes: number | undefined
  readonly stats: MemoryDiskStats = {
    reads: 0,
    writes: 0,
    truncates: 0,
    syncs: 0,
    dirSyncs: 0,
    bytesRead: 0,
    bytesWritten: 0,
    faultsInjected: 0,
    diskFullErrors: 0,
    readErrors: 0,
    writeErrors: 0,
    syncErrors: 0,
    bitFlips: 0,
    latencies: 0,
    damagedAtRest: 0
  }
  /** The `Disk` service over this disk; keep the MemoryDisk to crash it and build a new node on it. */
  readonly service: DiskService

  private readonly root: DirNode = newDir()
  private faults: MemoryDiskFaults | undefined
  /** Bumped by `crash`: handles opened in an earlier generation are dead. */
  private generation = 0
  private readonly openHandles = new Set<HandleState>()
  /** Held directory locks: the directory's path ("/a/b") → the token of its holder. */
  private readonly locks = new Map<string, object>()
  private readonly rng: {
    readonly read: Prng
    readonly write: Prng
    readonly sync: Prng
    readonly flip: Prng
    readonly latency: Prng
  }

  constructor(options: MemoryDiskOptions = {}) {
    const prng = options.prng ?? new Prng(0)
    this.rng = {
      read: prng.fork("read"),
      write: prng.fork("write"),
      sync: prng.fork("sync"),
      flip: prng.fork("bitflip"),
      latency: prng.fork("latency")
    }
    this.faults = options.faults
    this.capacityBytes = options.capacityBytes
    this.service = this.makeService()
  }

  setFaults(faults: MemoryDiskFaults | undefined): void {
    this.faults = faults
  }

  // ---- introspection (synchronous, for checkers and tests) ----

  /** Current paths of all files ("/a/b"), sorted. */
  files(): Array<string> {
    return this.walk((dir) => dir.entries)
  }

  /** Paths whose directory entries are durable, i.e. what a strict crash would leave, sorted. */
  durableFiles(): Array<string> {
    return this.walk((dir) => dir.durable)
  }

  /** Current bytes of a file (a copy). Throws a DiskError when there is no such file. */
  readFileSync(path: string): Buffer {
    return this.fileAt("readFileSync", path).current.snapshot()
  }

  /** Durable bytes of the file now at `path` (whether or not its directory entry is durable). */
  durableBytes(path: string): Buffer {
    return this.fileAt("durableBytes", path).durable.snapshot()
  }

  /** Number of operations on the file since its last sync. */
  unsyncedOps(path: string): number {
    return this.fileAt("unsyncedOps", path).log.length
  }

  /** Sum of the current sizes of all files reachable from the root (each inode once). */
  totalBytes(): number {
    let total = 0
    for (const file of this.reachableFiles()) total += file.current.length
    return total
  }

  /** Paths of the files whose sync is taking its `syncMillis` now, sorted. */
  syncingFiles(): Array<string> {
    return [...this.syncing].map((s) => s.path).sort()
  }

  openHandleCount(): number {
    return this.openHandles.size
  }

  /** Directories whose lock is held ("/a/b"), sorted. */
  lockedDirs(): Array<string> {
    return [...this.locks.keys()].sort()
  }

  /**
   * Flips bit `bit` (0..7) of byte `offset` of the file at `path` in its stored bytes, current and durable
   * alike (damage at rest: see the module comment; flip it again to repair it). The file must have no
   * unsynced operations (call it after a crash), so the damage is all there is to its state.
   */
  flipBitAtRest(path: string, offset: number, bit: number): void {
    const file = this.fileAt("flipBitAtRest", path)
    if (file.log.length > 0) throw fail("InvalidArgument", "flipBitAtRest", path, "the file has unsynced operations")
    if (offset < 0 || offset >= file.current.length || bit < 0 || bit > 7)
      throw fail("InvalidArgument", "flipBitAtRest", path, `no bit ${bit} of byte ${offset} in the file`)
    file.current.buf[offset]! ^= 1 << bit
    file.durable.buf[offset]! ^= 1 << bit
    this.stats.damagedAtRest++
  }

  // ---- crash ----

  /**
   * Simulated power loss. Every handle dies (later calls fail with Closed). Each directory entry change
   * not made durable by syncDir is reverted or kept (50/50; all reverted in "strict" mode). Each file then
   * holds its durable bytes plus a random prefix of its unsynced operations, the last applied write
   * possibly torn at a byte boundary ("strict": none survive). What is left is durable.
   */
  crash(prng: Prng, mode: CrashMode = "random"): CrashSummary {
    const handlesInvalidated = this.openHandles.size
    this.openHandles.clear()
    // The processes holding locks died with the power.
    this.locks.clear()
    this.generation++
    this.syncing.clear()
    let entriesReverted = 0
    let entriesKept = 0
    const visit = (dir: DirNode): void => {
      for (const name of sortedKeys(dir.entries, dir.durable)) {
        const current = dir.entries.get(name)
        const durable = dir.durable.get(name)
        if (current === durable) continue
        if (mode === "strict" || prng.chance(0.5)) {
          if (durable === undefined) dir.entries.delete(name)
          else dir.entries.set(name, durable)
          entriesReverted++
        } else entriesKept++
      }
      dir.durable = new Map(dir.entries)
      for (const name of sortedKeys(dir.entries)) {
        const child = dir.entries.get(name)!
        if (child.kind === "dir") visit(child)
      }
    }
    visit(this.root)

    let filesWithUnsyncedOps = 0
    let opsKept = 0
    let opsDropped = 0
    let tornWrites = 0
    for (const file of this.reachableFiles()) {
      if (file.log.length === 0) continue
      filesWithUnsyncedOps++
      const log = file.log
      const keep = mode === "strict" ? 0 : prng.int(0, log.length)
      const next = file.durable.clone()
      for (let i = 0; i < keep; i++) {
        const op = log[i]!
        if (i === keep - 1 && op._tag === "write" && op.data.length > 0 && prng.chance(0.5)) {
          next.write(op.position, op.data.subarray(0, prng.int(0, op.data.length - 1)))
          tornWrites++
        } else next.apply(op)
      }
      opsKept += keep
      opsDropped += log.length - keep
      file.current = next
      file.durable = next.clone()
      file.log = []
    }
    return {
      mode,
      handlesInvalidated,
      entriesReverted,
      entriesKept,
      filesWithUnsyncedOps,
      opsKept,
      opsDropped,
      tornWrites
    }
  }

  // ---- internals ----

  private walk(entriesOf: (dir: DirNode) => ReadonlyMap<string, Node>): Array<string> {
    const out: Array<string> = []
    const visit = (dir: DirNode, prefix: string): void => {
      const entries = entriesOf(dir)
      for (const name of sortedKeys(entries)) {
        const node = entries.get(name)!
        if (node.kind === "dir") visit(node, `${prefix}/${name}`)
        else out.push(`${prefix}/${name}`)
      }
    }
    visit(this.root, "")
    return out.sort()
  }

  private reachableFiles(): Array<FileNode> {
    const seen = new Set<FileNode>()
    const visit = (dir: DirNode): void => {
      for (const name of sortedKeys(dir.entries)) {
        const node = dir.entries.get(name)!
        if (node.kind === "dir") visit(node)
        else seen.add(node)
      }
    }
    visit(this.root)
    return [...seen]
  }

  private lookup(segments: ReadonlyArray<string>): Node | undefined {
    let node: Node = this.root
    for (const s of segments) {
      if (node.kind !== "dir") return undefined
      const next: Node | undefined = node.entries.get(s)
      if (next === undefined) return undefined
      node = next
    }
    return node
  }

  private fileAt(op: string, path: string): FileNode {
    const node = this.lookup(segmentsOf(path))
    if (node === undefined) throw fail("NotFound", op, path, "no such file")
    if (node.kind !== "file") throw fail("InvalidArgument", op, path, "is a directory")
    return node
  }

  private dirAt(op: string, path: string): DirNode {
    const node = this.lookup(segmentsOf(path))
    if (node === undefined) throw fail("NotFound", op, path, "no such directory")
    if (node.kind !== "dir") throw fail("InvalidArgument", op, path, "not a directory")
    return node
  }

  /** The directory that holds `path`, and the entry name in it. */
  private parentOf(op: string, path: string): { readonly dir: DirNode; readonly name: string } {
    const segments = segmentsOf(path)
    const name = segments.pop()
    if (name === undefined) throw fail("InvalidArgument", op, path, "is the root directory")
    return { dir: this.dirAt(op, `/${segments.join("/")}`), name }
  }

  private get active(): MemoryDiskFaults | undefined {
    return this.faulty ? this.faults : undefined
  }

  /** Throws an injected IOError with probability `p`, drawn from `prng`, counted under `kind`. */
  private maybeFail(
    prng: Prng,
    p: number | undefined,
    kind: "readErrors" | "writeErrors" | "syncErrors",
    op: string,
    path: string
  ): void {
    if (p !== undefined && this.faulty && prng.chance(p)) {
      this.stats.faultsInjected++
      this.stats[kind]++
      throw fail("IOError", op, path, "injected I/O error (EIO)")
    }
  }

  /** An I/O operation: injected latency on Effect's Clock, then the synchronous body. */
  private io<A>(body: () => A): Effect.Effect<A, DiskError> {
    return Effect.suspend(() => {
      const latency = this.active?.latencyMs
      if (latency === undefined || !this.rng.latency.chance(this.active?.latencyChance ?? 1)) return run(body)
      const ms = this.rng.latency.int(Math.max(0, latency.min), Math.max(0, latency.min, latency.max))
      this.stats.faultsInjected++
      this.stats.latencies++
      return Effect.zipRight(Effect.sleep(Duration.millis(ms)), run(body))
    })
  }

  /** Fails with DiskFull when growing `file` to `newLength` would exceed the capacity. */
  private checkCapacity(file: FileNode, newLength: number, op: string, path: string): void {
    const growth = newLength - file.current.length
    if (this.capacityBytes === undefined || !this.faulty || growth <= 0) return
    if (this.totalBytes() + growth > this.capacityBytes) {
      this.stats.faultsInjected++
      this.stats.diskFullErrors++
      throw fail("DiskFull", op, path, `no space left on device (ENOSPC), capacity ${this.capacityBytes} bytes`)
    }
  }

  private makeHandle(path: string, file: FileNode, readOnly: boolean): FileHandle {
    const state: HandleState = { closed: false, generation: this.generation }
    this.openHandles.add(state)
    const check = (op: string): void => {
      if (state.closed || state.generation !== this.generation) throw fail("Closed", op, path, "handle is closed")
    }
    const checkArgs = (op: string, ...values: ReadonlyArray<number>): void => {
      for (const v of values) {
        if (!Number.isSafeInteger(v) || v < 0)
          throw fail("InvalidArgument", op, path, `invalid position or length ${v}`)
      }
    }
    const checkWritable = (op: string): void => {
      check(op)
      if (readOnly) throw fail("InvalidArgument", op, path, "handle is read-only")
    }
    const writeAt = (op: string, position: number, data: Uint8Array): void => {
      checkArgs(op, position, position + data.length)
      this.maybeFail(this.rng.write, this.active?.writeError, "writeErrors", op, path)
      if (data.length > 0) this.checkCapacity(file, position + data.length, op, path)
      // Copy: the caller may reuse its buffer, and the log must keep what was written.
      const copy = Buffer.from(data)
      file.current.write(position, copy)
      file.log.push({ _tag: "write", position, data: copy })
      this.stats.writes++
      this.stats.bytesWritten += copy.length
    }
    /** A read with its faults (an error, or one bit flipped in the copy returned). */
    const read = (position: number, length: number): Buffer => {
      check("read")
      checkArgs("read", position, length)
      this.maybeFail(this.rng.read, this.active?.readError, "readErrors", "read", path)
      const data = file.current.read(position, length)
      const flip = this.active?.bitFlipOnRead
      if (data.length > 0 && flip !== undefined && this.rng.flip.chance(flip)) {
        const bit = this.rng.flip.int(0, data.length * 8 - 1)
        data[bit >> 3] ^= 1 << (bit & 7)
        this.stats.faultsInjected++
        this.stats.bitFlips++
      }
      this.stats.reads++
      this.stats.bytesRead += data.length
      return data
    }
    return {
      path,
      read: (position, length) => this.io(() => read(position, length)),
      readInto: (position, target) =>
        this.io(() => {
          const data = read(position, target.length)
          target.set(data)
          return data.length
        }),
      write: (position, data) =>
        this.io(() => {
          checkWritable("write")
          writeAt("write", position, data)
        }),
      append: (data) =>
        this.io(() => {
          checkWritable("append")
          const position = file.current.length
          writeAt("append", position, data)
          return position
        }),
      sync: Effect.zipRight(
        Effect.suspend(() => {
          if (this.syncMillis === 0) return Effect.void
          const syncing = { path }
          this.syncing.add(syncing)
          // A crash forgets the syncs it cut: they never end.
          return Effect.ensuring(
            Effect.sleep(Duration.millis(this.syncMillis)),
            Effect.sync(() => this.syncing.delete(syncing))
          )
        }),
        this.io(() => {
          check("sync")
          this.maybeFail(this.rng.sync, this.active?.syncError, "syncErrors", "sync", path)
          for (const op of file.log) file.durable.apply(op)
          file.log = []
          this.stats.syncs++
        })
      ),
      size: run(() => {
        check("size")
        return file.current.length
      }),
      truncate: (length) =>
        this.io(() => {
          checkWritable("truncate")
          checkArgs("truncate", length)
          this.maybeFail(this.rng.write, this.active?.writeError, "writeErrors", "truncate", path)
          this.checkCapacity(file, length, "truncate", path)
          file.current.truncate(length)
          file.log.push({ _tag: "truncate", length })
          this.stats.truncates++
        }),
      close: run(() => {
        check("close")
        state.closed = true
        this.openHandles.delete(state)
      })
    }
  }

  private makeService(): DiskService {
    const open = (path: string, options: OpenOptions = {}) =>
      this.io(() => {
        const { dir, name } = this.parentOf("open", path)
        let node = dir.entries.get(name)
        if (node?.kind === "dir") throw fail("InvalidArgument", "open", path, "is a directory")
        if (node !== undefined && options.create === true && options.exclusive === true) {
          throw fail("AlreadyExists", "open", path, "file exists (EEXIST)")
        }
        if (node === undefined) {
          if (options.create !== true) throw fail("NotFound", "open", path, "no such file (ENOENT)")
          node = newFile()
          dir.entries.set(name, node)
        }
        return this.makeHandle(path, node, options.readOnly === true)
      })

    const list = (path: string) => run(() => sortedKeys(this.dirAt("list", path).entries))

    const mkdir = (path: string) =>
      run(() => {
        let dir = this.root
        for (const s of segmentsOf(path)) {
          const next = dir.entries.get(s)
          if (next?.kind === "file") throw fail("AlreadyExists", "mkdir", path, `${s} is a file (EEXIST)`)
          if (next !== undefined) {
            dir = next
            continue
          }
          const created = newDir()
          // Directories are durable at once (see the module comment).
          dir.entries.set(s, created)
          dir.durable.set(s, created)
          dir = created
        }
      })

    const remove = (path: string) =>
      run(() => {
        const { dir, name } = this.parentOf("remove", path)
        const node = dir.entries.get(name)
        if (node === undefined) throw fail("NotFound", "remove", path, "no such file or directory (ENOENT)")
        if (node.kind === "dir") {
          if (node.entries.size > 0) throw fail("InvalidArgument", "remove", path, "directory not empty (ENOTEMPTY)")
          dir.durable.delete(name)
        }
        dir.entries.delete(name)
      })

    const rename = (from: string, to: string) =>
      run(() => {
        const src = this.parentOf("rename", from)
        const node = src.dir.entries.get(src.name)
        if (node === undefined) throw fail("NotFound", "rename", from, "no such file or directory (ENOENT)")
        const dst = this.parentOf("rename", to)
        if (src.dir === dst.dir && src.name === dst.name) return
        const target = dst.dir.entries.get(dst.name)
        if (node.kind === "file") {
          if (target?.kind === "dir") throw fail("InvalidArgument", "rename", to, "is a directory (EISDIR)")
          dst.dir.entries.set(dst.name, node)
          src.dir.entries.delete(src.name)
          return
        }
        if (target?.kind === "file") throw fail("InvalidArgument", "rename", to, "not a directory (ENOTDIR)")
        if (target !== undefined && target.entries.size > 0) {
          throw fail("InvalidArgument", "rename", to, "directory not empty (ENOTEMPTY)")
        }
        const fromSegments = segmentsOf(from)
        const toSegments = segmentsOf(to)
        if (fromSegments.every((s, i) => toSegments[i] === s)) {
          throw fail("InvalidArgument", "rename", to, "cannot move a directory into itself (EINVAL)")
        }
        // Directories are always durable, so their renames are too.
        dst.dir.entries.set(dst.name, node)
        dst.dir.durable.set(dst.name, node)
        src.dir.entries.delete(src.name)
        src.dir.durable.delete(src.name)
      })

    const syncDir = (path: string) =>
      this.io(() => {
        const dir = this.dirAt("syncDir", path)
        this.maybeFail(this.rng.sync, this.active?.syncError, "syncErrors", "syncDir", path)
        dir.durable = new Map(dir.entries)
        this.stats.dirSyncs++
      })

    const exists = (path: string) => run(() => this.lookup(segmentsOf(path)) !== undefined)

    const lock = (path: string) =>
      run((): DirLock => {
        this.dirAt("lock", path)
        const key = `/${segmentsOf(path).join("/")}`
        if (this.locks.has(key)) throw fail("Locked", "lock", path, `${key} is held by another open of the directory`)
        const token = {}
        this.locks.set(key, token)
        return {
          path: key,
          release: run(() => {
            if (this.locks.get(key) === token) this.locks.delete(key)
          })
        }
      })

    return { open, list, mkdir, remove, rename, syncDir, exists, lock }
  }
}
