/**
 * Issue 3, "answers real EventStoreDB HTTP clients": a whole node served on a real localhost port, driven by
 * geteventstore-promise 4.0.1's HTTPClient (axios 0.21 underneath) exactly as its README shows. The client
 * sends `Accept: application/json`, `Content-Type: application/vnd.eventstore.events+json` (GETs too),
 * `ES-ExpectedVersion`, `ES-ResolveLinkTos`, `ES-HardDelete: true`, `?embed=body`, and Basic credentials
 * in the URL; it reads feeds (`JSON.parse(entry.data)` at embed=body, stops paging at `headOfStream`),
 * and surfaces failures as axios errors carrying the status, reason phrase and headers.
 *
 * Not covered here: the persistent-subscription calls (compat-geteventstore-subscriptions.test.ts), the
 * projection, users and admin calls, and the TCP client.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EventFactory, HTTPClient, type Event } from "geteventstore-promise"
import { serveNode, type ServedNode } from "./compatSupport.js"

/** What the client's rejections carry (axios 0.21 errors). */
interface ClientError {
  readonly message: string
  readonly response?: {
    readonly status: number
    readonly statusText: string
    readonly headers: Record<string, string | undefined>
  }
}

const rejectionOf = async (promise: Promise<unknown>): Promise<ClientError> => {
  try {
    await promise
  } catch (error) {
    return error as ClientError
  }
  throw new Error("expected the client call to fail")
}

const factory = new EventFactory()
let node: ServedNode
let client: HTTPClient
let streamCounter = 0
/** A fresh stream name per test (the client does not escape names: keep them URL-safe). */
const freshStream = (prefix: string) => `${prefix}-${++streamCounter}`

const clientFor = (username: string, password: string) =>
  new HTTPClient({ hostname: node.host, port: node.port, credentials: { username, password } })

beforeAll(async () => {
  node = await serveNode()
  client = clientFor("admin", "changeit")
})

afterAll(async () => {
  await node?.stop()
})

