// Temporary directories on the real disk for a test file, removed after its tests.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"

/** A maker of fresh directories named `prefix…`; call it at the top of a test file. */
export const tempDirs = (prefix: string): (() => string) => {
  const made: Array<string> = []
  afterAll(() => {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
    made.push(dir)
    return dir
  }
}
