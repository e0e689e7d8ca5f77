/**
 * What the processes of `npm run bench:peers` share: the workloads, the options, the event bodies every server
 * gets, and the plan the parent sends to its load driver (peersDriver.ts) with the answer it gets back. Pure
 * but for the event bodies (a fresh UUID and the clock).
 */
import * as crypto from "node:crypto"
import * as path from "node:path"
import { commandLine, selectedParts } from "./benchSupport.js"

export const PEERS = ["vellum", "postgres", "redis"] as const
export type Peer = (typeof PEERS)[number]

export const PEER_TITLES: Readonly<Record<Peer, string>> = {
  vellum: "Vellum",
  postgres: "PostgreSQL",
  redis: "Redis"
}

/** Events of the global-order workloads come in pages of this many (and of multiples of it). */
export const GLOBAL_PAGE = 20

/** The memory each store may cache its data in: PostgreSQL's shared_buffers and the node's chunk cache. */
export const SHARED_MEMORY_BYTES = 512 * 1024 * 1024

export interface Workload {
  readonly name: string
  readonly title: string
  readonly kind: "append" | "read-stream" | "read-global"
  readonly clients: number
  /** Events per operation: appended in one request, or asked for in one page. */
  readonly events: number
}

export const WORKLOADS: ReadonlyArray<Workload> = [
  { name: "append-1", title: "single-event appends, 64 clients", kind: "append", clients: 64, events: 1 },
  { name: "append-100", title: "100-event appends, 16 clients", kind: "append", clients: 16, events: 100 },
  {
    name: "read-stream-20",
    title: "20-event reads from a stream, 16 clients",
    kind: "read-stream",
    clients: 16,
    events: 20
  },
  {
    name: "read-global-20",
    title: "20-event reads in global order, 16 clients",
    kind: "read-global",
    clients: 16,
    events: 20
  },
  {
    name: "read-global-100",
    title: "100-event reads in global order, 16 clients",
    kind: "read-global",
    clients: 16,
    events: 100
  }
]

/** Redis streams have no order across streams: it has no figure for the global-order reads. */
export const runsOn = (peer: Peer, workload: Workload) => !(peer === "redis" && workload.kind === "read-global")

export interface PeersOptions {
  readonly durationSec: number
  readonly warmupSec: number
  readonly workloads: ReadonlyArray<Workload>
  readonly peers: ReadonlyArray<Peer>
  readonly runs: number
  /** Where every server keeps its data (relative to the repository), removed at the end. */
  readonly dir: string
  /** The read workloads' data, written to every server before the first workload: streams × events each. */
  readonly readStreams: number
  readonly eventsPerReadStream: number
}

const positive = (name: string, text: string | undefined, fallback: number): number => {
  if (text === undefined) return fallback
  const n = Number(text)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} wants a positive number, got ${text}`)
  return n
}

/** The options of `npm run bench:peers -- …`; an unknown workload or server name throws. */
export const parseOptions = (args: ReadonlyArray<string>): PeersOptions => {
  const { has, value } = commandLine(args)
  const quick = has("--quick")
  const runs = positive("--runs", value("--runs"), 1)
  if (!Number.isInteger(runs)) throw new Error(`--runs wants a whole number, got ${runs}`)
  const workloadSelected = selectedParts(
    value("--only"),
    WORKLOADS.map((w) => w.name)
  )
  const peerSelected = selectedParts(value("--peers"), PEERS)
  return {
    durationSec: positive("--duration", value("--duration"), quick ? 3 : 10),
    warmupSec: positive("--warmup", value("--warmup"), quick ? 1 : 2),
    workloads: WORKLOADS.filter((w) => workloadSelected(w.name)),
    peers: PEERS.filter(peerSelected),
    runs,
    dir: path.normalize(value("--dir") ?? ".bench-data/peers"),
    readStreams: quick ? 200 : 1000,
    eventsPerReadStream: 100
  }
}

/** One event as a client sends it: a fresh UUID, and `data` of DATA_BYTES of JSON. */
export interface BenchEvent {
  readonly eventId: string
  readonly eventType: string
  readonly data: { readonly at: number; readonly payload: string }
  readonly metadata: { readonly source: string }
}

export const DATA_BYTES = 256
// The payload fills what the rest of the data leaves of DATA_BYTES (the clock has 13 digits until 2286).
const PAYLOAD = "x".repeat(DATA_BYTES - JSON.stringify({ at: Date.now(), payload: "" }).length)

export const benchEvent = (): BenchEvent => ({
  eventId: crypto.randomUUID(),
  eventType: "BenchEvent",
  data: { at: Date.now(), payload: PAYLOAD },
  metadata: { source: "bench" }
})

export const benchEvents = (count: number): Array<BenchEvent> => Array.from({ length: count }, benchEvent)

/** The name of read stream `k`, the same on every server. */
export const readStreamName = (k: number) => `peers-read-${k}`

/** How the driver reaches one server. */
export type PeerTarget =
  | {
      readonly peer: "vellum"
      readonly origin: string
      readonly authorization: string
      /** `$all` positions 20 events apart from the start of the log, over the read data. */
      readonly globalStarts: ReadonlyArray<string>
    }
  | { readonly peer: "postgres"; readonly port: number; readonly globalPages: number }
  | { readonly peer: "redis"; readonly port: number }

export interface DriverPlan {
  readonly target: PeerTarget
  readonly workload: Workload
  /** Client i appends to `${streamPrefix}-c${i}-${k}`, k < APPEND_STREAMS_PER_CLIENT. */
  readonly streamPrefix: string
  readonly readStreams: number
  readonly eventsPerReadStream: number
  readonly warmupSec: number
  readonly durationSec: number
  /** The server's CPU is the sum over this process and its descendants. */
  readonly serverPid: number
}

export const APPEND_STREAMS_PER_CLIENT = 100

export interface DriverResult {
  /** Operations that completed inside the measured window, and their events. */
  readonly ops: number
  readonly events: number
  readonly eventsPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** Failed operations over warm-up and window: a run is valid only with none. */
  readonly errors: number
  readonly firstError?: string
  /** The server's CPU (user + system, all its processes) per event of the window, in µs; absent off Linux. */
  readonly serverCpuUsPerEvent?: number
  /** The driver's own CPU, in % of one core over its run: near 100 means the driver is the limit. */
  readonly driverCpuPercent: number
}

/**
 * One client's connection to a server (one TCP connection, one operation in flight). Each resolves to the
 * number of events it handled and throws on any failure, a short page included.
 */
export interface PeerClient {
  readonly append: (stream: string, events: ReadonlyArray<BenchEvent>) => Promise<number>
  readonly readStream: (stream: string, from: number, count: number) => Promise<number>
  /** `count` events in global order from page `page` (GLOBAL_PAGE events each) of the read data. */
  readonly readGlobal: (page: number, count: number) => Promise<number>
  readonly close: () => Promise<void>
}

/** Throws unless a read got the page it asked for. */
export const fullPage = (got: number, wanted: number): number => {
  if (got !== wanted) throw new Error(`short page: ${got} of ${wanted} events`)
  return got
}
