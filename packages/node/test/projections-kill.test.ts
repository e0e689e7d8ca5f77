/**
 * Projections survive SIGKILL with exactly-once output: the compiled node runs a continuous user projection
 * that counts and emits (one `Counted` event and one link per input event, into a stream per category) next
 * to `$by_category` and `$by_event_type`, while writers append; the node is killed under the load and started
 * again on the same data directory, several times. Once everything has caught up, what the log holds is what
 * one uninterrupted run would have written: the count equals the input events, every emitted stream and every
 * `$ce-`/`$et-` index holds exactly one entry per event it is made of, in `$all` order, `$streams` one link per
 * stream; a partitioned projection (`foreachStream` over `$ce-shop`) has each stream's count and one result per
 * event; a one-time projection that emits, run again at every restart, has written each of its events once. The expectations are
 * read from `$all` (an append cut by the kill may or may not have landed), not from what the writers think.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs"
import { buildDist, freePort, spawnNode, tempDir, waitForPing, type Spawned } from "./processSupport.js"
import { allRecords, categoryOf, readStream, type Client, type Rec } from "./projectionsKillSupport.js"

const Rounds = 3
const EventsPerRound = 600
const Writers = 3
const Batch = 10
const Categories = ["shop", "bank", "farm"]
const auth = `Basic ${Buffer.from("admin:changeit").toString("base64")}`

// Counts the Sold events, per category too; for each, emits a Counted event (what it counted, and the
// category's count so far) and links the event into a stream of its category.
const Query = `fromAll().when({
  $init: function () { return { count: 0, byCategory: {} } },
  Sold: function (s, e) {
    var c = e.streamId.split("-")[0]
    s.count++
    s.byCategory[c] = (s.byCategory[c] || 0) + 1
    emit("counted-" + c, "Counted", { stream: e.streamId, number: e.sequenceNumber, k: s.byCategory[c] })
    linkTo("linked-" + c, e)
    return s
  },
  Done: function (s) { s.done = true; return s }
})`

let dir: string
let port: number
let node: Spawned | undefined

const url = (path: string) => `http://127.0.0.1:${port}${path}`
const client: Client = (path, init = {}) =>
  fetch(url(path), { ...init, headers: { Authorization: auth, ...(init.headers ?? {}) } })

const start = async () => {
  node = spawnNode([
    ...["--db", dir, "--http-port", String(port), "--log-level", "Warning"],
    ...["--run-projections", "All", "--start-standard-projections"]
  ])
  await waitForPing(port, node)
}

const kill = async () => {
  node!.child.kill("SIGKILL")
  await node!.exited
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Retries `request` until it answers something other than 503 (the subsystem loads once the node leads). */
const whenReady = async (request: () => Promise<Response>) => {
  for (let i = 0; ; i++) {
    const r = await request()
    if (r.status !== 503 || i > 600) return r
    await sleep(100)
  }
}

let nextId = 0
const uuid = () => `00000000-0000-4000-8000-${(++nextId).toString(16).padStart(12, "0")}`

/** Appends one batch; true when the node said it was written (false: refused, or cut by the kill). */
const appendBatch = async (stream: string, types: ReadonlyArray<string>) => {
  const body = types.map((eventType, i) => ({ eventId: uuid(), eventType, data: { i } }))
  try {
    const r = await client(`/streams/${stream}`, {
      method: "POST",
      headers: { "Content-Type": "application/vnd.eventstore.events+json" },
      body: JSON.stringify(body)
    })
    return r.status === 201
  } catch {
    return false
  }
}

/** Writers appending batches (mostly Sold, some Noted, which the projection ignores) until `stop()`. */
const runWriters = (appended: { n: number }, stop: () => boolean) =>
  Promise.all(
    Array.from({ length: Writers }, async (_, w) => {
      for (let b = 0; !stop(); b++) {
        const stream = `${Categories[(w + b) % Categories.length]}-${b % 4}`
        const types = Array.from({ length: Batch }, (_, i) => ((i + b) % 5 === 0 ? "Noted" : "Sold"))
        if (await appendBatch(stream, types)) appended.n += Batch
      }
    })
  )

