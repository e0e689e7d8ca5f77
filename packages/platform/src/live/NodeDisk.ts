/**
 * NodeDisk: the live `Disk` over node:fs.
 *
 * Reads and writes are synchronous positional syscalls (pread/pwrite via fs.readSync/fs.writeSync with an
 * explicit position): they normally hit the page cache, so a threadpool hop would cost more than the copy.
 * `sync` and `syncDir` are the slow ones, so they run fdatasync/fsync on the libuv threadpool and the
 * server keeps serving meanwhile.
 *
 * `append` tracks the end of the file per handle (from fstat at open, then every write and truncate through
 * this handle): the storage engine has a single writer per file.
 *
 * `lock` is a lock file naming its holder (NodeDirLock.ts).
 *
 * errno → reason: ENOENT NotFound, EEXIST AlreadyExists, ENOSPC/EDQUOT DiskFull, EBADF Closed,
 * EINVAL/EISDIR/ENOTDIR/ENOTEMPTY InvalidArgument (caller mistakes, as in MemoryDisk), anything else IOError.
 */
import * as fs from "node:fs"
import { Effect, Layer } from "effect"
import { lockDir } from "./NodeDirLock.js"
import { Disk, DiskError, type DiskErrorReason, type DiskService, type FileHandle, type OpenOptions } from "../Disk.js"

const reasonOf = (code: string | undefined): DiskErrorReason => {
  switch (code) {
    case "ENOENT":
      return "NotFound"
    case "EEXIST":
      return "AlreadyExists"
    case "ENOSPC":
    case "EDQUOT":
      return "DiskFull"
    case "EBADF":
      return "Closed"
    case "EINVAL":
    case "EISDIR":
    case "ENOTDIR":
    case "ENOTEMPTY":
      return "InvalidArgument"
    default:
      return "IOError"
  }
}

/** Maps a thrown fs error to a DiskError; the message keeps the errno code and the path. */
export const toDiskError = (op: string, path: string, error: unknown): DiskError => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const detail = error instanceof Error ? error.message : String(error)
  return new DiskError({ reason: reasonOf(code), op, path, message: `${op} ${path}: ${code ?? "error"} (${detail})` })
}

const attempt = <A>(op: string, path: string, body: () => A): Effect.Effect<A, DiskError> =>
  Effect.try({ try: body, catch: (e) => toDiskError(op, path, e) })

const invalid = (op: string, path: string, message: string): DiskError =>
  new DiskError({ reason: "InvalidArgument", op, path, message: `${op} ${path}: ${message}` })

const closedError = (op: string, path: string): DiskError =>
  new DiskError({ reason: "Closed", op, path, message: `${op} ${path}: handle is closed (EBADF)` })

const checkArgs = (op: string, path: string, ...values: ReadonlyArray<number>): DiskError | undefined => {
  for (const v of values) {
    if (!Number.isSafeInteger(v) || v < 0) return invalid(op, path, `invalid position or length ${v} (EINVAL)`)
  }
  return undefined
}

/** Runs an fs callback API on the threadpool. */
const onThreadpool = (op: string, path: string, call: (done: (err: NodeJS.ErrnoException | null) => void) => void) =>
  Effect.async<void, DiskError>((resume) => {
    call((err) => resume(err ? Effect.fail(toDiskError(op, path, err)) : Effect.void))
  })

const openFlags = (options: OpenOptions): number => {
  const c = fs.constants
  let flags = options.readOnly === true ? c.O_RDONLY : c.O_RDWR
  if (options.create === true) flags |= c.O_CREAT
  if (options.create === true && options.exclusive === true) flags |= c.O_EXCL
  return flags
}

