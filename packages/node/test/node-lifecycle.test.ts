/**
 * The node as an operator runs it, in real processes: one node per data directory (a second refuses to
 * start, a SIGKILLed one does not block its restart), SIGTERM/SIGINT to `npm start` and `npx vellum` stop
 * the node itself, and an append retried after a clean stop is answered as the original.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  buildDist,
  exitWithin,
  freePort,
  lockHolder,
  pidGoneWithin,
  portIsFree,
  spawnLogged,
  spawnNode,
  tempDir,
  waitForPing,
  type Spawned
} from "./processSupport.js"

const dirs: Array<string> = []
const running: Array<Spawned> = []
const freshDb = () => {
  const dir = tempDir("vellum-process-")
  dirs.push(dir)
  return dir
}
const track = (spawned: Spawned) => {
  running.push(spawned)
  return spawned
}

beforeAll(() => {
  buildDist()
}, 120_000)

afterAll(() => {
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL")
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

/** Starts the compiled node on a fresh port and waits for /ping. */
const startNode = async (db: string, extra: ReadonlyArray<string> = []) => {
  const port = await freePort()
  const node = track(spawnNode(["--db", db, "--node-port", String(port), "--insecure", ...extra]))
  await waitForPing(port, node)
  return { node, port }
}

describe("one node per data directory", () => {
  it("a second node on the same --db refuses to start, naming the lock; after a SIGKILL a restart succeeds", async () => {
    const db = freshDb()
    const first = await startNode(db)
    const second = track(spawnNode(["--db", db, "--node-port", String(await freePort()), "--insecure"]))
    expect(await exitWithin(second, 60_000)).toBe(1)
    const lockFile = path.join(db, "vellum.lock")
    expect(second.output().trim()).toBe(
      `Vellum cannot start: the data directory ${db} is in use by another node (lock ${lockFile}: held by pid ${first.node.child.pid})`
    )
    // The first one is still serving.
    expect((await fetch(`http://127.0.0.1:${first.port}/ping`)).status).toBe(200)

    first.node.child.kill("SIGKILL")
    await first.node.exited
    expect(fs.existsSync(lockFile)).toBe(true)
    const restarted = await startNode(db)
    expect(lockHolder(db)).toBe(restarted.node.child.pid)
    restarted.node.child.kill("SIGTERM")
    expect(await exitWithin(restarted.node, 30_000)).toBe(0)
    expect(fs.existsSync(lockFile)).toBe(false)
  }, 180_000)
})

describe("signals reach the node", () => {
  /** Starts the node through npm (`npm start` or `npx vellum`), signals npm, and checks the node stopped. */
  const stopsOn = async (launcher: ReadonlyArray<string>, signal: NodeJS.Signals) => {
    const db = freshDb()
    const port = await freePort()
    const npm = track(spawnLogged("npm", [...launcher, "--db", db, "--node-port", String(port), "--insecure"]))
    await waitForPing(port, npm, 120_000)
    const node = lockHolder(db)
    expect(node).not.toBe(npm.child.pid)
    npm.child.kill(signal)
    let gone = false
    try {
      gone = await pidGoneWithin(node, 30_000)
      await exitWithin(npm, 10_000)
    } finally {
      // Whatever failed, no node is left running from this test.
      if (!gone) process.kill(node, "SIGKILL")
    }
    expect(gone, `the node (pid ${node}) outlived npm:\n${npm.output()}`).toBe(true)
    expect(await portIsFree(port)).toBe(true)
    expect(npm.output()).toContain(`"Stopping: `)
    expect(npm.output()).toContain(`"message":"Stopped"`)
    expect(fs.existsSync(path.join(db, "vellum.lock"))).toBe(false)
  }

  it("SIGTERM to `npm start` stops the node gracefully", () => stopsOn(["start", "--"], "SIGTERM"), 180_000)
  it("SIGINT to `npm start` stops the node gracefully", () => stopsOn(["start", "--"], "SIGINT"), 180_000)
  it("SIGTERM to `npx vellum` stops the node gracefully", () => stopsOn(["exec", "--", "vellum"], "SIGTERM"), 180_000)

  it("a node started without npm keeps running when the shell that started it exits", async () => {
    const db = freshDb()
    const port = await freePort()
    // The shell starts the node in the background and exits at once: the node's parent is gone.
    const shell = track(
      spawnLogged("sh", [
        "-c",
        `"${process.execPath}" dist/main.mjs --db "${db}" --node-port ${port} --insecure > "${db}.log" 2>&1 &`
      ])
    )
    expect(await exitWithin(shell, 10_000)).toBe(0)
    dirs.push(`${db}.log`)
    await waitForPing(port)
    const node = lockHolder(db)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect((await fetch(`http://127.0.0.1:${port}/ping`)).status).toBe(200)
    process.kill(node, "SIGTERM")
    expect(await pidGoneWithin(node, 30_000)).toBe(true)
    expect(fs.readFileSync(`${db}.log`, "utf8")).toContain(`"Stopping: SIGTERM"`)
  }, 120_000)
})

describe("idempotency across a clean stop", () => {
  it("an append retried after SIGTERM and a restart is answered as the original, and writes nothing", async () => {
    const db = freshDb()
    const append = (port: number) =>
      fetch(`http://127.0.0.1:${port}/streams/orders`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/vnd.eventstore.events+json", "es-expectedversion": "-2" },
        body: JSON.stringify([{ eventId: "fbf4a1a1-b4a3-4dfe-a01f-ec52c34e16e4", eventType: "placed", data: { n: 1 } }])
      })
    const first = await startNode(db)
    const original = await append(first.port)
    expect(original.status).toBe(201)
    expect(original.headers.get("location")).toBe(`http://127.0.0.1:${first.port}/streams/orders/0`)
    first.node.child.kill("SIGTERM")
    expect(await exitWithin(first.node, 30_000)).toBe(0)

    const second = await startNode(db)
    const retry = await append(second.port)
    expect(retry.status).toBe(201)
    expect(retry.headers.get("location")).toBe(`http://127.0.0.1:${second.port}/streams/orders/0`)
    expect(
      (await fetch(`http://127.0.0.1:${second.port}/streams/orders/1`, { headers: { accept: "application/json" } }))
        .status
    ).toBe(404)
    second.node.child.kill("SIGTERM")
    expect(await exitWithin(second.node, 30_000)).toBe(0)
  }, 180_000)
})
