/**
 * Support for the black-box scavenge acceptance scenarios: a whole node (the composition root over a
 * MemoryDisk) driven only through its HTTP handler, plus small clients for the requests an outsider makes
 * (appends, metadata, deletes, stream and `$all` reads, the scavenge admin API, the history streams).
 *
 * Time: the node reads time from Effect's Clock only, so each node runs under a clock that is the real one
 * shifted by an offset the scenario moves forward (maxAge scenarios "wait" an hour in no time). Logs are
 * captured per node (the reference reports skipped chunks and their weights only in its log).
 */
import { afterEach, expect } from "vitest"
import { Clock, Duration, Effect, Exit, Layer, Logger, Scope } from "effect"
import { Disk, MemoryDisk, type DiskService } from "@vellum/platform"
import type { HttpRequest, Reply } from "@vellum/http"
import * as NodeApp from "../src/NodeApp.js"
import { load } from "./configSupport.js"

export const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`
export const ADMIN = basic("admin", "changeit")
export const OPS = basic("ops", "changeit")
export const ATOM = "application/vnd.eventstore.atom+json"
export const EVENTS = "application/vnd.eventstore.events+json"

/** The real clock plus an offset the test moves forward; sleeps are real. */
export class ShiftedClock {
  offsetMillis = 0
  private readonly base = Clock.make()
  readonly clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => this.base.unsafeCurrentTimeMillis() + this.offsetMillis,
    currentTimeMillis: Effect.sync(() => this.base.unsafeCurrentTimeMillis() + this.offsetMillis),
    unsafeCurrentTimeNanos: () => this.base.unsafeCurrentTimeNanos() + BigInt(this.offsetMillis) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => this.base.unsafeCurrentTimeNanos() + BigInt(this.offsetMillis) * 1_000_000n),
    sleep: (duration: Duration.Duration) => this.base.sleep(duration)
  }
  advance(millis: number): void {
    this.offsetMillis += millis
  }
}

/**
 * A MemoryDisk whose `open`s of chosen files can be held: a slow disk at an exact point, so a scenario can
 * catch a scavenge under way deterministically (a run rewriting a chunk opens `*.scavenge.tmp`).
 */
export class HoldableDisk {
  private hold:
    | {
        readonly pattern: RegExp
        pass: number
        readonly reached: () => void
        readonly gate: Promise<void>
        readonly open: () => void
      }
    | undefined
  readonly service: DiskService

  constructor(readonly memory: MemoryDisk = new MemoryDisk()) {
    const inner = memory.service
    this.service = {
      ...inner,
      open: (path, options) =>
        Effect.flatMap(
          Effect.suspend(() => {
            const hold = this.hold
            if (hold === undefined || !hold.pattern.test(path)) return Effect.void
            if (hold.pass > 0) {
              hold.pass--
              return Effect.void
            }
            hold.reached()
            return Effect.promise(() => hold.gate)
          }),
          () => inner.open(path, options)
        )
    }
  }

  /**
   * Holds the opens of files matching `pattern` after letting `pass` of them through; resolves once one is
   * held. `release` lets it (and every later one) go.
   */
  holdOpens(pattern: RegExp, pass = 0): Promise<void> {
    let reached = () => {}
    let open = () => {}
    const held = new Promise<void>((resolve) => (reached = resolve))
    const gate = new Promise<void>((resolve) => (open = resolve))
    this.hold = { pattern, pass, reached, gate, open }
    return held
  }

  release(): void {
    this.hold?.open()
    this.hold = undefined
  }
}

export type Request = Partial<HttpRequest> & { readonly url: string }

export interface TestNode {
  readonly call: (request: Request) => Promise<Reply>
  /** Every message the node logged, oldest first. */
  readonly logs: Array<string>
  /** Closes the node's scope (a clean stop: finalizers run). */
  readonly close: () => Promise<void>
}

/** The node's options every scenario uses: small chunks so a few events cross chunk boundaries. */
export const SMALL_NODE = ["--chunk-size", "131072", "--max-append-event-size", "65536"] as const
/** Padding of a "big" event: three fill a chunk of SMALL_NODE (a fourth does not fit). */
export const BIG = 40_000

export const openNode = async (
  disk: HoldableDisk,
  clock: ShiftedClock,
  argv: ReadonlyArray<string> = SMALL_NODE
): Promise<TestNode> => {
  const logs: Array<string> = []
  const capture = Logger.make(({ message }) => {
    logs.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  const inWorld = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.runPromise(
      effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)), Effect.withClock(clock.clock))
    )
  const loaded = load({ argv: ["--mem-db", "--password-hash-cost", "4", ...argv] })
  const scope = Effect.runSync(Scope.make())
  const { context, handle } = await inWorld(
    Effect.gen(function* () {
      const context = yield* Layer.buildWithScope(
        Layer.provide(
          NodeApp.layer(loaded, { dbDir: "/db", instanceId: "00000000-0000-4000-8000-000000000001" }),
          Layer.succeed(Disk, disk.service)
        ),
        scope
      )
      const handle = yield* Effect.provide(NodeApp.makeNodeHandler(loaded), context)
      return { context, handle }
    })
  )
  const call = (r: Request) =>
    inWorld(
      Effect.provide(handle({ method: "GET", headers: { host: "127.0.0.1:2113" }, body: undefined, ...r }), context)
    )
  return { call, logs, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

export const text = (reply: Reply): string =>
  typeof reply.body === "string" ? reply.body : Buffer.from(reply.body ?? new Uint8Array()).toString("utf8")

export const pause = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** Deterministic event ids: the scenario's prefix and a counter. */
export class Ids {
  private n = 0
  constructor(private readonly prefix: number) {}
  next(): string {
    this.n++
    return `00000000-0000-4000-8${this.prefix.toString(16).padStart(3, "0")}-${this.n.toString(16).padStart(12, "0")}`
  }
}

export interface EventView {
  readonly streamId: string
  readonly eventNumber: number
  readonly eventType: string
  readonly data: unknown
  /** `{eventNumber}@{stream}` of the event the entry points at (a link's target). */
  readonly title: string
}

interface AtomEntry {
  readonly streamId: string
  readonly eventNumber: number
  readonly eventType: string
  readonly data?: string
  readonly isJson?: boolean
  readonly title: string
}

const viewOf = (e: AtomEntry): EventView => ({
  streamId: e.streamId,
  eventNumber: e.eventNumber,
  eventType: e.eventType,
  data: e.isJson === true && e.data !== undefined ? JSON.parse(e.data) : e.data,
  title: e.title
})

/** The HTTP client of one node, as a given user. */
export class Client {
  /** Events this client appended per stream: the next event's `n` (its event number when numbering never jumped). */
  private readonly counts = new Map<string, number>()

  constructor(
    readonly node: TestNode,
    readonly ids: Ids,
    readonly auth: string = ADMIN
  ) {}

  /** The same node as another user. */
  as(auth: string): Client {
    return new Client(this.node, this.ids, auth)
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { host: "127.0.0.1:2113", authorization: this.auth, ...extra }
  }

  /**
   * Appends `count` events in one request; each data is `{n, pad}`: `n` counts this client's appends to the
   * stream, `pad` is `padBytes` of padding.
   */
  async append(stream: string, count: number, padBytes = 0, expectedVersion?: number): Promise<Reply> {
    const first = this.counts.get(stream) ?? 0
    this.counts.set(stream, first + count)
    const events = Array.from({ length: count }, (_, i) => ({
      eventId: this.ids.next(),
      eventType: "t",
      data: { n: first + i, pad: "x".repeat(padBytes) }
    }))
    return this.node.call({
      method: "POST",
      url: `/streams/${encodeURIComponent(stream)}`,
      headers: this.headers({
        "content-type": EVENTS,
        ...(expectedVersion === undefined ? {} : { "es-expectedversion": String(expectedVersion) })
      }),
      body: new TextEncoder().encode(JSON.stringify(events))
    })
  }

  /** Appends `count` events one request each (big events must not share a request: a write stays in one chunk). */
  async appendEach(stream: string, count: number, padBytes = 0): Promise<void> {
    for (let i = 0; i < count; i++) {
      const reply = await this.append(stream, 1, padBytes)
      if (reply.status !== 201) throw new Error(`append to ${stream}: ${reply.status}`)
    }
  }

  async setMetadata(stream: string, data: unknown, eventType = "$metadata"): Promise<Reply> {
    return this.node.call({
      method: "POST",
      url: `/streams/${encodeURIComponent(stream)}/metadata`,
      headers: this.headers({ "content-type": EVENTS }),
      body: new TextEncoder().encode(JSON.stringify([{ eventId: this.ids.next(), eventType, data }]))
    })
  }

  async delete(stream: string, hard: boolean): Promise<Reply> {
    return this.node.call({
      method: "DELETE",
      url: `/streams/${encodeURIComponent(stream)}`,
      headers: this.headers(hard ? { "es-harddelete": "true" } : {})
    })
  }

  /** A stream's events oldest first (up to 4096), or the read's status when it is not a 200. */
  async read(
    stream: string,
    extraHeaders: Record<string, string> = {}
  ): Promise<{ readonly status: number; readonly events: ReadonlyArray<EventView> }> {
    const reply = await this.node.call({
      url: `/streams/${encodeURIComponent(stream)}/0/forward/4096?embed=body`,
      headers: this.headers({ accept: ATOM, ...extraHeaders })
    })
    if (reply.status !== 200) return { status: reply.status, events: [] }
    const feed = JSON.parse(text(reply)) as { entries: ReadonlyArray<AtomEntry> }
    return { status: 200, events: [...feed.entries].reverse().map(viewOf) }
  }

  async numbers(stream: string): Promise<ReadonlyArray<number>> {
    return (await this.read(stream)).events.map((e) => e.eventNumber)
  }

  async readEvent(stream: string, eventNumber: number): Promise<Reply> {
    return this.node.call({
      url: `/streams/${encodeURIComponent(stream)}/${eventNumber}`,
      headers: this.headers({ accept: "application/json" })
    })
  }

  /** The text of `$all`'s head page (the last 4096 records, newest first, bodies embedded). */
  async allText(): Promise<string> {
    const reply = await this.node.call({
      url: "/streams/$all/head/backward/4096?embed=body",
      headers: this.headers({ accept: ATOM })
    })
    if (reply.status !== 200) throw new Error(`$all read: ${reply.status}`)
    return text(reply)
  }

  /** `$all` oldest first (the last 4096 records). */
  async all(): Promise<ReadonlyArray<EventView>> {
    const feed = JSON.parse(await this.allText()) as { entries: ReadonlyArray<AtomEntry> }
    return [...feed.entries].reverse().map(viewOf)
  }

  /** `$all` oldest first, read in pages of `pageSize` by following the feeds' links (forward: `previous`; backward: `next`). */
  async allPaged(direction: "forward" | "backward", pageSize: number): Promise<ReadonlyArray<EventView>> {
    const out: Array<EventView> = []
    let url: string | undefined =
      direction === "forward"
        ? `/streams/$all/00000000000000000000000000000000/forward/${pageSize}?embed=body`
        : `/streams/$all/head/backward/${pageSize}?embed=body`
    for (let pages = 0; url !== undefined && pages < 10_000; pages++) {
      const reply = await this.node.call({ url, headers: this.headers({ accept: ATOM }) })
      if (reply.status !== 200) throw new Error(`${url}: ${reply.status}`)
      const feed = JSON.parse(text(reply)) as {
        entries: ReadonlyArray<AtomEntry>
        links: ReadonlyArray<{ uri: string; relation: string }>
      }
      if (feed.entries.length === 0) break
      const page = feed.entries.map(viewOf)
      if (direction === "forward") out.push(...[...page].reverse())
      else out.unshift(...[...page].reverse())
      const next = feed.links.find((l) => l.relation === (direction === "forward" ? "previous" : "next"))
      url = next === undefined ? undefined : `${new URL(next.uri).pathname}?embed=body`
    }
    return out
  }

  /** Event numbers of `stream` that `$all` holds. */
  async allNumbers(stream: string): Promise<ReadonlyArray<number>> {
    return (await this.all()).filter((e) => e.streamId === stream).map((e) => e.eventNumber)
  }

  async admin(method: string, url: string, accept = "application/json"): Promise<Reply> {
    return this.node.call({ method, url, headers: this.headers({ accept }) })
  }

  async json<A>(method: string, url: string): Promise<A> {
    const reply = await this.admin(method, url)
    if (reply.status !== 200) throw new Error(`${method} ${url}: ${reply.status} ${text(reply)}`)
    return JSON.parse(text(reply)) as A
  }

  /** POST /admin/scavenge; the new run's id. */
  async startScavenge(query = ""): Promise<string> {
    const started = await this.json<{ scavengeId: string }>("POST", `/admin/scavenge${query === "" ? "" : `?${query}`}`)
    return started.scavengeId
  }

  async last(): Promise<{ scavengeId: string; scavengeLink: string; scavengeResult: string }> {
    return this.json("GET", "/admin/scavenge/last")
  }

  /** Waits until `/admin/scavenge/last` no longer says InProgress; its result. */
  async awaitScavenge(scavengeId: string, timeoutMillis = 20_000): Promise<string> {
    for (let waited = 0; waited < timeoutMillis; waited += 5) {
      const last = await this.last()
      if (last.scavengeId === scavengeId && last.scavengeResult !== "InProgress") return last.scavengeResult
      await pause(5)
    }
    throw new Error(`scavenge ${scavengeId} still running after ${timeoutMillis} ms`)
  }

  /** Starts a scavenge and waits for it; expects Success. */
  async scavenge(query = ""): Promise<string> {
    const id = await this.startScavenge(query)
    const result = await this.awaitScavenge(id)
    if (result !== "Success") throw new Error(`scavenge ${id} ended ${result}`)
    return id
  }

  /** GET /admin/scavenge/current in JSON (Vellum adds phase and progress while a run is going). */
  async current(): Promise<{
    scavengeId: string
    scavengeLink: string
    phase?: string
    progress?: { done: number; total: number }
  }> {
    return this.json("GET", "/admin/scavenge/current")
  }

  /** Polls `current` until `until` holds for the running scavenge; fails if the run ends first. */
  async awaitRunning(
    until: (current: { phase?: string; progress?: { done: number; total: number } }) => boolean,
    timeoutMillis = 20_000
  ) {
    for (let waited = 0; waited < timeoutMillis; waited += 2) {
      const current = await this.current()
      if (current.scavengeId === "") throw new Error("the scavenge ended before the awaited point")
      if (until(current)) return current
      await pause(2)
    }
    throw new Error(`the scavenge did not reach the awaited point in ${timeoutMillis} ms`)
  }

  /** The history of one run: its events oldest first, payloads parsed. */
  async history(scavengeId: string): Promise<ReadonlyArray<EventView>> {
    const read = await this.read(`$scavenges-${scavengeId}`)
    if (read.status !== 200) throw new Error(`$scavenges-${scavengeId}: ${read.status}`)
    return read.events
  }
}

/** The `n` each event's data carries (see `Client.append`). */
export const dataNumbers = (events: ReadonlyArray<EventView>): ReadonlyArray<number> =>
  events.map((e) => (typeof e.data === "object" && e.data !== null && "n" in e.data ? Number(e.data.n) : -1))

/** A fresh node on a fresh disk, and an admin client of it. */
export const freshNode = async (scenario: number, argv: ReadonlyArray<string> = SMALL_NODE) => {
  const disk = new HoldableDisk()
  const clock = new ShiftedClock()
  const node = await openNode(disk, clock, argv)
  return { disk, clock, node, c: new Client(node, new Ids(scenario)) }
}

/**
 * Registers the nodes a test opens: after each test they are closed and none of them may have logged a
 * failure (a merge that failed, a history write lost, ...). Call once at the top of a test file.
 */
export const trackNodes = () => {
  const opened: Array<TestNode> = []
  afterEach(async () => {
    const nodes = opened.splice(0)
    for (const node of nodes) await node.close()
    for (const node of nodes) expect(node.logs.filter((l) => /fail|error/i.test(l))).toEqual([])
  })
  return <A extends TestNode>(node: A): A => {
    opened.push(node)
    return node
  }
}
