// NodeDisk's directory lock beyond the contract: the lock file, stale locks (dead pid, reused pid, damaged
// file), foreign hosts, and racing starts in separate processes.
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { LOCK_FILE_NAME, lockDir } from "../src/live/NodeDirLock.js"
import { expectReason } from "./diskContract.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vellum-lock-"))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true })
})

const run = <A>(effect: Effect.Effect<A, unknown>): Promise<A> => Effect.runPromise(effect)
const readOrNull = (p: string) => (fs.existsSync(p) ? fs.readFileSync(p, "utf8") : null)
const startTicks = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!
}
const identity = (pid: number, started: string | null) => ({
  pid,
  host: os.hostname(),
  boot: readOrNull("/proc/sys/kernel/random/boot_id")?.trim() ?? null,
  started
})
const plantLock = (dir: string, content: unknown) =>
  fs.writeFileSync(path.join(dir, LOCK_FILE_NAME), typeof content === "string" ? content : JSON.stringify(content) + "\n")

/** A process that runs until killed, and its pid. */
const sleeper = () => {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  return child
}

const onLinux = process.platform === "linux"

describe("NodeDisk directory lock", () => {
  it("writes a lock file naming this process, and removes it on release", async () => {
    const dir = tempDir()
    const held = await run(lockDir(dir))
    expect(held.path).toBe(path.join(dir, LOCK_FILE_NAME))
    const content = JSON.parse(fs.readFileSync(held.path, "utf8")) as { pid: number; host: string }
    expect(content.pid).toBe(process.pid)
    expect(content.host).toBe(os.hostname())
    // Nothing else is left in the directory (the staged copy is gone).
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE_NAME])
    await run(held.release)
    expect(fs.readdirSync(dir)).toEqual([])
  })

  it("a lock held by a live process names the lock file and its pid", async () => {
    const dir = tempDir()
    const child = sleeper()
    try {
      await new Promise((resolve) => child.once("spawn", resolve))
      plantLock(dir, identity(child.pid!, onLinux ? startTicks(child.pid!) : null))
      const error = await expectReason(lockDir(dir), "Locked")
      expect(error.message).toBe(`lock ${path.join(dir, LOCK_FILE_NAME)}: held by pid ${child.pid}`)
    } finally {
      child.kill("SIGKILL")
    }
  })

  it("takes over the lock of a process that is gone (a SIGKILLed node)", async () => {
    const dir = tempDir()
    const gone = spawnSync(process.execPath, ["-e", ""]).pid
    plantLock(dir, identity(gone, "12345"))
    const held = await run(lockDir(dir))
    expect((JSON.parse(fs.readFileSync(held.path, "utf8")) as { pid: number }).pid).toBe(process.pid)
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE_NAME])
    await run(held.release)
  })

  it.runIf(onLinux)("takes over a lock whose pid was reused by a process started later", async () => {
    const dir = tempDir()
    const child = sleeper()
    try {
      await new Promise((resolve) => child.once("spawn", resolve))
      const ticks = Number(startTicks(child.pid!))
      plantLock(dir, identity(child.pid!, String(ticks - 1)))
      const held = await run(lockDir(dir))
      await run(held.release)
      // A lock from an earlier boot is stale whatever its pid.
      plantLock(dir, { ...identity(child.pid!, String(ticks)), boot: "an-earlier-boot" })
      await run(Effect.flatMap(lockDir(dir), (l) => l.release))
      // Our own pid with another start time: an earlier process that had our pid (pid 1 in a container).
      plantLock(dir, identity(process.pid, "1"))
      await run(Effect.flatMap(lockDir(dir), (l) => l.release))
    } finally {
      child.kill("SIGKILL")
    }
  })

  it("takes over a damaged lock file, and refuses one from another host", async () => {
    const dir = tempDir()
    plantLock(dir, "{\"pid\":")
    await run(Effect.flatMap(lockDir(dir), (l) => l.release))
    plantLock(dir, { ...identity(process.pid, null), host: "elsewhere" })
    const error = await expectReason(lockDir(dir), "Locked")
    expect(error.message).toContain(`held by pid ${process.pid} on host elsewhere`)
  })

  it("gives one holder when several processes start at once on a stale lock", async () => {
    const dir = tempDir()
    plantLock(dir, identity(spawnSync(process.execPath, ["-e", ""]).pid, "12345"))
    const moduleUrl = new URL("../src/live/NodeDirLock.ts", import.meta.url).href
    const at = Date.now() + 1500
    // Each racer waits for the same instant, tries the lock, says whether it got it, and holds it a while.
    const script = `
      const { lockDir } = await import(${JSON.stringify(moduleUrl)})
      const { Effect, Exit } = await import("effect")
      while (Date.now() < ${at}) {}
      const exit = await Effect.runPromiseExit(lockDir(${JSON.stringify(dir)}))
      console.log(Exit.isSuccess(exit) ? "won" : "lost " + JSON.stringify(exit.cause))
      await new Promise((r) => setTimeout(r, 1000))`
    const outcomes = await Promise.all(Array.from({ length: 4 }, () =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: process.cwd() })
        let out = ""
        child.stdout.on("data", (d: Buffer) => (out += d.toString()))
        child.stderr.on("data", (d: Buffer) => (out += d.toString()))
        child.on("exit", () => resolve(out.trim()))
      })))
    expect(outcomes.filter((o) => o === "won")).toHaveLength(1)
    expect(outcomes.filter((o) => o.startsWith("lost") && o.includes("Locked"))).toHaveLength(3)
  }, 30_000)
})
