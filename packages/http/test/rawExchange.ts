/** Raw HTTP over a socket for the byte-for-byte tests of the plain and the fiber forms. */
import { connect } from "node:net"

/** Sends raw request bytes on a fresh connection; resolves with everything the server wrote before closing. */
export const exchange = (port: number, request: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    const chunks: Array<Buffer> = []
    socket.on("data", (c: Buffer) => chunks.push(c))
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("latin1")))
    socket.on("error", reject)
    socket.write(request)
  })

/** The reply without its Date header (the one part two servers legitimately differ in). */
export const withoutDate = (wire: string) => wire.replace(/\r\nDate: [^\r]*/, "")
