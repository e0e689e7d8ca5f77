/**
 * The child processes of `npm run bench:http`: the Vellum node (compiled, `node dist/main.mjs`, as `npm start`
 * runs it), the bare server and the load worker (forked TypeScript modules with an IPC channel, under tsx).
 */
import { fork, spawn, type ChildProcess } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { BareMessage, CannedReplies, LoadPlan, LoadResult } from "./httpPlan.js"

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, "../..")
const TSX = ["--import", "tsx"]

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A port nobody listens on right now (the OS picks it; released before the node binds it). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = net.createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as net.AddressInfo).port
      probe.close(() => resolve(port))
    })
  })

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once("exit", () => resolve())
  })

/** Waits for the child to exit; past `ms`, kills it (by its own pid) and says so. */
const exitWithin = async (child: ChildProcess, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  // The timer is cleared once the child is gone, or it would keep this process alive for `ms`.
  const inTime = await Promise.race([exited(child).then(() => true), late])
  clearTimeout(timer)
  if (!inTime) {
    child.kill("SIGKILL")
    await exited(child)
  }
  return inTime
}

export interface VellumNode {
  readonly origin: string
  readonly pid: number | undefined
  /** The last lines the node wrote (for a failure message). */
  readonly outputTail: () => string
  /** POST /admin/shutdown, then waits for the process to end; true when it stopped by itself. */
  readonly shutdown: (authorization: string) => Promise<boolean>
  /** SIGKILL (this process only, by its pid), then waits for it to be gone. */
  readonly kill: () => Promise<void>
}

/**
 * The V8 flags of `npm start` (package.json): the old generation may grow by half its live size between
 * full collections (V8's own factor reaches 4x when the mutator is busy, which let a scavenge's garbage
 * swell the heap by 60+ MiB; docs/performance-history.md).
 */
export const NODE_START_FLAGS: ReadonlyArray<string> = ["--enable-source-maps", "--heap-growing-percent=50"]

/**
 * Starts the node on `port` with `args` and waits until GET /health/live answers 204. `env` is added to this
 * process's environment (a cluster member's secret goes there, never on its command line); `nodeFlags` are
 * added to the V8 flags (an `--inspect` port, say).
 */
export const startVellum = async (
  port: number,
  args: ReadonlyArray<string>,
  env: Readonly<Record<string, string>> = {},
  nodeFlags: ReadonlyArray<string> = []
): Promise<VellumNode> => {
  // The node runs compiled (dist/main.mjs, built by `npm run build` before the benchmark) with the V8 flags
  // `npm start` gives it; BENCH_NODE_FLAGS replaces them (for A/B runs of the flags themselves), and
  // BENCH_VELLUM_MAIN names another build's main.mjs (for A/B runs of two builds with one benchmark).
  const flags = process.env["BENCH_NODE_FLAGS"]?.split(" ").filter((f) => f !== "") ?? NODE_START_FLAGS
  const main = process.env["BENCH_VELLUM_MAIN"] ?? path.join(repoRoot, "dist/main.mjs")
  const child = spawn(process.execPath, [...flags, ...nodeFlags, main, "--node-port", String(port), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const tail: Array<string> = []
  const keep = (chunk: Buffer) => {
    tail.push(
      ...chunk
        .toString("utf8")
        .split("\n")
        .filter((line) => line !== "")
    )
    tail.splice(0, Math.max(0, tail.length - 30))
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const origin = `http://127.0.0.1:${port}`
  const outputTail = () => tail.join("\n")
  const deadline = Date.now() + 120_000
  while (true) {
    if (child.exitCode !== null)
      throw new Error(`the node exited with code ${child.exitCode} before it was live:\n${outputTail()}`)
    const status = await fetch(`${origin}/health/live`).then(
      (r) => r.status,
      () => 0
    )
    if (status === 204) break
    if (Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`the node was not live after 120 s:\n${outputTail()}`)
    }
    await sleep(100)
  }
  return {
    origin,
    pid: child.pid,
    outputTail,
    shutdown: async (authorization) => {
      const status = await fetch(`${origin}/admin/shutdown`, { method: "POST", headers: { authorization } }).then(
        (r) => r.status,
        () => 0
      )
      if (status !== 200) child.kill("SIGTERM")
      return (await exitWithin(child, 60_000)) && status === 200
    },
    kill: async () => {
      child.kill("SIGKILL")
      await exited(child)
    }
  }
}

const forkTs = (module: string) =>
  fork(path.join(here, module), [], { cwd: repoRoot, execArgv: TSX, stdio: ["ignore", "inherit", "inherit", "ipc"] })

/** The first IPC message of `child`, or a failure if it exits first. */
const firstMessage = <A>(child: ChildProcess, what: string) =>
  new Promise<A>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`${what} exited (code ${code}) without answering`))
    child.once("exit", onExit)
    child.once("message", (message) => {
      child.off("exit", onExit)
      resolve(message as A)
    })
  })

export interface BareServer {
  readonly origin: string
  readonly pid: number | undefined
  readonly stop: () => Promise<void>
}

export const startBare = async (canned: CannedReplies): Promise<BareServer> => {
  const child = forkTs("httpBare.ts")
  const listening = firstMessage<BareMessage>(child, "the bare server")
  child.send(canned)
  const { listening: port } = await listening
  return {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      child.disconnect()
      await exitWithin(child, 10_000)
    }
  }
}

/** Runs `module` (beside this one) in a fresh process: sends it `message` and answers with its one reply. */
export const runForked = async <M extends object, A>(module: string, message: M, what: string): Promise<A> => {
  const child = forkTs(module)
  const result = firstMessage<A>(child, what)
  child.send(message)
  const answer = await result
  await exitWithin(child, 10_000)
  return answer
}

/** Runs one plan in a fresh load worker process. */
export const runLoadProcess = (plan: LoadPlan): Promise<LoadResult> =>
  runForked<LoadPlan, LoadResult>("httpLoad.ts", plan, "the load worker")
