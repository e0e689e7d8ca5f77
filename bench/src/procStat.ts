/**
 * CPU time from Linux's /proc, for the HTTP benchmarks: a process's (all its threads) and the whole
 * machine's, and a process's resident memory. Every reader answers undefined where /proc cannot be read. A
 * module of its own so that the parent and the load worker share it without importing each other (the load
 * worker starts on import when it has an IPC channel).
 */
import * as fs from "node:fs"

export interface CpuTicks {
  readonly user: number
  readonly system: number
}

/** Microseconds per clock tick (Linux's USER_HZ is 100). */
export const TICK_US = 10_000

/** utime and stime of a process in clock ticks, or undefined where /proc is not readable. */
export const processCpuTicks = (pid: number | undefined): CpuTicks | undefined => {
  if (pid === undefined) return undefined
  try {
    // The fields after the command name (which may hold spaces, so split after its closing parenthesis).
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return { user: Number(fields[11]), system: Number(fields[12]) }
  } catch {
    return undefined
  }
}

/** The machine's busy and total clock ticks so far (all cores; the first line of /proc/stat). */
export const machineTicks = (): { readonly busy: number; readonly total: number } | undefined => {
  try {
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
    // idle and iowait
    const idle = fields[3]! + (fields[4] ?? 0)
    const total = fields.reduce((a, b) => a + b, 0)
    return { busy: total - idle, total }
  } catch {
    return undefined
  }
}

/** A process's resident set size in bytes (`VmRSS` of /proc/{pid}/status), or undefined where unreadable. */
export const residentBytes = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

/** The fields of one /proc/{pid}/stat that the process-tree sums need. */
export interface ProcEntry {
  readonly pid: number
  readonly ppid: number
  /** utime + stime, in clock ticks. */
  readonly ticks: number
}

/** Parses the text of a /proc/{pid}/stat; undefined if it is not one. */
export const parseProcStat = (text: string): ProcEntry | undefined => {
  // The command name is in parentheses and may hold spaces or parentheses: the fields follow the last ") ".
  const close = text.lastIndexOf(") ")
  if (close < 0) return undefined
  const pid = Number(text.slice(0, text.indexOf(" ")))
  const fields = text.slice(close + 2).split(" ")
  // fields[0] is the state, [1] the parent's pid, [11] and [12] utime and stime.
  const ppid = Number(fields[1])
  const ticks = Number(fields[11]) + Number(fields[12])
  return Number.isInteger(pid) && Number.isInteger(ppid) && Number.isFinite(ticks) ? { pid, ppid, ticks } : undefined
}

/** The CPU ticks of `root` and every process descending from it, by pid. */
export const treeTicks = (entries: ReadonlyArray<ProcEntry>, root: number): Map<number, number> => {
  const children = new Map<number, Array<ProcEntry>>()
  for (const entry of entries) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry])
  const ticks = new Map<number, number>()
  const self = entries.find((entry) => entry.pid === root)
  const pending = self === undefined ? [] : [self]
  while (pending.length > 0) {
    const entry = pending.pop()!
    ticks.set(entry.pid, entry.ticks)
    pending.push(...(children.get(entry.pid) ?? []))
  }
  return ticks
}

/**
 * The ticks a process tree used between two readings: every process of the second reading counts what it
 * used since the first, or all it used if it was born in between. A process that ended in between is not
 * counted (the benchmarks' servers keep their processes for the whole window).
 */
export const treeTicksBetween = (start: ReadonlyMap<number, number>, end: ReadonlyMap<number, number>): number => {
  let sum = 0
  for (const [pid, ticks] of end) sum += ticks - (start.get(pid) ?? 0)
  return sum
}

/** Reads every process of /proc; undefined where /proc cannot be read. */
const allProcesses = (): Array<ProcEntry> | undefined => {
  let pids: Array<string>
  try {
    pids = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return undefined
  }
  const entries: Array<ProcEntry> = []
  for (const pid of pids) {
    try {
      const entry = parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
      if (entry !== undefined) entries.push(entry)
    } catch {
      // Ended since the directory was listed.
    }
  }
  return entries
}

/** The CPU ticks of process `root` and its descendants, by pid; undefined where /proc cannot be read. */
export const processTreeTicks = (root: number): Map<number, number> | undefined => {
  const entries = allProcesses()
  return entries === undefined ? undefined : treeTicks(entries, root)
}