const makeHandle = (path: string, fd: number, readOnly: boolean, initialEnd: number): FileHandle => {
  // `fd` numbers are reused by the OS after close, so a closed handle must never reach a syscall.
  let closed = false
  let end = initialEnd

  const live = <A>(op: string, body: () => Effect.Effect<A, DiskError>): Effect.Effect<A, DiskError> =>
    Effect.suspend(() => (closed ? Effect.fail(closedError(op, path)) : body()))

  const writable = <A>(op: string, body: () => Effect.Effect<A, DiskError>): Effect.Effect<A, DiskError> =>
    live(op, () => (readOnly ? Effect.fail(invalid(op, path, "handle is read-only (EBADF)")) : body()))

  const writeAll = (op: string, position: number, data: Uint8Array): Effect.Effect<void, DiskError> => {
    const bad = checkArgs(op, path, position, position + data.length)
    if (bad) return Effect.fail(bad)
    return attempt(op, path, () => {
      let done = 0
      while (done < data.length) {
        done += fs.writeSync(fd, data, done, data.length - done, position + done)
      }
      if (data.length > 0) end = Math.max(end, position + data.length)
    })
  }

  return {
    path,
    read: (position, length) =>
      live("read", () => {
        const bad = checkArgs("read", path, position, length)
        if (bad) return Effect.fail(bad)
        return attempt("read", path, () => {
          const buf = Buffer.allocUnsafe(length)
          let done = 0
          while (done < length) {
            const n = fs.readSync(fd, buf, done, length - done, position + done)
            if (n === 0) break
            done += n
          }
          return done === length ? buf : Buffer.from(buf.subarray(0, done))
        })
      }),
    readInto: (position, target) =>
      live("read", () => {
        const bad = checkArgs("read", path, position, target.length)
        if (bad) return Effect.fail(bad)
        return attempt("read", path, () => {
          let done = 0
          while (done < target.length) {
            const n = fs.readSync(fd, target, done, target.length - done, position + done)
            if (n === 0) break
            done += n
          }
          return done
        })
      }),
    write: (position, data) => writable("write", () => writeAll("write", position, data)),
    append: (data) =>
      writable("append", () => {
        const position = end
        return Effect.as(writeAll("append", position, data), position)
      }),
    sync: live("sync", () => onThreadpool("sync", path, (done) => fs.fdatasync(fd, done))),
    size: live("size", () => attempt("size", path, () => fs.fstatSync(fd).size)),
    truncate: (length) =>
      writable("truncate", () => {
        const bad = checkArgs("truncate", path, length)
        if (bad) return Effect.fail(bad)
        return attempt("truncate", path, () => {
          fs.ftruncateSync(fd, length)
          end = length
        })
      }),
    close: live("close", () => {
      closed = true
      return attempt("close", path, () => fs.closeSync(fd))
    })
  }
}

export const make: DiskService = {
  open: (path, options = {}) =>
    attempt("open", path, () => {
      const fd = fs.openSync(path, openFlags(options), 0o644)
      try {
        const stat = fs.fstatSync(fd)
        // Linux lets O_RDONLY open a directory; reject it here as MemoryDisk does.
        if (stat.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: "EISDIR" })
        return makeHandle(path, fd, options.readOnly === true, stat.size)
      } catch (e) {
        fs.closeSync(fd)
        throw e
      }
    }),
  list: (dir) => attempt("list", dir, () => fs.readdirSync(dir).sort()),
  mkdir: (dir) =>
    attempt("mkdir", dir, () => {
      fs.mkdirSync(dir, { recursive: true })
    }),
  remove: (path) =>
    attempt("remove", path, () => {
      if (fs.lstatSync(path).isDirectory()) fs.rmdirSync(path)
      else fs.unlinkSync(path)
    }),
  rename: (from, to) => attempt("rename", from, () => fs.renameSync(from, to)),
  syncDir: (dir) =>
    Effect.acquireUseRelease(
      attempt("syncDir", dir, () => fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY)),
      (fd) => onThreadpool("syncDir", dir, (done) => fs.fsync(fd, done)),
      (fd) => Effect.ignore(attempt("syncDir", dir, () => fs.closeSync(fd)))
    ),
  exists: (path) =>
    attempt("exists", path, () => {
      try {
        fs.statSync(path)
        return true
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code
        if (code === "ENOENT" || code === "ENOTDIR") return false
        throw e
      }
    }),
  lock: lockDir
}

export const layer: Layer.Layer<Disk> = Layer.succeed(Disk, make)
