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
