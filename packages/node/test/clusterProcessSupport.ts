/**
 * A cluster of real node processes on this machine, for the tests that check what a network of operating-system
 * processes does: the compiled node (`dist/main.mjs`, built by `buildDist`) started per member with the options
 * `npm run cluster` gives it, on free ports below the ephemeral range and a temporary data directory each; a
 * member can be SIGKILLed and restarted on its directory, or replaced by a new node on an empty directory. And the client the tests talk to it with: the state
 * from /info, appends that follow a follower's 307 to the leader (resending the credentials and the body, which
 * fetch would drop or refuse across ports), and reads of a stream's event ids.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { buildDist, portIsFree, spawnNode, tempDir, type Spawned } from "./processSupport.js"

const HOST = "127.0.0.1"
const AUTHORIZATION = `Basic ${Buffer.from("admin:changeit").toString("base64")}`
/** Any request to a member gives up after this: a stopped process must not hang a test. */
const REQUEST_TIMEOUT_MS = 5_000

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface Member {
  readonly name: string
  readonly url: string
  readonly httpPort: number
  readonly internalPort: number
  readonly db: string
  /** The member's current process (a restart replaces it). */
  readonly process: () => Spawned
}

export interface ProcessCluster {
  /** The current members, in their order (a replaced member's slot holds its replacement). */
  readonly members: ReadonlyArray<Member>
  /** SIGKILLs the member's process and waits until it has exited. */
  readonly kill: (member: Member) => Promise<void>
  /** Starts the member again, on its data directory and ports. */
  readonly restart: (member: Member) => void
  /**
   * SIGKILLs the member and starts a new node in its place: an empty data directory and another HTTP port (so
   * another endpoint in gossip), the same internal port (so the others' seeds still reach it).
   */
  readonly replace: (member: Member) => Promise<Member>
  /** Every member's output so far, each line prefixed with its name: for the message of a failed wait. */
  readonly logs: () => string
  /** Kills whatever still runs and removes the data directories. */
  readonly dispose: () => Promise<void>
}

/**
 * A port nobody listens on, below the ephemeral range (so no outgoing connection can be given it meanwhile),
 * and in a range no other test uses a fixed port of (they sit below 24,000), since the test files run in
 * parallel.
 */
const lowFreePort = async (taken: Set<number>): Promise<number> => {
  for (;;) {
    const port = 24_000 + Math.floor(Math.random() * 8_000)
    if (!taken.has(port) && (await portIsFree(port))) {
      taken.add(port)
      return port
    }
  }
}

export interface ProcessClusterOptions {
  /** Given to every member after the cluster's own options (say, a shorter gossip interval). */
  readonly args?: ReadonlyArray<string>
}

/** Builds the node and starts `size` voting members, each seeded with the others' internal endpoints. */
export const startProcessCluster = async (
  size: number,
  options: ProcessClusterOptions = {}
): Promise<ProcessCluster> => {
  buildDist()
  const taken = new Set<number>()
  const secret = randomBytes(24).toString("base64url")
  const layout: Array<{ name: string; httpPort: number; internalPort: number; db: string }> = []
  for (let n = 1; n <= size; n++) {
    const httpPort = await lowFreePort(taken)
    const internalPort = await lowFreePort(taken)
    layout.push({ name: `node${n}`, httpPort, internalPort, db: tempDir(`vellum-cluster-node${n}-`) })
  }
  const processes = new Map<string, Spawned>()
  const replacedDbs: Array<string> = []
  const previousOutput = new Map<string, string>()
  const spawnMember = (node: (typeof layout)[number]) => {
    const seeds = layout.filter((other) => other !== node).map((other) => `${HOST}:${other.internalPort}`)
    const running = processes.get(node.name)
    if (running !== undefined) previousOutput.set(node.name, (previousOutput.get(node.name) ?? "") + running.output())
    const args = [
      ["--db", node.db],
      ["--cluster-size", String(size)],
      ["--node-ip", HOST],
      ["--node-port", String(node.httpPort)],
      ["--replication-ip", HOST],
      ["--replication-port", String(node.internalPort)],
      ["--gossip-seed", seeds.join(",")],
      // The cheapest password hash: the default users' hashing is not what this cluster is for.
      ["--password-hash-cost", "4"],
      options.args ?? []
    ].flat()
    processes.set(node.name, spawnNode(args, { VELLUM_CLUSTER_SECRET: secret }))
  }
  layout.forEach(spawnMember)
  const memberOf = (node: (typeof layout)[number]): Member => ({
    ...node,
    url: `http://${HOST}:${node.httpPort}`,
    process: () => processes.get(node.name)!
  })
  const members = layout.map(memberOf)
  const alive = (spawned: Spawned) => spawned.child.exitCode === null && spawned.child.signalCode === null
  const kill = async (member: Member) => {
    const spawned = member.process()
    if (alive(spawned)) spawned.child.kill("SIGKILL")
    await spawned.exited
  }
  const layoutOf = (member: Member) => layout.findIndex((node) => node.name === member.name)
  return {
    members,
    kill,
    restart: (member) => spawnMember(layout[layoutOf(member)]!),
    replace: async (member) => {
      await kill(member)
      const slot = layoutOf(member)
      const old = layout[slot]!
      const replacement = { ...old, httpPort: await lowFreePort(taken), db: tempDir(`vellum-cluster-${old.name}-`) }
      layout[slot] = replacement
      // Its predecessor's directory goes with the others at the end (its output is kept for the logs).
      replacedDbs.push(old.db)
      spawnMember(replacement)
      const next = memberOf(replacement)
      members[slot] = next
      return next
    },
    logs: () =>
      layout
        .flatMap((node) =>
          ((previousOutput.get(node.name) ?? "") + (processes.get(node.name)?.output() ?? ""))
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => `${node.name} | ${line}`)
        )
        .join("\n"),
    dispose: async () => {
      for (const spawned of processes.values()) if (alive(spawned)) spawned.child.kill("SIGKILL")
      await Promise.all([...processes.values()].map((spawned) => spawned.exited))
      for (const db of [...layout.map((node) => node.db), ...replacedDbs])
        fs.rmSync(db, { recursive: true, force: true })
    }
  }
}

