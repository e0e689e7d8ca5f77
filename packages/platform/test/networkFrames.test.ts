import { describe, expect, it, vi } from "vitest"
import {
  ConnectionKind,
  FrameReader,
  FrameType,
  decodeHello,
  decodeNumbered,
  encodeFrame,
  encodeHello,
  u32
} from "../src/network/frames.js"

describe("network frames", () => {
  it("reassembles frames split at every byte and several frames in one chunk", () => {
    const wire = Buffer.concat([
      encodeFrame(FrameType.Request, u32(7), Buffer.from("hello")),
      encodeFrame(FrameType.Welcome),
      encodeFrame(FrameType.Message, Buffer.alloc(1000, 1))
    ])
    for (const size of [1, 2, 3, 7, 64, wire.length]) {
      const reader = new FrameReader()
      const frames = []
      for (let at = 0; at < wire.length; at += size) frames.push(...reader.push(wire.subarray(at, at + size)))
      expect(frames.map((f) => f.type)).toEqual([FrameType.Request, FrameType.Welcome, FrameType.Message])
      expect(decodeNumbered(frames[0]!.body)).toEqual({ id: 7, message: Buffer.from("hello") })
      expect(frames[2]!.body.length).toBe(1000)
    }
  })

  it("joins a frame's chunks once, when the frame is whole, into a copy of its own", () => {
    const wire = encodeFrame(FrameType.Message, Buffer.alloc(64 * 1024, 5))
    const chunks = Array.from({ length: 16 }, (_, i) => Buffer.from(wire.subarray(i * 4096, (i + 1) * 4096)))
    chunks.push(Buffer.from(wire.subarray(16 * 4096)))
    const reader = new FrameReader()
    const concat = vi.spyOn(Buffer, "concat")
    try {
      const frames = chunks.flatMap((chunk) => reader.push(chunk))
      expect(concat).toHaveBeenCalledTimes(1)
      expect(frames.length).toBe(1)
      for (const chunk of chunks) chunk.fill(0)
      expect(Buffer.from(frames[0]!.body).equals(Buffer.alloc(64 * 1024, 5))).toBe(true)
    } finally {
      concat.mockRestore()
    }
  })

  it("refuses a frame with a bad length or an unknown type", () => {
    expect(() => new FrameReader().push(Buffer.from([0, 0, 0, 0, 1]))).toThrow(/0 bytes/)
    expect(() => new FrameReader().push(Buffer.from([0xff, 0, 0, 0, 1]))).toThrow(/bytes/)
    expect(() => new FrameReader().push(Buffer.from([0, 0, 0, 1, 99]))).toThrow(/unknown type 99/)
  })

  it("a hello carries the kind, the sender's address and its nonce", () => {
    const nonce = Buffer.alloc(16, 9)
    const [frame] = new FrameReader().push(encodeHello(ConnectionKind.Channel, "10.0.0.1:1112", nonce))
    expect(decodeHello(frame!.body)).toEqual({ kind: ConnectionKind.Channel, address: "10.0.0.1:1112", nonce })
    expect(decodeHello(Buffer.from([3, 0, 0]))).toBeUndefined()
  })
})
