/**
 * Redis in `npm run bench:peers`: the Debian package's redis-server on 127.0.0.1 and a free port, with the
 * append-only file synced before every reply (`appendfsync always`; Redis syncs once per turn of its event
 * loop for all the writes of that turn) and no snapshots. An event is a stream entry (XADD of its id, type,
 * data and metadata); a batch is its XADDs in one MULTI/EXEC, sent in one write; a read is XRANGE with COUNT.
 * Redis streams keep no order across streams and check no expected version.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import Redis from "ioredis"
import { stopChild, waitUntil, type PeerServer } from "./peersServers.js"
import {
  benchEvents,
  fullPage,
  readStreamName,
  type BenchEvent,
  type PeerClient,
  type PeerTarget
} from "./peersPlan.js"

type RedisTarget = Extract<PeerTarget, { peer: "redis" }>

/** The installed server, undefined if there is none. */
export const redisServerPath = (): string | undefined =>
  ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].find((file) => fs.existsSync(file))

const connected = async (port: number) => {
  const client = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null
  })
  // A failure reaches the command that meets it (or connect); without a listener ioredis also prints it.
  client.on("error", () => undefined)
  try {
    await client.connect()
  } catch (e) {
    client.disconnect()
    throw e
  }
  return client
}

export const startRedis = async (binary: string, dir: string, port: number): Promise<PeerServer> => {
  fs.mkdirSync(dir, { recursive: true })
  const log = path.join(dir, "redis.log")
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--logfile", log, "--daemonize", "no"]
  const durability = ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
  const child = spawn(binary, [...args, ...durability], { stdio: "ignore" })
  const server: PeerServer = { pid: child.pid!, stop: () => stopChild(child, "SIGTERM") }
  await waitUntil(
    child,
    "redis-server",
    async () => {
      const client = await connected(port)
      await client.ping()
      client.disconnect()
    },
    log
  )
  return server
}

export const redisVersion = async (port: number): Promise<string> => {
  const client = await connected(port)
  try {
    return /redis_version:(\S+)/.exec(await client.info("server"))?.[1] ?? "unknown"
  } finally {
    client.disconnect()
  }
}

const fields = (event: BenchEvent) => [
  "id",
  event.eventId,
  "type",
  event.eventType,
  "data",
  JSON.stringify(event.data),
  "metadata",
  JSON.stringify(event.metadata)
]

/** Entry ids of the read data are explicit, `0-{position + 1}`, so a read can start at a stream position. */
const entryId = (position: number) => `0-${position + 1}`

const exec = async (multi: ReturnType<Redis["multi"]>) => {
  const replies = (await multi.exec()) ?? []
  const failed = replies.find(([error]) => error !== null)
  if (failed !== undefined) throw failed[0]
  return replies.length
}

/** Writes the read data, one MULTI of all a stream's entries per stream. */
export const prefillRedis = async (port: number, streams: number, eventsPerStream: number) => {
  const client = await connected(port)
  try {
    for (let k = 0; k < streams; k++) {
      const multi = client.multi()
      benchEvents(eventsPerStream).forEach((event, position) =>
        multi.xadd(readStreamName(k), entryId(position), ...fields(event))
      )
      await exec(multi)
    }
  } finally {
    client.disconnect()
  }
}

export const connectRedis = async (target: RedisTarget): Promise<PeerClient> => {
  const client = await connected(target.port)
  return {
    append: async (stream, events) => {
      if (events.length === 1) {
        await client.xadd(stream, "*", ...fields(events[0]!))
        return 1
      }
      const multi = client.multi()
      for (const event of events) multi.xadd(stream, "*", ...fields(event))
      return exec(multi)
    },
    readStream: async (stream, from, count) => {
      const entries = await client.xrange(stream, entryId(from), "+", "COUNT", count)
      // A client decodes what it read: the data and metadata of each entry.
      for (const [, values] of entries) {
        JSON.parse(values[5]!)
        JSON.parse(values[7]!)
      }
      return fullPage(entries.length, count)
    },
    readGlobal: () => Promise.reject(new Error("Redis streams have no global order")),
    close: async () => {
      client.disconnect()
    }
  }
}
