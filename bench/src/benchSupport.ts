/** What every storage-side benchmark shares: JSON-line output, a wall clock, a forced GC, fresh directories. */
import * as fs from "node:fs"
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

/** An empty directory `name` under `baseDir` (whatever was there is removed). */
export const freshDir = (baseDir: string, name: string) => {
  const dir = path.join(baseDir, name)
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  return dir
}
