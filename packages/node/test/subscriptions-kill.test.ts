/**
 * Persistent subscriptions survive a SIGKILL of the node: consumers pull and ack over real HTTP while the
 * compiled node is killed and started again on the same data directory. Every event is acked in the end
 * (nothing lost), and an event acked before the kill comes again only if it lies after the group's last
 * durable checkpoint, which is read from its checkpoint stream before the consumers resume.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs"
import { buildDist, freePort, spawnNode, tempDir, waitForPing, type Spawned } from "./processSupport.js"

const Events = 400
const Consumers = 4
const auth = `Basic ${Buffer.from("admin:changeit").toString("base64")}`
const competingJson = "application/vnd.eventstore.competingatom+json"

let dir: string
let port: number
let node: Spawned | undefined

const url = (path: string) => `http://127.0.0.1:${port}${path}`

const start = async () => {
  node = spawnNode(["--db", dir, "--http-port", String(port), "--log-level", "Warning"])
  await waitForPing(port, node)
}

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

const appendBatch = async (from: number, count: number) => {
  const body = Array.from({ length: count }, (_, i) => ({
    eventId: uuid(from + i + 1),
    eventType: "job",
    data: { n: from + i }
  }))
  const r = await fetch(url("/streams/jobs"), {
    method: "POST",
    headers: { Authorization: auth, "Content-Type": "application/vnd.eventstore.events+json" },
    body: JSON.stringify(body)
  })
  expect(r.status).toBe(201)
}

interface Entry {
  readonly eventId: string
  readonly eventNumber: number
}

/** One pull and its ack; the event numbers acked, or undefined when the node did not answer. */
const pullAndAck = async (): Promise<ReadonlyArray<number> | undefined> => {
  try {
    const r = await fetch(url("/subscriptions/jobs/workers/10?embed=body"), {
      headers: { Authorization: auth, Accept: competingJson }
    })
    if (r.status !== 200) return undefined
    const feed = (await r.json()) as { entries: ReadonlyArray<Entry> }
    if (feed.entries.length === 0) return []
    const ids = feed.entries.map((e) => e.eventId).join(",")
    const acked = await fetch(url(`/subscriptions/jobs/workers/ack?ids=${ids}`), {
      method: "POST",
      headers: { Authorization: auth }
    })
    return acked.status === 202 ? feed.entries.map((e) => e.eventNumber) : undefined
  } catch {
    return undefined
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Consumers pulling and acking until `stop()` says so; `acked` gathers what each pull acked, in order. */
const runConsumers = (acked: Array<number>, stop: () => boolean) =>
  Promise.all(
    Array.from({ length: Consumers }, async () => {
      while (!stop()) {
        const numbers = await pullAndAck()
        if (numbers === undefined || numbers.length === 0) await sleep(20)
        else acked.push(...numbers)
      }
    })
  )

const lastCheckpoint = async (): Promise<number> => {
  const r = await fetch(url("/streams/%24persistentsubscription-jobs::workers-checkpoint/head?embed=body"), {
    headers: { Authorization: auth, Accept: "application/vnd.eventstore.atom+json" }
  })
  if (r.status === 404) return -1
  expect(r.status).toBe(200)
  const event = (await r.json()) as { content: { data: unknown } }
  return Number(event.content.data)
}

beforeAll(async () => {
  buildDist()
  dir = tempDir("vellum-subs-kill-")
  port = await freePort()
  await start()
}, 120_000)

afterAll(() => {
  node?.child.kill("SIGKILL")
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("persistent subscriptions across a SIGKILL", () => {
  it("lose nothing, and redeliver an acked event only past the last durable checkpoint", async () => {
    for (let n = 0; n < Events; n += 100) await appendBatch(n, 100)
    const created = await fetch(url("/subscriptions/jobs/workers"), {
      method: "PUT",
      headers: { Authorization: auth, "Content-Type": "application/json" },
      body: JSON.stringify({ messageTimeoutMilliseconds: 2_000, minCheckPointCount: 5, maxCheckPointCount: 50 })
    })
    expect(created.status).toBe(201)

    // Consumers run; the node is killed under them once some work is done.
    const before: Array<number> = []
    let killed = false
    const consuming = runConsumers(before, () => killed)
    while (before.length < Events / 2) await sleep(5)
    node!.child.kill("SIGKILL")
    await node!.exited
    killed = true
    await consuming

    await start()
    const checkpoint = await lastCheckpoint()
    await appendBatch(Events, 50)
    const after: Array<number> = []
    const total = Events + 50
    const deadline = Date.now() + 90_000
    let done = false
    const draining = runConsumers(after, () => done)
    while (new Set([...before, ...after]).size < total && Date.now() < deadline) await sleep(50)
    done = true
    await draining

    const all = new Set([...before, ...after])
    expect(all.size, "every event acked").toBe(total)
    const ackedBeforeKill = new Set(before)
    const againWithinCheckpoint = after.filter((n) => ackedBeforeKill.has(n) && n <= checkpoint)
    expect(againWithinCheckpoint, `redelivered though checkpointed (checkpoint ${checkpoint})`).toEqual([])
    expect(checkpoint).toBeGreaterThanOrEqual(0)
  }, 180_000)
})
