/**
 * The replication protocol's messages, on one channel a follower opens to its leader:
 *
 *   follower → leader: Subscribe (who it is, whether it votes, its writer checkpoint and newest epochs),
 *                      then an Ack of its flushed writer checkpoint after every slice or piece it wrote
 *                      (with the bytes it holds of a chunk file being received, 0 when none);
 *   leader → follower: Subscribed (where the follower's log and the leader's part: it truncates to there)
 *                      or Refused (this node does not lead), then Data (a raw slice of the log, whole
 *                      write units), RawChunk (a piece of a scavenged chunk's file, sent whole in order)
 *                      and Commit (the replication checkpoint; also the heartbeat).
 *
 * Framing: u8 type | u32 length of a JSON header | the header | payload (the bytes of Data and RawChunk).
 */
import type { RawChunk, RawSlice } from "@vellum/storage"
import type { Epoch } from "./subscriptionPosition.js"

export type ReplicationMessage =
  | {
      readonly _tag: "Subscribe"
      readonly follower: string
      readonly promotable: boolean
      readonly writer: number
      readonly epochs: ReadonlyArray<Epoch>
    }
  | { readonly _tag: "Subscribed"; readonly position: number }
  | { readonly _tag: "Refused"; readonly reason: string }
  | { readonly _tag: "Data"; readonly slice: RawSlice }
  | { readonly _tag: "Commit"; readonly position: number; readonly leaderWriter: number }
  | { readonly _tag: "Ack"; readonly flushed: number; readonly chunkBytes: number }
  | { readonly _tag: "RawChunk"; readonly piece: RawChunk }

const Types = ["Subscribe", "Subscribed", "Refused", "Data", "Commit", "Ack", "RawChunk"] as const

const textEncoder = new TextEncoder()
const textDecoder = new TextDecoder()

export const encodeMessage = (message: ReplicationMessage): Uint8Array => {
  const { header, payload } =
    message._tag === "Data"
      ? {
          header: {
            position: message.slice.position,
            end: message.slice.end,
            completesChunk: message.slice.completesChunk
          },
          payload: message.slice.bytes
        }
      : message._tag === "RawChunk"
        ? { header: { ...message.piece, bytes: undefined }, payload: message.piece.bytes }
        : { header: { ...message, _tag: undefined }, payload: new Uint8Array(0) }
  const json = textEncoder.encode(JSON.stringify(header))
  const out = new Uint8Array(5 + json.length + payload.length)
  const view = new DataView(out.buffer)
  out[0] = Types.indexOf(message._tag)
  view.setUint32(1, json.length, true)
  out.set(json, 5)
  out.set(payload, 5 + json.length)
  return out
}

/** The message, or undefined for bytes that are not one (a peer that does not speak the protocol). */
export const decodeMessage = (bytes: Uint8Array): ReplicationMessage | undefined => {
  if (bytes.length < 5) return undefined
  const type = Types[bytes[0]!]
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1, true)
  if (type === undefined || 5 + length > bytes.length) return undefined
  let header: Record<string, unknown>
  try {
    header = JSON.parse(textDecoder.decode(bytes.subarray(5, 5 + length))) as Record<string, unknown>
  } catch {
    return undefined
  }
  if (typeof header !== "object" || header === null) return undefined
  const num = (key: string) => (typeof header[key] === "number" ? (header[key] as number) : undefined)
  switch (type) {
    case "Data": {
      const position = num("position")
      const end = num("end")
      if (position === undefined || end === undefined) return undefined
      const slice: RawSlice = {
        position,
        end,
        completesChunk: header.completesChunk === true,
        bytes: bytes.subarray(5 + length)
      }
      return { _tag: "Data", slice }
    }
    case "RawChunk": {
      const startNumber = num("startNumber")
      const endNumber = num("endNumber")
      const fileSize = num("fileSize")
      const offset = num("offset")
      if (
        startNumber === undefined ||
        endNumber === undefined ||
        fileSize === undefined ||
        offset === undefined ||
        typeof header.chunkId !== "string"
      )
        return undefined
      const piece: RawChunk = {
        _tag: "RawChunk",
        startNumber,
        endNumber,
        chunkId: header.chunkId,
        fileSize,
        offset,
        bytes: bytes.subarray(5 + length)
      }
      return { _tag: "RawChunk", piece }
    }
    case "Subscribe": {
      const writer = num("writer")
      if (typeof header.follower !== "string" || writer === undefined || !Array.isArray(header.epochs)) return undefined
      return {
        _tag: "Subscribe",
        follower: header.follower,
        promotable: header.promotable === true,
        writer,
        epochs: header.epochs as ReadonlyArray<Epoch>
      }
    }
    case "Subscribed": {
      const position = num("position")
      return position === undefined ? undefined : { _tag: "Subscribed", position }
    }
    case "Refused":
      return { _tag: "Refused", reason: String(header.reason) }
    case "Commit": {
      const position = num("position")
      const leaderWriter = num("leaderWriter")
      return position === undefined || leaderWriter === undefined
        ? undefined
        : { _tag: "Commit", position, leaderWriter }
    }
    case "Ack": {
      const flushed = num("flushed")
      return flushed === undefined ? undefined : { _tag: "Ack", flushed, chunkBytes: num("chunkBytes") ?? 0 }
    }
  }
}