const statistics = async (name: string) =>
  (await (await client(`/projection/${encodeURIComponent(name)}`)).json()) as Record<string, unknown>

// Per shop stream (a partition), its count, read from `$ce-shop`; every state change is a result, in the
// partition's result stream with a link to it in the root result stream.
const PerStream = `fromCategory("shop").foreachStream().when({
  $init: function () { return { n: 0 } },
  Sold: function (s) { s.n++; return s }
}).outputState()`

// A one-time projection that emits one Seen event per Sold event into a stream per category. Created in the
// second round, it runs again from the start at each restart (a one-time projection that is enabled runs when
// the node loads it) and finds what it wrote before.
const Once = `fromAll().when({
  Sold: function (s, e) {
    emit("seen-" + e.streamId.split("-")[0], "Seen", { stream: e.streamId, number: e.sequenceNumber })
  }
})`

const create = async (name: string, query: string) => {
  const created = await whenReady(() =>
    client(`/projections/continuous?name=${name}&emit=yes&checkpoints=yes&enabled=yes`, {
      method: "POST",
      body: query
    })
  )
  expect(created.status).toBe(201)
  // Checkpoints every few events, so the kills land between checkpoints and after a restart it resumes from one.
  expect((await client(`/projection/${name}/command/disable`, { method: "POST" })).status).toBe(200)
  const config = await client(`/projection/${name}/config`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      emitEnabled: true,
      checkpointAfterMs: 0,
      checkpointHandledThreshold: 25,
      checkpointUnhandledBytesThreshold: 10_000_000,
      pendingEventsThreshold: 5000,
      maxWriteBatchLength: 500
    })
  })
  expect(config.status).toBe(200)
  expect((await client(`/projection/${name}/command/enable`, { method: "POST" })).status).toBe(200)
}

/** What the projections must have written, from the log as it is. */
const expectations = (records: ReadonlyArray<Rec>) => {
  const ce = new Map<string, Array<string>>()
  const et = new Map<string, Array<string>>()
  const sold = new Map<string, Array<string>>()
  const streams: Array<string> = []
  const push = (m: Map<string, Array<string>>, key: string, value: string) => m.set(key, [...(m.get(key) ?? []), value])
  for (const r of records) {
    if (r.stream.startsWith("$")) continue
    if (r.number === 0) streams.push(`0@${r.stream}`)
    const category = categoryOf(r.stream)
    if (category !== undefined) push(ce, category, r.target)
    if (r.isLink) continue
    push(et, r.type, r.target)
    if (r.type === "Sold") push(sold, category!, r.target)
  }
  return { ce, et, sold, streams }
}

