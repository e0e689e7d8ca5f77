// The node as a real process (main.ts run by tsx, in a scratch directory): --what-if exits without opening
// the database or binding the port; a taken port is one line on stderr and exit code 1; the start-up
// summary, the insecure warning, --log's file and --log-level; a refused option stops it before anything.
import { spawn, type ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { createRequire } from "node:module"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url))
// tsx's loader in this process's node, so the node is the child itself (no wrapper to orphan it).
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href
const TIMEOUT = 60_000

let scratch: string
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vellum-process-"))
})
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Starts the node; it is killed if still running after 40 s, so a failing test leaves no process behind. */
const start = (args: ReadonlyArray<string>): ChildProcess => {
  const child = spawn(process.execPath, ["--import", TSX_LOADER, MAIN, ...args], {
    cwd: scratch,
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const guard = setTimeout(() => child.kill("SIGKILL"), 40_000)
  child.on("close", () => clearTimeout(guard))
  return child
}

/** Runs the node until it exits by itself. */
const run = (args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = start(args)
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** Runs the node until a stdout line matches `ready`, calls `whileUp`, then stops it with SIGTERM. */
const runUntil = (
  args: ReadonlyArray<string>,
  ready: RegExp,
  whileUp: () => Promise<void> = async () => {}
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = start(args)
    let stdout = ""
    let stderr = ""
    let signalled = false
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      if (!signalled && ready.test(stdout)) {
        signalled = true
        whileUp().then(
          () => child.kill("SIGTERM"),
          (error: unknown) => {
            child.kill("SIGKILL")
            reject(error)
          }
        )
      }
    })
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

const holdPort = (): Promise<{ readonly port: number; readonly server: Server }> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({ port: typeof address === "object" && address !== null ? address.port : 0, server })
    })
  })

const freePort = async (): Promise<number> => {
  const { port, server } = await holdPort()
  await new Promise((resolve) => server.close(resolve))
  return port
}

const jsonLines = (text: string): Array<{ level: string; message: string }> =>
  text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: string; message: string })

