/**
 * Reading the YAML config file through the `Disk` service, so the live node (NodeDisk) and tests or the
 * simulator (MemoryDisk) read it the same way. A missing file is `None`: whether that is an error is the
 * loader's decision (the default file is optional, a named one is not).
 */
import { Effect, Option } from "effect"
import { Disk } from "@vellum/platform"
import { ConfigFileUnreadable } from "./ConfigError.js"
import type { ReadConfigFile } from "./load.js"

/** Config files are small; a huge one is a mistake (a log or a chunk named by accident). */
const MAX_CONFIG_FILE_BYTES = 1024 * 1024

export const readConfigFileFromDisk: ReadConfigFile<Disk> = (path) =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const opened = yield* Effect.either(disk.open(path, { readOnly: true }))
    if (opened._tag === "Left") {
      if (opened.left.reason === "NotFound") return Option.none()
      return yield* Effect.fail(new ConfigFileUnreadable({ path, detail: opened.left.message, cause: opened.left }))
    }
    const handle = opened.right
    const content = yield* Effect.gen(function* () {
      const size = yield* handle.size
      if (size > MAX_CONFIG_FILE_BYTES) {
        return yield* Effect.fail(
          new ConfigFileUnreadable({ path, detail: `${size} bytes is too large for a config file` })
        )
      }
      return (yield* handle.read(0, size)).toString("utf8").replace(/^\uFEFF/, "")
    }).pipe(
      Effect.catchTag("DiskError", (error) =>
        Effect.fail(new ConfigFileUnreadable({ path, detail: error.message, cause: error }))
      ),
      Effect.ensuring(Effect.ignore(handle.close))
    )
    return Option.some(content)
  })
