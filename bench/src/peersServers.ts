/**
 * The servers of `npm run bench:peers` as child processes: each is started on a private port and directory and
 * stopped by its own pid (also on failure or SIGINT). The benchmark installs nothing: a peer whose server is
 * not installed is skipped, with the command that installs it.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"

export const INSTALL_PEERS = "apt-get install -y postgresql redis-server"

export interface PeerServer {
  readonly pid: number
  /** Stops the server (by its pid) and waits until it has exited; killed if it takes over 30 s. */
  readonly stop: () => Promise<void>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once("exit", () => resolve())
  })

export const stopChild = async (child: ChildProcess, signal: NodeJS.Signals): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill(signal)
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), 30_000)
  })
  const outcome = await Promise.race([exited(child).then(() => "exited" as const), late])
  clearTimeout(timer)
  if (outcome === "late") {
    child.kill("SIGKILL")
    await exited(child)
  }
}

/** Retries `probe` every 200 ms until it succeeds; fails if the server exits or is not up within 60 s. */
export const waitUntil = async (child: ChildProcess, name: string, probe: () => Promise<unknown>, log: string) => {
  const deadline = Date.now() + 60_000
  while (true) {
    try {
      await probe()
      return
    } catch (e) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL")
        const tail = fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").slice(-10).join("\n") : ""
        throw new Error(`${name} did not start: ${e instanceof Error ? e.message : String(e)}\n${tail}`)
      }
      await sleep(200)
    }
  }
}
