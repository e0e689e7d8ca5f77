/**
 * Real node processes for the tests that must see the operating system's side: the compiled node
 * (`dist/main.mjs`, built by `buildDist`), `npm start` and `npx vellum`, each spawned with its output kept,
 * and the probes those tests make (is /ping answering, is the port free, is a pid alive).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import { createServer } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export { freePort } from "./compatSupport.js"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

/** Bundles the node into dist/ (as `npm start` does first). */
export const buildDist = () =>
  execFileSync(process.execPath, [path.join(repoRoot, "scripts/build.mjs")], { cwd: repoRoot, stdio: "pipe" })

export const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

export interface Spawned {
  readonly child: ChildProcess
  /** Everything it wrote so far, stdout and stderr. */
  readonly output: () => string
  /** Resolves with the exit code (or the signal's name) once it has exited. */
  readonly exited: Promise<number | string>
}

export const spawnLogged = (
  command: string,
  args: ReadonlyArray<string>,
  extraEnv: Readonly<Record<string, string>> = {}
): Spawned => {
  // A fresh environment without npm's variables (vitest may run under `npm test`): the node must not think
  // npm started it unless the test runs it through npm.
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("npm_"))), ...extraEnv }
  const child = spawn(command, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "?"))
  )
  return { child, output: () => out, exited }
}

/** The compiled node with `args` (and `extraEnv` added to the environment). */
export const spawnNode = (args: ReadonlyArray<string>, extraEnv: Readonly<Record<string, string>> = {}) =>
  spawnLogged(process.execPath, ["--enable-source-maps", path.join(repoRoot, "dist/main.mjs"), ...args], extraEnv)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until GET /ping answers 200; fails if `spawned` (when given) exits first, or `ms` pass. */
export const waitForPing = async (port: number, spawned?: Spawned, ms = 60_000) => {
  const deadline = Date.now() + ms
  let gone = false
  void spawned?.exited.then(() => (gone = true))
  while (Date.now() < deadline) {
    if (gone) throw new Error(`the node exited before answering /ping:\n${spawned?.output()}`)
    const status = await fetch(`http://127.0.0.1:${port}/ping`).then(
      (r) => r.status,
      () => 0
    )
    if (status === 200) return
    await sleep(100)
  }
  throw new Error(`no /ping answer on ${port} within ${ms} ms:\n${spawned?.output() ?? ""}`)
}

/** Resolves with the exit code, or fails after `ms`. */
export const exitWithin = (spawned: Spawned, ms: number) =>
  Promise.race([
    spawned.exited,
    sleep(ms).then(() => {
      throw new Error(`still running after ${ms} ms:\n${spawned.output()}`)
    })
  ])

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits until `pid` is gone; false if it is still alive after `ms`. */
export const pidGoneWithin = async (pid: number, ms: number) => {
  const deadline = Date.now() + ms
  while (alive(pid)) {
    if (Date.now() > deadline) return false
    await sleep(50)
  }
  return true
}

/** Whether 127.0.0.1:port can be listened on (nobody holds it). */
export const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer()
    probe.once("error", () => resolve(false))
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)))
  })

/** The pid written in a data directory's lock file (the node process holding it). */
export const lockHolder = (dbDir: string): number =>
  (JSON.parse(fs.readFileSync(path.join(dbDir, "vellum.lock"), "utf8")) as { pid: number }).pid
