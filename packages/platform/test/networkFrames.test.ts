import { describe, expect, it } from "vitest"
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