describe("the node process", () => {
  it(
    "--what-if prints the effective configuration with sources and exits 0, opening nothing and binding nothing",
    async () => {
      const held = await holdPort()
      try {
        const db = join(scratch, "what-if-db")
        const result = await run(["--what-if", "--db", db, "--node-port", String(held.port)])
        expect(result.stderr).toBe("")
        expect(result.code).toBe(0)
        expect(result.stdout).toMatch(/^MODIFIED OPTIONS:/)
        expect(result.stdout).toMatch(new RegExp(`NodePort:\\s+${held.port} \\(Command Line\\)`))
        expect(result.stdout).toMatch(/WhatIf:\s+true \(Command Line\)/)
        expect(result.stdout).toMatch(/DefaultAdminPassword:\s+\*{8} \(<DEFAULT>\)/)
        // The port was taken, so a start would have failed; and the database directory was never created.
        expect(existsSync(db)).toBe(false)
      } finally {
        held.server.close()
      }
    },
    TIMEOUT
  )

  it(
    "a taken port is one line on stderr naming the address and exit code 1, no stack trace",
    async () => {
      const held = await holdPort()
      try {
        const result = await run(["--mem-db", "--node-port", String(held.port)])
        expect(result.code).toBe(1)
        expect(result.stderr.trimEnd().split("\n")).toEqual([
          `Vellum cannot start: cannot listen on 127.0.0.1:${held.port}: the port is already in use (another process listens on it; pick another with --node-port) [EADDRINUSE]`
        ])
        expect(result.stdout + result.stderr).not.toMatch(/\n\s+at /)
      } finally {
        held.server.close()
      }
    },
    TIMEOUT
  )

  it(
    "a refused option stops the node before anything, saying why",
    async () => {
      const db = join(scratch, "refused-db")
      const result = await run(["--scavenge-hash-users-cache-capacity", "5", "--db", db])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(
        "ScavengeHashUsersCacheCapacity from command line --scavenge-hash-users-cache-capacity: 5 is not supported: Vellum's scavenge state finds collisions without a hash-users table"
      )
      expect(existsSync(db)).toBe(false)
    },
    TIMEOUT
  )

  it(
    "logs one start-up summary (version, address, data dir, config file, default users), warns when insecure, and writes --log's file",
    async () => {
      const port = await freePort()
      const db = join(scratch, "db")
      const logs = join(scratch, "logs")
      const args = ["--db", db, "--node-port", String(port), "--insecure", "--log", logs]
      const first = await runUntil(args, /listening on/, async () => {
        const ping = await fetch(`http://127.0.0.1:${port}/ping`)
        expect(ping.status).toBe(200)
      })
      expect(first.code).toBe(0)
      const lines = jsonLines(first.stdout)
      const summaries = lines.filter((line) => line.message.includes("listening on"))
      expect(summaries.map((line) => line.message)).toEqual([
        `Vellum 0.1.0 listening on http://127.0.0.1:${port}; data in ${db}; no config file; default users created: admin, ops`
      ])
      // Auto-scavenge says whether it runs (on disk: yes).
      expect(lines.filter((line) => line.message.startsWith("Auto-scavenge")).map((line) => line.message)).toEqual([
        "Auto-scavenge enabled"
      ])
      expect(lines.filter((line) => line.level === "WARN").map((line) => line.message)).toEqual([
        "Insecure mode: authentication and authorization are off, every request acts as the system user; do not expose this node"
      ])
      // No debug lines at the default level.
      expect(lines.some((line) => line.level === "DEBUG")).toBe(false)
      // The file has what the console had.
      const file = readFileSync(join(logs, "vellum.log"), "utf8")
      expect(jsonLines(file).map((line) => line.message)).toEqual(lines.map((line) => line.message))

      // A second start on the same data directory finds the users; a config file is named; debug shows.
      const config = join(scratch, "vellum.conf")
      writeFileSync(config, "LogLevel: Debug\n")
      const second = await runUntil(["--db", db, "--node-port", String(port), "--log", logs], /listening on/)
      expect(second.code).toBe(0)
      const again = jsonLines(second.stdout)
      expect(again.filter((line) => line.message.includes("listening on")).map((line) => line.message)).toEqual([
        `Vellum 0.1.0 listening on http://127.0.0.1:${port}; data in ${db}; config file ${config}; default users not created (they exist already)`
      ])
      expect(again.filter((line) => line.level === "DEBUG").map((line) => line.message)).toContainEqual(
        expect.stringMatching(/^Options set: .*LogLevel=Debug \(Yaml\)/)
      )
      expect(again.some((line) => line.level === "WARN")).toBe(false)
      // Appended: both runs are in the file.
      expect(
        jsonLines(readFileSync(join(logs, "vellum.log"), "utf8")).filter((line) =>
          line.message.includes("listening on")
        )
      ).toHaveLength(2)
      rmSync(config)
    },
    TIMEOUT
  )

  it(
    "--node-ip and --log-console-format Plain (text lines); --log-level Warning hides the summary",
    async () => {
      const port = await freePort()
      // Another loopback address, so that --node-ip is seen to be used.
      const plain = await runUntil(
        ["--mem-db", "--node-ip", "127.0.0.2", "--node-port", String(port), "--log-console-format", "Plain"],
        /listening on/,
        async () => {
          expect((await fetch(`http://127.0.0.2:${port}/ping`)).status).toBe(200)
        }
      )
      expect(plain.code).toBe(0)
      expect(plain.stdout).toMatch(/level=INFO .*message="Vellum 0\.1\.0 listening on http:\/\/127\.0\.0\.2:/)
      expect(plain.stdout).toMatch(/message="Auto-scavenge disabled: AutoScavenge is not compatible with mem-db"/)
      expect(jsonLines(plain.stdout)).toEqual([])

      const held = await holdPort()
      try {
        const quiet = await run(["--mem-db", "--node-port", String(held.port), "--log-level", "Warning"])
        expect(quiet.code).toBe(1)
        expect(jsonLines(quiet.stdout).filter((line) => line.level === "INFO" || line.level === "DEBUG")).toEqual([])
      } finally {
        held.server.close()
      }
    },
    TIMEOUT
  )
})
