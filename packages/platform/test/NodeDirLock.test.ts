// NodeDisk's directory lock beyond the contract: the lock file, stale locks (dead pid, reused pid, damaged
// file), foreign hosts, and racing starts in separate processes.
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { LOCK_FILE_NAME, breakStale, lockDir } from "../src/live/NodeDirLock.js"
import { expectReason } from "./diskContract.js"
import { tempDirs } from "./tempDirs.js"

const tempDir = tempDirs("vellum-lock-")

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
  fs.writeFileSync(
    path.join(dir, LOCK_FILE_NAME),
    typeof content === "string" ? content : JSON.stringify(content) + "\n"
  )

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
    plantLock(dir, '{"pid":')
    await run(Effect.flatMap(lockDir(dir), (l) => l.release))
    plantLock(dir, { ...identity(process.pid, null), host: "elsewhere" })
    const error = await expectReason(lockDir(dir), "Locked")
    expect(error.message).toContain(`held by pid ${process.pid} on host elsewhere`)
  })

  it("a start that judged a lock stale while another start replaced it puts the new lock back and refuses", () => {
    // The interleaving of two racing starts, replayed step by step: both read the stale lock, the other one
    // took it over first (its lock is now the file), then this one tries to move the stale lock aside.
    const dir = tempDir()
    const file = path.join(dir, LOCK_FILE_NAME)
    const stale = JSON.stringify(identity(spawnSync(process.execPath, ["-e", ""]).pid, "12345")) + "\n"
    const winner = JSON.stringify({ ...identity(process.pid, "1"), pid: 424242 }) + "\n"
    fs.writeFileSync(file, winner)
    expect(() => breakStale(file, stale)).toThrow(/held by pid 424242/)
    expect(fs.readFileSync(file, "utf8")).toBe(winner)
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE_NAME])
    // The file still being the stale one: it is removed.
    fs.writeFileSync(file, stale)
    breakStale(file, stale)
    expect(fs.readdirSync(dir)).toEqual([])
  })

  it("gives one holder when several processes start at once on a stale lock", async () => {
    const dir = tempDir()
    plantLock(dir, identity(spawnSync(process.execPath, ["-e", ""]).pid, "12345"))
    const moduleUrl = new URL("../src/live/NodeDirLock.ts", import.meta.url).href
    const go = path.join(dir, "go")
    // Each racer says it is ready, spins until the go file appears (all start together, whatever the load),
    // tries the lock, says whether it got it, and keeps running (a holder that exited would be stale).
    const script = `
      const { lockDir } = await import(${JSON.stringify(moduleUrl)})
      const { Effect, Exit } = await import("effect")
      const fs = await import("node:fs")
      console.log("ready")
      while (!fs.existsSync(${JSON.stringify(go)})) {}
      const exit = await Effect.runPromiseExit(lockDir(${JSON.stringify(dir)}))
      console.log(Exit.isSuccess(exit) ? "won" : "lost " + JSON.stringify(exit.cause))
      setInterval(() => {}, 1000)`
    const racers = Array.from({ length: 4 }, () => {
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        cwd: process.cwd()
      })
      const lines: Array<string> = []
      const waiters: Array<() => void> = []
      child.stdout.on("data", (d: Buffer) => {
        lines.push(
          ...d
            .toString()
            .split("\n")
            .filter((l) => l !== "")
        )
        for (const w of waiters.splice(0)) w()
      })
      child.stderr.on("data", (d: Buffer) => lines.push(d.toString()))
      const nthLine = (n: number) =>
        new Promise<string>((resolve) => {
          const check = () => (lines.length >= n ? resolve(lines[n - 1]!) : waiters.push(check))
          check()
        })
      return { child, nthLine }
    })
    try {
      await Promise.all(racers.map((r) => r.nthLine(1)))
      fs.writeFileSync(go, "")
      const outcomes = await Promise.all(racers.map((r) => r.nthLine(2)))
      expect(outcomes.filter((o) => o === "won")).toHaveLength(1)
      expect(outcomes.filter((o) => o.startsWith("lost") && o.includes("Locked"))).toHaveLength(3)
    } finally {
      for (const r of racers) r.child.kill("SIGKILL")
    }
  }, 60_000)
})
