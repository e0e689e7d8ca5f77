/**
 * Issue 20: geteventstore-promise 4.0.1's persistent-subscription functions against a whole node served on a
 * real localhost port, called as its README and its upstream test file (`tests/http.persistentSubscriptions.js`)
 * call them: `assert` (PUT, then POST on 409), `getEvents` (competing JSON at embed=body, with `ackAll`/`nackAll`
 * and per-entry `ack`/`nack` functions that POST the feed's links), `getSubscriptionInfo`,
 * `getStreamSubscriptionsInfo`, `getAllSubscriptionsInfo` and `remove`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EventFactory, HTTPClient } from "geteventstore-promise"
import { serveNode, type ServedNode } from "./compatSupport.js"

interface Entry {
  readonly event: { readonly data: { readonly id: number } }
  readonly ack: () => Promise<unknown>
  readonly nack: () => Promise<unknown>
}
interface Batch {
  readonly entries: ReadonlyArray<Entry>
  readonly ackAll: () => Promise<unknown>
}

const factory = new EventFactory()
let node: ServedNode
let client: HTTPClient
let streamCounter = 0
let groupsCreated = 0
const freshStream = () => `TestStream-${++streamCounter}`

const tenEvents = (n = 10) => Array.from({ length: n }, (_, k) => factory.newEvent("TestEventType", { id: k }))

/** The groups load once the node leads: the first call waits for that (a 503 until then). */
const assertGroup = async (name: string, stream: string, options?: object) => {
  for (;;) {
    try {
      const result = await client.persistentSubscriptions.assert(name, stream, options)
      return result
    } catch (error) {
      if ((error as { response?: { status: number } }).response?.status !== 503) throw error
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
}

const getEvents = (name: string, stream: string, count?: number) =>
  client.persistentSubscriptions.getEvents(name, stream, count) as Promise<Batch>

beforeAll(async () => {
  node = await serveNode()
  client = new HTTPClient({
    hostname: node.host,
    port: node.port,
    credentials: { username: "admin", password: "changeit" }
  })
})

afterAll(async () => {
  await node?.stop()
})

describe("geteventstore-promise persistentSubscriptions against a Vellum node", () => {
  it("gets and acks the first batch of events written to a stream", async () => {
    const stream = freshStream()
    await client.writeEvents(stream, tenEvents())
    await assertGroup(stream, stream)
    groupsCreated++
    const result = await getEvents(stream, stream, 10)
    expect(result.entries).toHaveLength(10)
    await result.ackAll()
    expect((await getEvents(stream, stream, 10)).entries).toHaveLength(0)
  })

  it("acks and nacks messages individually: the nacked come again, in order", async () => {
    const stream = freshStream()
    await client.writeEvents(stream, tenEvents(12))
    await assertGroup(stream, stream)
    groupsCreated++
    const result = await getEvents(stream, stream, 100)
    expect(result.entries).toHaveLength(12)
    // Entries are newest first; the upstream test splits them in chunks of four.
    const chunks = [result.entries.slice(0, 4), result.entries.slice(4, 8), result.entries.slice(8, 12)]
    await Promise.all(chunks[0]!.map((entry) => entry.nack()))
    await Promise.all(chunks[1]!.map((entry) => entry.ack()))
    await Promise.all(chunks[2]!.map((entry) => entry.nack()))
    const again = await getEvents(stream, stream, 10)
    expect(again.entries.map((e) => e.event.data.id)).toEqual([11, 10, 9, 8, 3, 2, 1, 0])
  })

  it("updates a group (assert again: PUT answers 409, then POST)", async () => {
    const stream = freshStream()
    await client.writeEvents(stream, tenEvents(12))
    await assertGroup(stream, stream)
    groupsCreated++
    await assertGroup(stream, stream, { readBatchSize: 121, resolveLinkTos: true })
    const info = (await client.persistentSubscriptions.getSubscriptionInfo(stream, stream)) as {
      config: { readBatchSize: number; resolveLinktos: boolean }
    }
    expect(info.config.readBatchSize).toBe(121)
    expect(info.config.resolveLinktos).toBe(true)
  })

  it("deletes a group: reading it is then a 404", async () => {
    const stream = freshStream()
    await client.writeEvents(stream, tenEvents(12))
    await assertGroup(stream, stream)
    await client.persistentSubscriptions.remove(stream, stream)
    const failure = await getEvents(stream, stream, 10).then(
      () => undefined,
      (error: { response?: { status: number } }) => error
    )
    expect(failure?.response?.status).toBe(404)
  })

  it("returns a group's info, a stream's groups and every group", async () => {
    const stream = freshStream()
    await client.writeEvents(stream, tenEvents())
    await assertGroup(stream, stream)
    groupsCreated++
    const info = (await client.persistentSubscriptions.getSubscriptionInfo(stream, stream)) as {
      groupName: string
      eventStreamId: string
    }
    expect(info.groupName).toBe(stream)
    expect(info.eventStreamId).toBe(stream)
    expect(await client.persistentSubscriptions.getStreamSubscriptionsInfo(stream)).toHaveLength(1)
    expect(await client.persistentSubscriptions.getAllSubscriptionsInfo()).toHaveLength(groupsCreated)
  })
})