/**
 * Polls `probe` until it gives a value; fails after `ms` with `what` (a function, to say what was last seen)
 * and the cluster's logs.
 */
export const waitUntil = async <A>(
  cluster: ProcessCluster,
  what: string | (() => string),
  ms: number,
  probe: () => Promise<A | undefined>
): Promise<A> => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) {
      const said = typeof what === "string" ? what : what()
      throw new Error(`${said}: not within ${ms} ms. The nodes' output:\n${cluster.logs()}`)
    }
    await sleep(200)
  }
}

/** The state a member's /info shows (leader, follower, ...), or undefined when it does not answer. */
export const stateOf = async (member: Member): Promise<string | undefined> => {
  try {
    const response = await fetch(`${member.url}/info`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
    const info = (await response.json()) as { state?: unknown }
    return typeof info.state === "string" ? info.state : undefined
  } catch {
    return undefined
  }
}

/** Waits until exactly one of `members` leads and all the others follow, and says which is which. */
export const waitForRoles = (cluster: ProcessCluster, members: ReadonlyArray<Member>, ms: number) => {
  let states: ReadonlyArray<string | undefined> = []
  return waitUntil(
    cluster,
    () =>
      `one leader and ${members.length - 1} followers among ${members.map((m) => m.name).join(", ")} (last seen: ` +
      `${members.map((m, i) => `${m.name} ${states[i] ?? "no answer"}`).join(", ")})`,
    ms,
    async () => {
      states = await Promise.all(members.map(stateOf))
      const leaders = members.filter((_, i) => states[i] === "leader")
      const followers = members.filter((_, i) => states[i] === "follower")
      return leaders.length === 1 && followers.length === members.length - 1
        ? { leader: leaders[0]!, followers }
        : undefined
    }
  )
}

export interface Appended {
  readonly status: number
  /** The Location of each 307 followed, in order. */
  readonly redirects: ReadonlyArray<string>
  /** The final answer's Location (the new event's URL, on the node that wrote it). */
  readonly location: string | null
}

/**
 * Appends one event to `stream` through the node at `url` as admin, following 307s: each hop is sent again,
 * to the absolute Location, with the same credentials and body. Throws when a node does not answer.
 */
export const appendEvent = async (
  url: string,
  stream: string,
  event: { readonly eventId: string; readonly eventType: string; readonly data: unknown }
): Promise<Appended> => {
  const send = (target: string) =>
    fetch(target, {
      method: "POST",
      redirect: "manual",
      headers: { authorization: AUTHORIZATION, "content-type": "application/vnd.eventstore.events+json" },
      body: JSON.stringify([event]),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    })
  const redirects: Array<string> = []
  let response = await send(`${url}/streams/${encodeURIComponent(stream)}`)
  while (response.status === 307 && redirects.length < 3) {
    const location = response.headers.get("location")
    if (location === null) break
    redirects.push(location)
    await response.arrayBuffer()
    response = await send(location)
  }
  await response.arrayBuffer()
  return { status: response.status, redirects, location: response.headers.get("location") }
}

export interface ReadEvent {
  readonly eventId: string
  readonly eventType: string
  readonly eventNumber: number
  /** The event's JSON body as the feed embeds it (parsed when it came as text). */
  readonly data: unknown
}

const parsedOrText = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/**
 * The events of `stream` on the node at `url`, in stream order (read forward, a page at a time, as admin, the
 * bodies embedded); empty when the stream does not exist there (yet); undefined when the node does not answer
 * as expected.
 */
export const readEvents = async (url: string, stream: string): Promise<ReadonlyArray<ReadEvent> | undefined> => {
  const events: Array<ReadEvent> = []
  const page = 100
  try {
    for (let from = 0; ; from += page) {
      const response = await fetch(`${url}/streams/${encodeURIComponent(stream)}/${from}/forward/${page}?embed=body`, {
        headers: { authorization: AUTHORIZATION, accept: "application/vnd.eventstore.atom+json" },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
      })
      if (response.status === 404) {
        await response.arrayBuffer()
        return events
      }
      if (response.status !== 200) {
        await response.arrayBuffer()
        return undefined
      }
      const feed = (await response.json()) as { entries: Array<ReadEvent> }
      const entries = [...feed.entries].sort((a, b) => a.eventNumber - b.eventNumber)
      events.push(
        ...entries.map(({ eventId, eventType, eventNumber, data }) => ({
          eventId,
          eventType,
          eventNumber,
          data: typeof data === "string" ? parsedOrText(data) : data
        }))
      )
      if (entries.length < page) return events
    }
  } catch {
    return undefined
  }
}

/** The event ids of `stream` on the node at `url`, in stream order (as `readEvents` reads them). */
export const readEventIds = async (url: string, stream: string): Promise<ReadonlyArray<string> | undefined> =>
  (await readEvents(url, stream))?.map((event) => event.eventId)
