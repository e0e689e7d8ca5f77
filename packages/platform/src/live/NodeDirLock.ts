/**
 * The lock of a data directory on the real disk: a lock file, `vellum.lock`, that names its holder.
 *
 * Node 20 has no flock/fcntl binding, so the lock is a file created atomically (written and synced under a
 * private name, then hard-linked to `vellum.lock`, which fails if the name exists) holding the holder's
 * identity: pid, host, boot id and the process's start time (Linux: /proc/<pid>/stat, in ticks since boot).
 *
 * A lock whose holder is gone is stale and taken over, so a SIGKILLed node does not block its restart:
 * - same host, and the pid is not running, or was started at another time or boot (pid reuse: in a
 *   container the node is often pid 1 on every start) → stale;
 * - another host (a shared file system) → held: its pid cannot be checked from here.
 * Taking over renames the stale file aside and checks it is still the one judged stale: if another start
 * replaced it meanwhile, it is put back and this start fails. Two racing starts thus give one holder; three
 * starting at the same microsecond on a stale lock could in theory give two.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import { Effect } from "effect"
import { DiskError, join, type DirLock } from "../Disk.js"

export const LOCK_FILE_NAME = "vellum.lock"

interface Holder {
  readonly pid: number
  readonly host: string
  readonly boot: string | null
  /** Start time of the process in clock ticks since boot (Linux), null where unknown. */
  readonly started: string | null
}

/** Lock files held by this process (a second lock of the same directory from here is refused too). */
const heldHere = new Map<string, object>()

const readOrNull = (path: string): string | null => {
  try {
    return fs.readFileSync(path, "utf8")
  } catch {
    return null
  }
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
const startTicks = (pid: number): string | null => {
  const stat = readOrNull(`/proc/${pid}/stat`)
  if (stat === null) return null
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null
}

const bootId = (): string | null => readOrNull("/proc/sys/kernel/random/boot_id")?.trim() ?? null

const self = (): Holder => ({ pid: process.pid, host: os.hostname(), boot: bootId(), started: startTicks(process.pid) })

const parseHolder = (text: string): Holder | undefined => {
  try {
    const value = JSON.parse(text) as Partial<Holder>
    if (typeof value.pid !== "number" || typeof value.host !== "string") return undefined
    return { pid: value.pid, host: value.host, boot: value.boot ?? null, started: value.started ?? null }
  } catch {
    return undefined
  }
}

const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Whether `holder` may still hold the lock, seen from this process. A damaged file holds nothing. */
const alive = (holder: Holder | undefined, me: Holder): boolean => {
  if (holder === undefined) return false
  if (holder.host !== me.host) return true
  if (holder.boot !== null && me.boot !== null && holder.boot !== me.boot) return false
  // Our own pid: this very process (another thread) if it started when we did, else an earlier process.
  if (holder.pid === me.pid) return holder.started !== null && holder.started === me.started
  if (!running(holder.pid)) return false
  return holder.started === null || startTicks(holder.pid) === null || startTicks(holder.pid) === holder.started
}

const lockedError = (file: string, holder: Holder | undefined, me: Holder): DiskError => {
  const who =
    holder === undefined
      ? "another process"
      : holder.host !== me.host
        ? `pid ${holder.pid} on host ${holder.host} (remove the file if that node is gone)`
        : holder.pid === me.pid
          ? `this process (pid ${holder.pid})`
          : `pid ${holder.pid}`
  return new DiskError({ reason: "Locked", op: "lock", path: file, message: `lock ${file}: held by ${who}` })
}

const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code

/** Creates `file` holding `text`, atomically; false if it exists. */
const createExclusive = (file: string, text: string, me: Holder): boolean => {
  const staged = `${file}.${me.pid}.new`
  const fd = fs.openSync(staged, "w", 0o644)
  try {
    fs.writeSync(fd, text)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  try {
    fs.linkSync(staged, file)
    return true
  } catch (e) {
    const code = errno(e)
    if (code === "EEXIST") return false
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw e
    // A file system without hard links: an exclusive create (its content is written a moment later).
    try {
      fs.writeFileSync(file, text, { flag: "wx", mode: 0o644 })
      return true
    } catch (e2) {
      if (errno(e2) === "EEXIST") return false
      throw e2
    }
  } finally {
    fs.rmSync(staged, { force: true })
  }
}

/**
 * Moves a stale lock (`staleText` is what was read and judged stale) out of the way; throws Locked if the
 * file had meanwhile been replaced by a live one, which is put back. Exported for the tests of that race.
 */
export const breakStale = (file: string, staleText: string, me: Holder = self()): void => {
  const aside = `${file}.${me.pid}.stale`
  try {
    fs.renameSync(file, aside)
  } catch (e) {
    if (errno(e) === "ENOENT") return
    throw e
  }
  const moved = readOrNull(aside)
  if (moved === staleText) {
    fs.rmSync(aside, { force: true })
    return
  }
  // Another start took the lock between our read and the rename: give it back.
  try {
    fs.linkSync(aside, file)
  } catch (e) {
    if (errno(e) !== "EEXIST") throw e
  }
  fs.rmSync(aside, { force: true })
  throw lockedError(file, moved === null ? undefined : parseHolder(moved), me)
}

const acquire = (dir: string): DirLock => {
  const file = join(dir, LOCK_FILE_NAME)
  const me = self()
  if (heldHere.has(file)) throw lockedError(file, me, me)
  const text = JSON.stringify(me) + "\n"
  for (let round = 0; round < 4; round++) {
    if (createExclusive(file, text, me)) {
      const token = {}
      heldHere.set(file, token)
      return {
        path: file,
        release: Effect.try({ try: () => release(file, text, token), catch: (e) => toLockError("unlock", file, e) })
      }
    }
    const current = readOrNull(file)
    if (current === null) continue
    const holder = parseHolder(current)
    if (alive(holder, me)) throw lockedError(file, holder, me)
    breakStale(file, current, me)
  }
  throw lockedError(file, undefined, me)
}

const release = (file: string, text: string, token: object): void => {
  if (heldHere.get(file) !== token) return
  heldHere.delete(file)
  // Only our own lock file is removed (it is ours unless someone removed it by hand and another node started).
  if (readOrNull(file) === text) fs.rmSync(file, { force: true })
}

const toLockError = (op: string, path: string, e: unknown): DiskError => {
  if (e instanceof DiskError) return e
  const code = errno(e)
  const reason = code === "ENOENT" ? "NotFound" : code === "ENOSPC" || code === "EDQUOT" ? "DiskFull" : "IOError"
  const detail = e instanceof Error ? e.message : String(e)
  return new DiskError({ reason, op, path, message: `${op} ${path}: ${code ?? "error"} (${detail})` })
}

/** Takes the lock of `dir` (see the module comment). */
export const lockDir = (dir: string): Effect.Effect<DirLock, DiskError> =>
  Effect.try({ try: () => acquire(dir), catch: (e) => toLockError("lock", dir, e) })
