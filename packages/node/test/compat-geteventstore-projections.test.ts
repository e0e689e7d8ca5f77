/**
 * Issue 21: geteventstore-promise 4.0.1's projection functions against a whole node served on a real localhost
 * port, driven as its upstream test file (`tests/http.projections.js`) drives them, case by case and in its
 * order (the cases depend on each other: names are created, stopped, removed and created again): `assert`
 * (create, then update), `getInfo` (with and without the config), `config`, `start`, `stop`, `reset`,
 * `remove`, `enableAll`, `disableAll`, `getAllProjectionsInfo`, `getState` and `getResult` (by partition too).
 * The two scripts are the upstream's test projections: a fold of `TestProjectionEventType` events whose
 * transform overwrites `data` with 321 (so the result differs from the state), one of them per stream.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HTTPClient } from "geteventstore-promise"
import { serveNode, type ServedNode } from "./compatSupport.js"

const testProjection = `fromAll()
  .when({
    $init() { return { data: {} } },
    TestProjectionEventType(state, ev) { state.data = ev.data }
  })
  .transformBy(function (state) { state.data = 321; return state })
`

const testPartitionedProjection = `fromAll()
  .foreachStream()
  .when({
    $init() { return { data: {} } },
    TestProjectionEventType(state, ev) { state.data = ev.data }
  })
  .transformBy((state) => { state.data = 321; return state })
`

interface Info {
  readonly name: string
  readonly status: string
  readonly config?: Record<string, unknown>
}

let node: ServedNode
let client: HTTPClient
const projections = () =>
  client.projections as unknown as {
    assert: (...args: ReadonlyArray<unknown>) => Promise<{ name: string }>
    getInfo: (name: string, includeConfig?: boolean) => Promise<Info>
    config: (name: string) => Promise<Record<string, unknown>>
    start: (name: string) => Promise<{ name: string }>
    stop: (name: string) => Promise<{ name: string }>
    reset: (name: string) => Promise<{ name: string }>
    remove: (name: string) => Promise<{ name: string }>
    enableAll: () => Promise<unknown>
    disableAll: () => Promise<unknown>
    getAllProjectionsInfo: () => Promise<{ projections: ReadonlyArray<Info> }>
    getState: (name: string, options?: { partition: string }) => Promise<{ data?: Record<string, unknown> }>
    getResult: (name: string, options?: { partition: string }) => Promise<{ data?: unknown }>
  }

/** The upstream's `waitUntil`: polls until the check holds, failing after `timeout` ms. */
const waitUntil = async (check: () => Promise<boolean>, timeout = 8_000): Promise<void> => {
  const deadline = Date.now() + timeout
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error("waitUntil: timed out")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const statusOf = async (name: string) => (await projections().getInfo(name)).status

beforeAll(async () => {
  node = await serveNode()
  client = new HTTPClient({
    hostname: node.host,
    port: node.port,
    credentials: { username: "admin", password: "changeit" }
  })
  // The subsystem loads once the node leads: the list answers 503 until then.
  await waitUntil(() =>
    projections()
      .getAllProjectionsInfo()
      .then(
        () => true,
        () => false
      )
  )
})

afterAll(async () => {
  await node?.stop()
})

describe("geteventstore-promise projections against a Vellum node: default settings", () => {
  const name = randomUUID()

  it("creates a continuous projection", async () => {
    expect((await projections().assert(name, testProjection)).name).toBe(name)
    const info = await projections().getInfo(name, true)
    expect(info.config?.emitEnabled).toBe(false)
    expect(info.config?.trackEmittedStreams).toBe(false)
  })

  it("updates the existing projection", async () => {
    expect((await projections().assert(name, testProjection)).name).toBe(name)
  })

  it("stops the projection", async () => {
    expect((await projections().stop(name)).name).toBe(name)
    expect(await statusOf(name)).toBe("Stopped")
  })

  it("starts the projection", async () => {
    expect((await projections().start(name)).name).toBe(name)
    expect(await statusOf(name)).toBe("Running")
  })

  it("resets the projection", async () => {
    expect((await projections().reset(name)).name).toBe(name)
    expect(["Preparing/Stopped", "Running"]).toContain(await statusOf(name))
  })

  it("removes the continuous projection", async () => {
    expect((await projections().stop(name)).name).toBe(name)
    await waitUntil(async () => (await statusOf(name)) === "Stopped")
    expect((await projections().remove(name)).name).toBe(name)
  })
})

describe("geteventstore-promise projections against a Vellum node: custom settings", () => {
  const name = randomUUID()

  it("creates a one-time projection with every setting on", async () => {
    expect((await projections().assert(name, testProjection, "onetime", true, true, true, true)).name).toBe(name)
    let info: Info | undefined
    await waitUntil(async () => {
      info = await projections().getInfo(name, true)
      return info.config?.trackEmittedStreams === true && info.config?.emitEnabled === true
    })
    expect(info?.config?.trackEmittedStreams).toBe(true)
    expect(info?.config?.emitEnabled).toBe(true)
  })

  it("gets the config", async () => {
    const config = await projections().config(name)
    expect(config.emitEnabled).toBe(true)
    expect(config.trackEmittedStreams).toBe(true)
    expect(config.checkpointHandledThreshold).toBe(4000)
    expect(config.checkpointUnhandledBytesThreshold).toBe(10000000)
    expect(config.pendingEventsThreshold).toBe(5000)
    expect(config.maxWriteBatchLength).toBe(500)
    expect(config.label).toBe("Projections")
  })

  it("removes the one-time projection", async () => {
    expect((await projections().stop(name)).name).toBe(name)
    expect((await projections().remove(name)).name).toBe(name)
  })

  it("creates a one-time projection with emit on and tracking off, then removes it", async () => {
    expect((await projections().assert(name, testProjection, "onetime", true, true, true)).name).toBe(name)
    let info: Info | undefined
    await waitUntil(async () => {
      info = await projections().getInfo(name, true)
      return info.config?.trackEmittedStreams === false && info.config?.emitEnabled === true
    })
    expect(info?.config?.trackEmittedStreams).toBe(false)
    expect(info?.config?.emitEnabled).toBe(true)
    expect((await projections().stop(name)).name).toBe(name)
    expect((await projections().remove(name)).name).toBe(name)
  })
})

describe("geteventstore-promise projections against a Vellum node: every projection", () => {
  it("enables all projections", async () => {
    await projections().enableAll()
    let all: ReadonlyArray<Info> = []
    await waitUntil(async () => {
      all = (await projections().getAllProjectionsInfo()).projections
      return all.every((p) => p.status.toLowerCase().includes("running"))
    })
    for (const p of all) expect(p.status.toLowerCase()).toContain("running")
  })

  it("disables all projections", async () => {
    await projections().disableAll()
    let all: ReadonlyArray<Info> = []
    await waitUntil(async () => {
      all = (await projections().getAllProjectionsInfo()).projections
      return all.every((p) => p.status.toLowerCase().includes("stopped"))
    })
    for (const p of all) expect(p.status.toLowerCase()).toContain("stopped")
  })
})

describe("geteventstore-promise projections against a Vellum node: state and result", () => {
  const runningAndWritten = async (name: string, script: string) => {
    await projections().assert(name, script)
    await waitUntil(() =>
      statusOf(name).then(
        (s) => s.toLowerCase().includes("running"),
        () => false
      )
    )
    const stream = `TestProjectionStream-${randomUUID()}`
    await client.writeEvent(stream, "TestProjectionEventType", { something: "123" })
    return stream
  }
  const stopAndRemove = async (name: string) => {
    expect((await projections().stop(name)).name).toBe(name)
    expect((await projections().remove(name)).name).toBe(name)
  }

  it("lists every projection", async () => {
    expect((await projections().getAllProjectionsInfo()).projections.length).toBeGreaterThan(0)
  })

  it("gives the state of the test projection", async () => {
    const name = "TestProjection"
    await runningAndWritten(name, testProjection)
    let state: { data?: Record<string, unknown> } = {}
    await waitUntil(async () => {
      state = await projections()
        .getState(name)
        .catch(() => ({}))
      return state.data?.something === "123"
    })
    expect(state.data?.something).toBe("123")
    await stopAndRemove(name)
  })

  it("gives a partition's state of the partitioned test projection", async () => {
    const name = `TestProjection${randomUUID()}`
    const stream = await runningAndWritten(name, testPartitionedProjection)
    let state: { data?: Record<string, unknown> } = {}
    await waitUntil(async () => {
      state = await projections()
        .getState(name, { partition: stream })
        .catch(() => ({}))
      return state.data?.something === "123"
    })
    expect(state.data?.something).toBe("123")
    await stopAndRemove(name)
  })

  it("answers 404 for the state of a projection that does not exist", async () => {
    const failure = await projections()
      .getState("SomeProjectionNameThatDoesNotExist")
      .then(
        () => undefined,
        (error: { response?: { status: number } }) => error
      )
    expect(failure?.response?.status).toBe(404)
  })

  it("gives the result of the test projection", async () => {
    const name = "TestProjection"
    await runningAndWritten(name, testProjection)
    let result: { data?: unknown } = {}
    await waitUntil(async () => {
      result = await projections()
        .getResult(name)
        .catch(() => ({}))
      return String(result.data) === "321"
    })
    expect(result.data).toBe(321)
    await stopAndRemove(name)
  })

  it("gives a partition's result of the partitioned test projection", async () => {
    const name = `TestProjection${randomUUID()}`
    const stream = await runningAndWritten(name, testPartitionedProjection)
    let result: { data?: unknown } = {}
    await waitUntil(async () => {
      result = await projections()
        .getResult(name, { partition: stream })
        .catch(() => ({}))
      return String(result.data) === "321"
    })
    expect(result.data).toBe(321)
    await stopAndRemove(name)
  })

  it("answers 404 for the result of a projection that does not exist", async () => {
    const failure = await projections()
      .getResult("SomeProjectionNameThatDoesNotExist")
      .then(
        () => undefined,
        (error: { response?: { status: number } }) => error
      )
    expect(failure?.response?.status).toBe(404)
  })
})
