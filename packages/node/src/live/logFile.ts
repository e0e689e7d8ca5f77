/**
 * `Log`: the node's log also goes to a file, `<Log>/vellum.log`, one JSON object per line, appended across
 * runs (the directory is created if missing). Each line is written synchronously, so what was logged before
 * a crash is in the file. A failed write (a full disk) drops the line rather than stop the node.
 */
import * as fs from "node:fs"
import * as path from "node:path"

export const LOG_FILE_NAME = "vellum.log"

export interface LogFile {
  readonly path: string
  readonly write: (line: string) => void
  readonly close: () => void
}

/** Opens `<dir>/vellum.log` for appending; throws (with the system's reason) when it cannot. */
export const openLogFile = (dir: string): LogFile => {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, LOG_FILE_NAME)
  const fd = fs.openSync(file, "a")
  return {
    path: file,
    write: (line) => {
      try {
        fs.writeSync(fd, line + "\n")
      } catch {
        // Nowhere better to report it: the console still has the line.
      }
    },
    close: () => fs.closeSync(fd)
  }
}