describe("geteventstore-promise HTTPClient against a Vellum node", () => {
  it("ping() resolves with the node's text message", async () => {
    expect(await client.ping()).toEqual({ text: "Ping request successfully handled" })
  })

  it("writeEvent + getEvents round-trip data, metadata, numbers and types", async () => {
    const stream = freshStream("orders")
    const data = {
      s: 'ünïcødé ✓ "quoted"',
      n: 1.5,
      big: 12345678901234,
      nested: { list: [1, "two", null, true] },
      empty: {}
    }
    await client.writeEvent(stream, "OrderPlaced", data, { correlationId: "c-1" })
    await client.writeEvent(stream, "OrderShipped", { by: "post" })

    const events = await client.getEvents(stream)
    expect(events.map((e) => [e.eventNumber, e.eventType, e.streamId])).toEqual([
      [0, "OrderPlaced", stream],
      [1, "OrderShipped", stream]
    ])
    const first = events[0]!
    expect(first.data).toEqual(data)
    expect(first.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(first.isJson).toBe(true)
    expect(first.positionEventNumber).toBe(0)
    expect(first.positionStreamId).toBe(stream)
    // At embed=body the reference gives metadata as `metaData`, a JSON string the client leaves alone.
    const withMetaData = first as Event & { metaData?: string; isMetaData?: boolean }
    expect(JSON.parse(withMetaData.metaData!)).toEqual({ correlationId: "c-1" })
    expect(withMetaData.isMetaData).toBe(true)
    expect((events[1] as Event & { metaData?: string | null }).metaData).toBeNull()
    // `created` is the client's copy of the Atom `updated` timestamp.
    expect(first.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
  })

  it("round-trips arrays, $type, date strings and unusual event types", async () => {
    const stream = freshStream("shapes")
    const dated = { $type: "Orders.Placed, Orders", at: "2020-01-02T03:04:05.678Z", local: "2020-01-02T03:04:05+02:00" }
    await client.writeEvent(stream, "Listed", [1, { two: 2 }, "three"])
    await client.writeEvent(stream, "Dated", dated)
    await client.writeEvent(stream, "Ünïcødé type with spaces", { ok: true })
    const events = await client.getEvents(stream)
    expect(events.map((e) => e.data)).toEqual([[1, { two: 2 }, "three"], dated, { ok: true }])
    expect(events[2]!.eventType).toBe("Ünïcødé type with spaces")
  })

  it("concurrent writes with any expected version all land, each exactly once", async () => {
    const stream = freshStream("concurrent")
    await Promise.all(Array.from({ length: 25 }, (_, n) => client.writeEvent(stream, "Parallel", { n })))
    const events = await client.getAllStreamEvents(stream, 10)
    expect(events.map((e) => e.eventNumber)).toEqual(Array.from({ length: 25 }, (_, n) => n))
    expect(events.map((e) => (e.data as { n: number }).n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 25 }, (_, n) => n)
    )
  })

  it("large streams: reads capped at 4096 by the client, getAllStreamEvents in 1000-event chunks", async () => {
    const stream = freshStream("large")
    const batch = Array.from({ length: 5000 }, (_, n) => factory.newEvent("Bulk", { n }))
    await client.writeEvents(stream, batch)
    const capped = await client.readEventsForward(stream, undefined, 4096)
    expect(capped.events).toHaveLength(4096)
    expect([capped.events[0]!.data, capped.events[4095]!.data]).toEqual([{ n: 0 }, { n: 4095 }])
    expect(capped).toMatchObject({ isEndOfStream: false, nextEventNumber: 4096 })
    const events = await client.getAllStreamEvents(stream)
    expect(events).toHaveLength(5000)
    expect(events.every((e, n) => e.eventNumber === n && e.eventId === batch[n]!.eventId)).toBe(true)
  })

  it("an append over MaxAppendSize (1 MiB by default) is refused with 413 and the reference's reason", async () => {
    const stream = freshStream("too-big")
    const refused = await rejectionOf(client.writeEvent(stream, "Big", { blob: "y".repeat(4 * 1024 * 1024) }))
    expect(refused.response).toMatchObject({ status: 413, statusText: "Maximum Append Size of 1048576 Exceeded." })
  })

  it("reading a stream that does not exist fails with 404", async () => {
    const stream = freshStream("nothing")
    const rejection = await rejectionOf(client.getEvents(stream))
    // The message says why when the rejection carries no response (seen once under heavy machine load).
    expect(rejection.response, rejection.message).toMatchObject({
      status: 404,
      statusText: "Not Found"
    })
    expect((await rejectionOf(client.readEventsBackward(stream))).response?.status).toBe(404)
    expect((await rejectionOf(client.getAllStreamEvents(stream))).response?.status).toBe(404)
  })

  it("stream names the client puts into URLs unescaped still address one stream", async () => {
    // Not non-ASCII names: the client sends them as raw Latin-1 bytes, which no HTTP server decodes (see
    // docs/http-api.md, "Client compatibility").
    for (const stream of [
      freshStream("tenant@acme:orders+1"),
      freshStream("with space"),
      freshStream("a.b_c~d'!*()")
    ]) {
      await client.writeEvent(stream, "Named", { stream })
      expect(await client.checkStreamExists(stream)).toBe(true)
      const [event] = await client.getEvents(stream)
      expect(event).toMatchObject({ streamId: stream, data: { stream } })
    }
    // Escaped by the caller, a non-ASCII name reaches the node intact.
    const unicode = freshStream("ünïcødé-名前")
    await client.writeEvent(encodeURIComponent(unicode), "Named", { unicode })
    expect(await client.getEvents(encodeURIComponent(unicode))).toMatchObject([
      { streamId: unicode, data: { unicode } }
    ])
  })

  it("writeEvents appends a batch atomically, in order, with the ids it was given", async () => {
    const stream = freshStream("batch")
    const batch = [1, 2, 3].map((n) => factory.newEvent("Counted", { n }))
    await client.writeEvents(stream, batch)
    const events = await client.getEvents(stream)
    expect(events.map((e) => [e.eventNumber, e.eventId, e.data])).toEqual(batch.map((b, i) => [i, b.eventId, b.data]))
    // An empty batch is the client's no-op (no request is sent).
    expect(await client.writeEvents(stream, [])).toBeUndefined()
  })

  it("honours ES-ExpectedVersion; a wrong one fails with 400, the reason and the current version", async () => {
    const stream = freshStream("versioned")
    await client.writeEvent(stream, "Created", { v: 0 }, undefined, { expectedVersion: -1 })
    await client.writeEvents(stream, [factory.newEvent("Changed", { v: 1 }), factory.newEvent("Changed", { v: 2 })], {
      expectedVersion: 0
    })
    await client.writeEvent(stream, "Changed", { v: 3 }, undefined, { expectedVersion: 2 })

    const stale = await rejectionOf(client.writeEvent(stream, "Changed", { v: 99 }, undefined, { expectedVersion: 1 }))
    expect(stale.response?.status).toBe(400)
    expect(stale.response?.statusText).toBe("Wrong expected EventNumber")
    expect(stale.response?.headers["es-currentversion"]).toBe("3")
    expect(stale.response?.headers["kurrent-currentversion"]).toBe("3")

    const notNew = await rejectionOf(client.writeEvent(stream, "Created", { v: 0 }, undefined, { expectedVersion: -1 }))
    expect(notNew.response?.status).toBe(400)
    const missing = await rejectionOf(
      client.writeEvent(freshStream("absent"), "Changed", {}, undefined, { expectedVersion: 0 })
    )
    expect(missing.response?.headers["es-currentversion"]).toBe("-1")

    expect((await client.getEvents(stream)).map((e) => (e.data as { v: number }).v)).toEqual([0, 1, 2, 3])
  })

  it("replaying a batch with the same event ids is idempotent", async () => {
    const stream = freshStream("idempotent")
    const batch = [factory.newEvent("A", { a: 1 }), factory.newEvent("B", { b: 2 })]
    await client.writeEvents(stream, batch)
    await client.writeEvents(stream, batch)
    await client.writeEvents(stream, batch, { expectedVersion: -1 })
    expect((await client.getEvents(stream)).map((e) => e.eventId)).toEqual(batch.map((b) => b.eventId))
  })

  it("reads forward and backward pages with the client's paging fields", async () => {
    const stream = freshStream("paged")
    await client.writeEvents(
      stream,
      [0, 1, 2, 3, 4].map((n) => factory.newEvent("Tick", { n }))
    )

    const page = await client.readEventsForward(stream, 1, 2)
    expect(page.events.map((e) => e.eventNumber)).toEqual([1, 2])
    expect(page).toMatchObject({
      streamId: stream,
      headOfStream: false,
      isEndOfStream: false,
      readDirection: "forward",
      fromEventNumber: 1,
      nextEventNumber: 3
    })
    expect(page.title).toBe(`Event stream '${stream}'`)
    expect(page.links.map((l) => l.relation)).toEqual(["self", "first", "last", "next", "previous", "metadata"])

    const past = await client.readEventsForward(stream, 11)
    expect(past).toMatchObject({ events: [], isEndOfStream: true })

    const end = await client.readEventsForward(stream, 3, 10)
    expect(end.events.map((e) => e.eventNumber)).toEqual([3, 4])
    expect(end).toMatchObject({ isEndOfStream: true, nextEventNumber: 0 })

    const head = await client.readEventsBackward(stream)
    expect(head.events.map((e) => e.eventNumber)).toEqual([4, 3, 2, 1, 0])
    expect(head).toMatchObject({ headOfStream: true, readDirection: "backward", fromEventNumber: "head" })

    const older = await client.readEventsBackward(stream, 3, 2)
    expect(older.events.map((e) => e.eventNumber)).toEqual([3, 2])
    expect(older).toMatchObject({ headOfStream: false, nextEventNumber: 1 })

    expect((await client.getEvents(stream, 0, 2, "backward")).map((e) => e.eventNumber)).toEqual([0])
    // The README documents 'head' as a start position; the typings only allow numbers.
    expect(
      (await client.getEvents(stream, "head" as unknown as number, 2, "backward")).map((e) => e.eventNumber)
    ).toEqual([4, 3])
    expect((await client.getEventsByType(stream, ["Tick"], 2, 2)).map((e) => e.eventNumber)).toEqual([2, 3])
    expect(await client.getEventsByType(stream, ["Other"])).toEqual([])
  })

  it("getAllStreamEvents pages forward until headOfStream", async () => {
    const stream = freshStream("all-of-it")
    await client.writeEvents(
      stream,
      Array.from({ length: 7 }, (_, n) => factory.newEvent("Tick", { n }))
    )
    const events = await client.getAllStreamEvents(stream, 3)
    expect(events.map((e) => (e.data as { n: number }).n)).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect((await client.getAllStreamEvents(stream, 2, 5)).map((e) => e.eventNumber)).toEqual([5, 6])
    // A chunk that ends exactly at the last event: the next (empty) page is the head of the stream.
    expect(await client.getAllStreamEvents(stream, 7)).toHaveLength(7)
  })

  it("embed=rich leaves the data out; the client then does not parse it", async () => {
    const stream = freshStream("rich")
    await client.writeEvent(stream, "T", { x: 1 })
    const [event] = await client.getEvents(stream, 0, 10, "forward", true, "rich")
    expect(event).toMatchObject({ eventType: "T", eventNumber: 0, data: null, isJson: true })
  })

  it("embed=TryHarder gives the data as JSON text; the typings' 'PrettyBody' is no embed level upstream", async () => {
    const stream = freshStream("embeds")
    await client.writeEvent(stream, "T", { x: 1 })
    const [tried] = await client.getEvents(stream, 0, 10, "forward", true, "TryHarder")
    expect(JSON.parse(tried!.data as unknown as string)).toEqual({ x: 1 }) // left unparsed by the client
    const [plain] = await client.getEvents(stream, 0, 10, "forward", true, "PrettyBody")
    expect(plain).not.toHaveProperty("eventType")
    expect(plain).toMatchObject({ title: `0@${stream}`, summary: "T" })
  })

  it("checkStreamExists is true for a written stream and false for an unknown one", async () => {
    const stream = freshStream("exists")
    expect(await client.checkStreamExists(stream)).toBe(false)
    await client.writeEvent(stream, "T", { x: 1 })
    expect(await client.checkStreamExists(stream)).toBe(true)
  })

  it("a soft delete hides the stream, and writing again continues the numbering", async () => {
    const stream = freshStream("soft")
    await client.writeEvents(stream, [factory.newEvent("A", { a: 1 }), factory.newEvent("B", { b: 2 })])
    expect(await client.deleteStream(stream)).toBe("")
    expect(await client.checkStreamExists(stream)).toBe(false)
    expect((await rejectionOf(client.getEvents(stream))).response?.status).toBe(404)
    // The client checks existence first: deleting again is its own error.
    expect((await rejectionOf(client.deleteStream(stream))).message).toBe("Stream does not exist")

    await client.writeEvent(stream, "C", { c: 3 })
    expect((await client.getEvents(stream)).map((e) => [e.eventNumber, e.eventType])).toEqual([[2, "C"]])
    expect(await client.checkStreamExists(stream)).toBe(true)
    // Paging one event at a time walks through the (empty) pages below the truncation point.
    expect((await client.getAllStreamEvents(stream, 1)).map((e) => e.eventNumber)).toEqual([2])
  })

  it("a hard delete makes the stream gone for good (410), as the client reports it", async () => {
    const stream = freshStream("hard")
    await client.writeEvent(stream, "A", { a: 1 })
    await client.deleteStream(stream, true)
    expect((await rejectionOf(client.getEvents(stream))).response).toMatchObject({ status: 410, statusText: "Deleted" })
    expect((await rejectionOf(client.writeEvent(stream, "B", { b: 1 }))).response).toMatchObject({
      status: 410,
      statusText: "Stream deleted"
    })
    // checkStreamExists only maps 404 to false; a 410 is rethrown (as against the reference server).
    expect((await rejectionOf(client.checkStreamExists(stream))).response?.status).toBe(410)
  })

  it("deleteStream of a stream that never existed fails in the client", async () => {
    expect((await rejectionOf(client.deleteStream(freshStream("never")))).message).toBe("Stream does not exist")
  })

  it("stream metadata written as a $metadata event to $$stream applies ($maxCount) and reads back", async () => {
    const stream = freshStream("capped")
    await client.writeEvents(
      stream,
      [1, 2, 3, 4].map((n) => factory.newEvent("N", { n }))
    )
    await client.writeEvent(`$$${stream}`, "$metadata", { $maxCount: 2, owner: "team-a" })
    expect((await client.getEvents(stream)).map((e) => e.eventNumber)).toEqual([2, 3])
    expect((await client.getAllStreamEvents(stream, 1)).map((e) => e.eventNumber)).toEqual([2, 3])
    const [metadata] = await client.getEvents(`$$${stream}`, undefined, 1, "backward")
    expect(metadata).toMatchObject({
      eventType: "$metadata",
      streamId: `$$${stream}`,
      data: { $maxCount: 2, owner: "team-a" }
    })
  })

  it("a stream with metadata but no events does not exist for the client", async () => {
    const stream = freshStream("meta-only")
    await client.writeEvent(`$$${stream}`, "$metadata", { $maxCount: 5 })
    expect(await client.checkStreamExists(stream)).toBe(false)
    await client.writeEvent(stream, "First", { f: 1 }, undefined, { expectedVersion: -1 })
    expect((await client.getEvents(stream)).map((e) => e.eventNumber)).toEqual([0])
  })

  it("resolves link events by default and leaves them alone when asked", async () => {
    const target = freshStream("target")
    const links = freshStream("links")
    await client.writeEvent(target, "Real", { real: true })
    // A link's data is "<n>@<stream>" text, stored as-is (not JSON); the typings only allow objects.
    await client.writeEvent(links, "$>", `0@${target}` as unknown as object)
    const [resolved] = await client.getEvents(links)
    expect(resolved).toMatchObject({
      eventType: "Real",
      streamId: target,
      eventNumber: 0,
      data: { real: true },
      positionStreamId: links,
      positionEventNumber: 0
    })
    const [raw] = await client.getEvents(links, 0, 10, "forward", false)
    expect(raw).toMatchObject({ eventType: "$>", streamId: links, eventNumber: 0, data: null, isJson: false })
    // Once the target is gone the entry stays, pointing at it, without any event fields.
    await client.deleteStream(target)
    const [dangling] = await client.getEvents(links)
    expect(dangling).toMatchObject({ title: `0@${target}`, summary: "$>" })
    expect(dangling).not.toHaveProperty("eventType")
  })

  it("reads $all backward from the head (admins)", async () => {
    const stream = freshStream("in-all")
    await client.writeEvent(stream, "Visible", { here: 1 })
    const page = await client.readEventsBackward("$all", undefined, 20)
    expect(page.title).toBe("All events")
    expect(page.events[0]).toMatchObject({ streamId: stream, eventType: "Visible", data: { here: 1 } })
    const start = await client.getEvents("$all", "00000000000000000000000000000000" as unknown as number, 3) // a $all position, not a number
    expect(start).toHaveLength(3)
    // The client's numeric start positions are not $all positions (32 hex digits): refused as upstream.
    expect((await rejectionOf(client.getEvents("$all", 0, 10))).response?.status).toBe(400)
  })

  it("surfaces authentication and authorization failures as 401s", async () => {
    const stream = freshStream("guarded")
    await client.writeEvent(stream, "T", { x: 1 })
    const wrongPassword = clientFor("admin", "wrong")
    expect((await rejectionOf(wrongPassword.getEvents(stream))).response?.status).toBe(401)
    expect((await rejectionOf(wrongPassword.writeEvent(stream, "T", { x: 2 }))).response?.status).toBe(401)
    // ops is not an admin: $all is admins-only by default.
    expect((await rejectionOf(clientFor("ops", "changeit").readEventsBackward("$all"))).response?.status).toBe(401)
  })

  // Last: it asks the node to stop (only `main` acts on that; the served node keeps answering).
  it("admin.shutdown() is accepted for admins and refused to bad credentials", async () => {
    expect((await rejectionOf(clientFor("admin", "wrong").admin.shutdown())).response?.status).toBe(401)
    expect(await client.admin.shutdown()).toBe("")
  })
})
