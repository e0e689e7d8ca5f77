/**
 * Node-to-node transports, measured side by side in one process on localhost, to choose the live
 * `Network` layer's transport (docs/decisions.md):
 *
 * - "vellum-tcp": NodeNetwork itself — length-framed messages over node:net, requests multiplexed on one
 *   connection, a channel per stream, Effect around each call;
 * - "http1": node:http with a keep-alive agent, one POST per request; a chunked POST for the stream;
 * - "http2": node:http2, one session, a stream per request; one long stream for the stream case.
 *
 * Workloads: request/reply of 256-byte messages at 1 and 32 in flight (gossip and elections), and a
 * one-way stream of 8 KiB messages (replication bulks), in MB/s. The figures are ratios against the
 * best transport of the same run, so they hold on a noisy machine.
 *
 * Usage: npm run bench:network -- [--requests N] [--megabytes M] [--reps R]   (defaults 20000, 256, 3)
 */
import * as http from "node:http"
import * as http2 from "node:http2"
import { Effect, Exit, Scope } from "effect"
import { NodeNetwork } from "@vellum/platform"

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < process.argv.length ? Number(process.argv[i + 1]) : dflt
}
const requests = arg("requests", 20_000)
const megabytes = arg("megabytes", 256)
const reps = Math.max(1, arg("reps", 3))

const message = Buffer.alloc(256, 7)
const bulk = Buffer.alloc(8192, 3)

interface Transport {
  readonly name: string
  /** Sends one request and resolves with its reply. */
  readonly request: () => Promise<Uint8Array>
  /** Streams `count` bulks one way; resolves when the receiver has them all. */
  readonly stream: (count: number) => Promise<void>
  readonly close: () => Promise<void>
}

const vellumTcp = async (port: number): Promise<Transport> => {
  const scope = Effect.runSync(Scope.make())
  let received = 0
  let onReceived: (() => void) | undefined
  const server = await Effect.runPromise(
    Scope.extend(NodeNetwork.make({ self: `127.0.0.1:${port}`, clusterSecret: "bench" }), scope)
  )
  await Effect.runPromise(
    Scope.extend(
      server.serve({
        onRequest: (_from, m) => Effect.succeed(m),
        onChannel: (channel) =>
          Effect.forever(
            Effect.map(channel.receive, () => {
              received++
              onReceived?.()
            })
          ).pipe(Effect.catchAll(() => Effect.void))
      }),
      scope
    )
  )
  const client = await Effect.runPromise(
    Scope.extend(NodeNetwork.make({ self: `127.0.0.1:${port + 1}`, clusterSecret: "bench" }), scope)
  )
  const peer = `127.0.0.1:${port}`
  return {
    name: "vellum-tcp",
    request: () => Effect.runPromise(client.request(peer, message, 10_000)),
    stream: async (count) => {
      received = 0
      const done = new Promise<void>((resolve) => {
        onReceived = () => {
          if (received === count) resolve()
        }
      })
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const channel = yield* client.open(peer, 10_000)
            for (let i = 0; i < count; i++) yield* channel.send(bulk)
            yield* Effect.promise(() => done)
          })
        )
      )
    },
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const http1 = async (port: number): Promise<Transport> => {
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => res.end(Buffer.concat(chunks)))
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  const post = (body: Buffer | ((req: http.ClientRequest) => void)) =>
    new Promise<Uint8Array>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, method: "POST", path: "/", agent }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve(Buffer.concat(chunks)))
      })
      req.on("error", reject)
      if (typeof body === "function") body(req)
      else req.end(body)
    })
  return {
    name: "http1",
    request: () => post(message),
    stream: async (count) => {
      await post((req) => {
        let i = 0
        const write = () => {
          while (i < count) {
            i++
            if (!req.write(bulk)) return req.once("drain", write)
          }
          req.end()
        }
        write()
      })
    },
    close: async () => {
      agent.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

const h2 = async (port: number): Promise<Transport> => {
  const server = http2.createServer()
  server.on("stream", (stream) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (c: Buffer) => chunks.push(c))
    stream.on("end", () => {
      stream.respond({ ":status": 200 })
      stream.end(chunks.length === 1 && chunks[0]!.length < 1024 ? chunks[0] : Buffer.alloc(0))
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const session = http2.connect(`http://127.0.0.1:${port}`)
  const call = (send: (stream: http2.ClientHttp2Stream) => void) =>
    new Promise<Uint8Array>((resolve, reject) => {
      const stream = session.request({ ":method": "POST", ":path": "/" })
      const chunks: Array<Buffer> = []
      stream.on("data", (c: Buffer) => chunks.push(c))
      stream.on("end", () => resolve(Buffer.concat(chunks)))
      stream.on("error", reject)
      send(stream)
    })
  return {
    name: "http2",
    request: () => call((s) => s.end(message)),
    stream: async (count) => {
      await call((s) => {
        let i = 0
        const write = () => {
          while (i < count) {
            i++
            if (!s.write(bulk)) return s.once("drain", write)
          }
          s.end()
        }
        write()
      })
    },
    close: async () => {
      session.close()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

const requestRate = async (t: Transport, inFlight: number): Promise<number> => {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < requests) {
        next++
        await t.request()
      }
    })
  )
  return requests / ((performance.now() - started) / 1000)
}

const streamRate = async (t: Transport): Promise<number> => {
  const count = Math.floor((megabytes * 1024 * 1024) / bulk.length)
  const started = performance.now()
  await t.stream(count)
  return (count * bulk.length) / (1024 * 1024) / ((performance.now() - started) / 1000)
}

const makers = [vellumTcp, http1, h2]
const best = new Map<string, number>()
const keep = (key: string, value: number) => best.set(key, Math.max(best.get(key) ?? 0, value))

for (let rep = 0; rep < reps; rep++) {
  for (const [k, make] of makers.entries()) {
    const t = await make(23200 + 10 * k)
    const one = await requestRate(t, 1)
    const many = await requestRate(t, 32)
    const mbs = await streamRate(t)
    await t.close()
    keep(`${t.name} requests/s x1`, one)
    keep(`${t.name} requests/s x32`, many)
    keep(`${t.name} stream MB/s`, mbs)
    console.log(
      JSON.stringify({
        rep,
        transport: t.name,
        requestsPerSecond1: Math.round(one),
        requestsPerSecond32: Math.round(many),
        streamMBps: Math.round(mbs)
      })
    )
  }
}

for (const workload of ["requests/s x1", "requests/s x32", "stream MB/s"]) {
  const figures = ["vellum-tcp", "http1", "http2"].map((n) => [n, best.get(`${n} ${workload}`) ?? 0] as const)
  const top = Math.max(...figures.map(([, v]) => v))
  console.log(
    `${workload.padEnd(15)} ` +
      figures.map(([n, v]) => `${n} ${Math.round(v).toLocaleString("en")} (${(v / top).toFixed(2)})`).join("   ")
  )
}
