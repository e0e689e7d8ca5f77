/**
 * Reads that do not trust one answer. A read can return damaged bytes without the disk being damaged (a
 * flipped bit in transfer), and taking that for damage would fail the state, or make recovery cut committed
 * frames. So bytes that do not check out are read again; only the same bad bytes twice are believed.
 */
import { DiskError, type FileHandle } from "@vellum/platform"
import { Effect } from "effect"
import { StateCorrupt } from "./types.js"

export const READ_ATTEMPTS = 5

/** The error for reads that kept returning different bytes. */
export const unstableReads = (path: string): DiskError =>
  new DiskError({
    reason: "IOError",
    op: "read",
    path,
    message: `${READ_ATTEMPTS} reads of ${path} returned different bytes`
  })

/**
 * Reads `length` bytes at `offset` and parses them; `parse` answers a reason string when they are not what
 * they should be. StateCorrupt when two reads return the same bad bytes.
 */
export const readVerified = <T>(
  handle: FileHandle,
  offset: number,
  length: number,
  what: string,
  parse: (bytes: Buffer) => T | string
): Effect.Effect<T, DiskError | StateCorrupt> =>
  Effect.gen(function* () {
    const earlier: Array<Buffer> = []
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const bytes = yield* handle.read(offset, length)
      const parsed = parse(bytes)
      if (typeof parsed !== "string") return parsed
      if (earlier.some((b) => b.equals(bytes)))
        return yield* new StateCorrupt({ path: handle.path, detail: `${what}: ${parsed}` })
      earlier.push(bytes)
    }
    return yield* unstableReads(handle.path)
  })