/** The whole check of what the projections wrote, against the log read first. */
const verify = async () => {
  const records = await allRecords(client)
  const expected = expectations(records)
  const inputs = [...expected.sold.values()].reduce((n, v) => n + v.length, 0)
  expect(inputs).toBeGreaterThanOrEqual(Rounds * (EventsPerRound / 2) * 0.8)
  expect(expected.et.get("Done")).toHaveLength(1)
  const state = (await (await client("/projection/counter/state")).json()) as {
    count: number
    byCategory: Record<string, number>
    done?: boolean
  }
  expect(state.done).toBe(true)
  expect(state.count).toBe(inputs)
  expect(state.byCategory).toEqual(Object.fromEntries([...expected.sold].map(([c, v]) => [c, v.length])))

  for (const [category, events] of expected.sold) {
    const counted = await readStream(client, `counted-${category}`)
    const asCounted = events.map((target, i) => {
      const [number, stream] = target.split("@")
      return { stream, number: Number(number), k: i + 1 }
    })
    expect(
      counted.map((e) => e.data),
      `counted-${category}`
    ).toEqual(asCounted)
    const seen = await readStream(client, `seen-${category}`)
    expect(
      seen.map((e) => e.data),
      `seen-${category}`
    ).toEqual(asCounted.map(({ stream, number }) => ({ stream, number })))
    const linked = await readStream(client, `linked-${category}`)
    expect(
      linked.map((e) => e.target),
      `linked-${category}`
    ).toEqual(events)
    expect(linked.every((e) => e.isLink)).toBe(true)
  }
  expect(expected.ce.get("counted")).toHaveLength(inputs)
  expect(expected.ce.get("linked")).toHaveLength(inputs)
  for (const [category, targets] of expected.ce)
    expect(
      (await readStream(client, `$ce-${category}`)).map((e) => e.target),
      `$ce-${category}`
    ).toEqual(targets)
  expect(
    (await readStream(client, "$streams")).map((e) => e.target),
    "$streams"
  ).toEqual(expected.streams)
  for (const [type, targets] of expected.et)
    expect(
      (await readStream(client, `$et-${type}`)).map((e) => e.target),
      `$et-${type}`
    ).toEqual(targets)

  // The partitioned projection: each shop stream's count, one result per Sold event in its partition's result
  // stream, and one link per Sold event to that result in the root result stream, in $ce-shop order.
  const byStream = new Map<string, number>()
  const rootLinks = (expected.sold.get("shop") ?? []).map((target) => {
    const stream = target.split("@")[1]!
    const k = byStream.get(stream) ?? 0
    byStream.set(stream, k + 1)
    return `${k}@$projections-perStream-${stream}-result`
  })
  const root = await readStream(client, "$projections-perStream-result")
  expect(
    root.filter((e) => e.isLink).map((e) => e.target),
    "$projections-perStream-result"
  ).toEqual(rootLinks)
  for (const [stream, count] of byStream) {
    const results = await readStream(client, `$projections-perStream-${stream}-result`)
    expect(
      results.map((e) => [e.type, e.data]),
      stream
    ).toEqual(Array.from({ length: count }, (_, i) => ["Result", { n: i + 1 }]))
    const partition = await client(`/projection/perStream/state?partition=${stream}`)
    expect(await partition.json(), stream).toEqual({ n: count })
  }
}

beforeAll(async () => {
  buildDist()
  dir = tempDir("vellum-projections-kill-")
  port = await freePort()
}, 120_000)

afterAll(() => {
  node?.child.kill("SIGKILL")
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("projections across SIGKILLs", () => {
  it("end with every state, emitted stream and index written exactly once", async () => {
    await start()
    await create("counter", Query)
    await create("perStream", PerStream)
    for (let round = 0; round < Rounds; round++) {
      if (round > 0) await start()
      if (round === 1) {
        const once = await whenReady(() =>
          client("/projections/onetime?name=once&emit=yes&checkpoints=yes&enabled=yes", { method: "POST", body: Once })
        )
        expect(once.status).toBe(201)
      }
      const appended = { n: 0 }
      let killed = false
      const writing = runWriters(appended, () => killed || appended.n >= EventsPerRound)
      // Killed while the writers append and the projections work behind them.
      while (appended.n < EventsPerRound / 2) await sleep(5)
      await kill()
      killed = true
      await writing
    }

    await start()
    expect(await whenReady(() => client("/projection/counter"))).toHaveProperty("status", 200)
    expect(await appendBatch("end-1", ["Done"])).toBe(true)

    // Once everything has caught up the log is as one uninterrupted run would have left it. What is read is a
    // moment of a log still being written (the indexes follow the projections' own writes), so the checks are
    // made again until they hold; a count or a stream off by one event never comes right.
    const deadline = Date.now() + 120_000
    for (;;) {
      try {
        await verify()
        break
      } catch (e) {
        if (Date.now() > deadline) throw e
        await sleep(300)
      }
    }
    expect((await statistics("counter")).status).toBe("Running")
    expect((await statistics("perStream")).status).toBe("Running")
    expect((await statistics("once")).status).toBe("Completed")
  }, 300_000)
})
