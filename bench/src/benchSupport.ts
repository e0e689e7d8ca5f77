/** What every storage-side benchmark shares: JSON-line output, a wall clock, a forced GC, fresh directories. */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const print = (obj: Record<string, unknown>) => console.log(JSON.stringify(obj))

/** Seconds, monotonic. */
export const now = () => Number(process.hrtime.bigint()) / 1e9

/** Two full collections when node runs with --expose-gc (memory figures start from a collected heap). */
export const gc = () => {
  const g = (globalThis as { gc?: () => void }).gc
  if (g) {
    g()
    g()
  }
}

/** A benchmark's command line: whether a flag is given, and the value that follows an option's name. */
export const commandLine = (args: ReadonlyArray<string> = process.argv.slice(2)) => ({
  has: (flag: string) => args.includes(flag),
  value: (name: string): string | undefined => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1] : undefined
  }
})

/**
 * What `--only a,b` selects among a benchmark's `parts`: a test of whether a part runs (every part without
 * the option). An unknown name throws.
 */
export const selectedParts = <P extends string>(only: string | undefined, parts: ReadonlyArray<P>) => {
  const names = only
    ?.split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "")
  const unknown = names?.filter((name) => !(parts as ReadonlyArray<string>).includes(name)) ?? []
  if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(", ")}; known: ${parts.join(", ")}`)
  return (part: P) => names === undefined || names.includes(part)
}

/** Removes a run's data directory, and its parent when that is left empty (as `.bench-data` usually is). */
export const removeRunDir = (dir: string) => {
  fs.rmSync(dir, { recursive: true, force: true })
  try {
    fs.rmdirSync(path.dirname(dir))
  } catch {
    // Not empty (other benchmarks' data) or already gone: leave it.
  }
}

/** Empties (or makes) a run's data directory and prints the run's setup line: node, cores, then `figures`. */
export const startRun = (dir: string, figures: Record<string, unknown>) => {
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  print({ bench: "setup", node: process.version, cpus: os.cpus().length, ...figures })
}

/** An empty directory `name` under `baseDir` (whatever was there is removed). */
export const freshDir = (baseDir: string, name: string) => {
  const dir = path.join(baseDir, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

/** The median of `xs` (the mean of the middle two for an even count); NaN when empty. */
export const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return Number.NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const MiB = 1024 * 1024

/**
 * The disk's sequential write rate in MiB/s: `totalBytes` (rounded up to 4 MiB) written in 4 MiB pieces to a
 * new file in `dir`, then one fdatasync; the file is removed after.
 */
export const sequentialWriteMiBPerSec = (dir: string, totalBytes: number): number => {
  const file = path.join(dir, "sequential-write-probe")
  const fd = fs.openSync(file, "w")
  const piece = Buffer.alloc(4 * MiB, 0x5a)
  const start = now()
  let at = 0
  try {
    for (; at < totalBytes; at += piece.length) fs.writeSync(fd, piece, 0, piece.length, at)
    fs.fdatasyncSync(fd)
  } finally {
    fs.closeSync(fd)
    fs.rmSync(file)
  }
  return at / MiB / (now() - start)
}
