/**
 * The wire format of node-to-node traffic over TCP (live/NodeNetwork.ts): length-prefixed frames.
 *
 *   frame   = u32 length (big-endian, of what follows) · u8 type · body
 *   HELLO     = u8 kind (1 requests, 2 channel) · u16 address length · address (the sender's) · 16-byte nonce
 *   CHALLENGE = 16-byte nonce · 32-byte proof (the server's)
 *   PROOF     = 32-byte proof (the client's)
 *   WELCOME   = (empty)
 *   REFUSED   = UTF-8 reason
 *   REQUEST   = u32 id · message
 *   REPLY     = u32 id · message
 *   MESSAGE   = message (a channel's)
 *
 * Plain code, no I/O: the reader takes whatever chunks the socket gives and returns whole frames.
 */

export const FrameType = {
  Hello: 1,
  Challenge: 2,
  Proof: 3,
  Welcome: 4,
  Refused: 5,
  Request: 6,
  Reply: 7,
  Message: 8
} as const
export type FrameType = (typeof FrameType)[keyof typeof FrameType]

export const ConnectionKind = { Requests: 1, Channel: 2 } as const
export type ConnectionKind = (typeof ConnectionKind)[keyof typeof ConnectionKind]

/** The largest frame accepted (a replication bulk is far smaller); a larger length is a protocol error. */
export const MaxFrameBytes = 64 * 1024 * 1024

export interface Frame {
  readonly type: FrameType
  readonly body: Uint8Array
}

export const encodeFrame = (type: FrameType, ...parts: ReadonlyArray<Uint8Array>): Buffer => {
  let length = 1
  for (const p of parts) length += p.length
  const out = Buffer.allocUnsafe(4 + length)
  out.writeUInt32BE(length, 0)
  out[4] = type
  let at = 5
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

export const u32 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4)
  b.writeUInt32BE(n >>> 0, 0)
  return b
}

/** A frame whose length or type no peer of ours sends. */
export class FrameError extends Error {
  constructor(message: string) {
    super(message)
    this.name = "FrameError"
  }
}

/**
 * Reassembles frames from the chunks a socket delivers (a socket never reuses a chunk it delivered: they are
 * held as they come until the frame in progress is whole). They are then joined once — joining on every
 * chunk copied a frame of n chunks n times over — so a frame's body is a view of that copy, never of a chunk.
 */
export class FrameReader {
  private parts: Array<Uint8Array> = []
  private size = 0

  /** Adds a chunk; returns the frames it completed, in order. Throws `FrameError` on a malformed frame. */
  push(chunk: Uint8Array): Array<Frame> {
    if (chunk.length === 0) return []
    this.parts.push(chunk)
    this.size += chunk.length
    if (this.size < 4) return []
    if (this.parts[0]!.length < 4) this.join()
    const head = this.parts[0]!
    const length = ((head[0]! << 24) | (head[1]! << 16) | (head[2]! << 8) | head[3]!) >>> 0
    if (length < 1 || length > MaxFrameBytes) throw new FrameError(`a frame of ${length} bytes`)
    if (this.size - 4 < length) return []
    const pending = this.join()
    const frames: Array<Frame> = []
    let at = 0
    while (pending.length - at >= 4) {
      const length = pending.readUInt32BE(at)
      if (length < 1 || length > MaxFrameBytes) throw new FrameError(`a frame of ${length} bytes`)
      if (pending.length - at - 4 < length) break
      const type = pending[at + 4]!
      if (type < FrameType.Hello || type > FrameType.Message) throw new FrameError(`a frame of unknown type ${type}`)
      frames.push({ type: type as FrameType, body: pending.subarray(at + 5, at + 4 + length) })
      at += 4 + length
    }
    const rest = pending.subarray(at)
    this.parts = rest.length === 0 ? [] : [rest]
    this.size = rest.length
    return frames
  }

  /** The chunks held, as one buffer of their own. */
  private join(): Buffer {
    const joined = Buffer.concat(this.parts, this.size)
    this.parts = [joined]
    return joined
  }
}

export const encodeHello = (kind: ConnectionKind, address: string, nonce: Uint8Array): Buffer => {
  const name = Buffer.from(address, "utf8")
  const head = Buffer.allocUnsafe(3)
  head[0] = kind
  head.writeUInt16BE(name.length, 1)
  return encodeFrame(FrameType.Hello, head, name, nonce)
}

export const decodeHello = (
  body: Uint8Array
): { kind: ConnectionKind; address: string; nonce: Uint8Array } | undefined => {
  if (body.length < 3) return undefined
  const b = Buffer.from(body.buffer, body.byteOffset, body.length)
  const kind = b[0]
  const length = b.readUInt16BE(1)
  if ((kind !== ConnectionKind.Requests && kind !== ConnectionKind.Channel) || b.length !== 3 + length + 16)
    return undefined
  return { kind, address: b.subarray(3, 3 + length).toString("utf8"), nonce: b.subarray(3 + length) }
}

/** Splits a REQUEST or REPLY body into its id and message. */
export const decodeNumbered = (body: Uint8Array): { id: number; message: Uint8Array } | undefined => {
  if (body.length < 4) return undefined
  const b = Buffer.from(body.buffer, body.byteOffset, body.length)
  return { id: b.readUInt32BE(0), message: b.subarray(4) }
}
