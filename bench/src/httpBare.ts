/**
 * The ceiling of `npm run bench:http`: a bare node:http server, in its own process like the node, that
 * answers the benchmark's URLs with replies captured from the node (same status, reason, headers and body
 * bytes). It reads each request body in full, as the node's adapter does (packages/http/src/live), and does
 * nothing else — so the ratio node / bare is what the node's own work costs on top of node:http.
 *
 * Forked with an IPC channel: it receives CannedReplies, listens on a free port of 127.0.0.1, reports
 * `{ listening: port }`, and exits when the parent disconnects.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { BareMessage, CannedReplies, CannedReply } from "./httpPlan.js"

interface Prepared {
  readonly status: number
  readonly reason: string
  readonly headers: Record<string, string>
  readonly body: Buffer
}

const prepare = (canned: CannedReply): Prepared => {
  const body = Buffer.from(canned.bodyBase64, "base64")
  return {
    status: canned.status,
    reason: canned.reason,
    headers: { ...canned.headers, "content-length": String(body.length) },
    body
  }
}

const isAll = (url: string) => url.startsWith("/streams/$all") || url.startsWith("/streams/%24all")

export const serveCanned = (canned: CannedReplies, onListening: (port: number) => void) => {
  const append = prepare(canned.append)
  const streamPage = prepare(canned.streamPage)
  const allPage = prepare(canned.allPage)
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      Buffer.concat(chunks)
      const url = req.url ?? "/"
      const reply = req.method === "POST" ? append : isAll(url) ? allPage : streamPage
      res.writeHead(reply.status, reply.reason, reply.headers)
      res.end(reply.body)
    })
  }
  const server = createServer(answer)
  server.listen(0, "127.0.0.1", () => onListening((server.address() as AddressInfo).port))
  return server
}

if (process.send !== undefined) {
  process.once("message", (canned: CannedReplies) => {
    const server = serveCanned(canned, (port) => process.send!({ listening: port } satisfies BareMessage))
    process.once("disconnect", () => {
      server.closeAllConnections()
      server.close(() => process.exit(0))
    })
  })
}
