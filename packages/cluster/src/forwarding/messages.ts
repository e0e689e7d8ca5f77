/**
 * The forwarding protocol's messages: a write a node's own services make (users, scavenge points and
 * history, statistics) while the node does not lead, sent to the leader as one request, and the leader's
 * answer — the store's result, or its error as the same tagged error. JSON; byte fields in base64.
 */
import { Schema } from "effect"
import { DiskError } from "@vellum/platform"
import {
  CommitTimeout,
  InvalidRequest,
  NotLeader,
  StorageCorrupt,
  StorageFailed,
  StreamDeleted,
  WriteTimeout,
  WrongExpectedVersion,
  type AppendError,
  type ProposedEvent
} from "@vellum/storage"

export type ForwardedWrite =
  | {
      readonly op: "append"
      readonly stream: string
      readonly expectedVersion: number
      readonly events: ReadonlyArray<ProposedEvent>
    }
  | { readonly op: "delete"; readonly stream: string; readonly expectedVersion: number; readonly hard: boolean }
  | {
      readonly op: "metadata"
      readonly stream: string
      readonly expectedVersion: number
      readonly metadata: Uint8Array
      readonly eventId: string | undefined
      readonly isJson: boolean | undefined
    }
  | { readonly op: "scavengePoint"; readonly effectiveNowMicros: number; readonly threshold: number }

/** What a forwarded write returned: its position in the log decides when it is readable here. */
export type ForwardedResult = { readonly position: number } & Record<string, unknown>

const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")
const bytesOf = (text: unknown) => Buffer.from(typeof text === "string" ? text : "", "base64")

const textEncoder = new TextEncoder()
const textDecoder = new TextDecoder()

export const encodeWrite = (write: ForwardedWrite): Uint8Array =>
  textEncoder.encode(
    JSON.stringify(
      write.op === "append"
        ? { ...write, events: write.events.map((e) => ({ ...e, data: b64(e.data), metadata: b64(e.metadata) })) }
        : write.op === "metadata"
          ? { ...write, metadata: b64(write.metadata) }
          : write
    )
  )

/** The write, or undefined for bytes that are not one. */
export const decodeWrite = (bytes: Uint8Array): ForwardedWrite | undefined => {
  try {
    const value = JSON.parse(textDecoder.decode(bytes)) as Record<string, unknown>
    switch (value.op) {
      case "append":
        return {
          op: "append",
          stream: String(value.stream),
          expectedVersion: Number(value.expectedVersion),
          events: (value.events as Array<Record<string, unknown>>).map((e) => ({
            eventId: String(e.eventId),
            eventType: String(e.eventType),
            isJson: e.isJson === true,
            data: bytesOf(e.data),
            metadata: bytesOf(e.metadata)
          }))
        }
      case "delete":
        return {
          op: "delete",
          stream: String(value.stream),
          expectedVersion: Number(value.expectedVersion),
          hard: value.hard === true
        }
      case "metadata":
        return {
          op: "metadata",
          stream: String(value.stream),
          expectedVersion: Number(value.expectedVersion),
          metadata: bytesOf(value.metadata),
          eventId: typeof value.eventId === "string" ? value.eventId : undefined,
          isJson: typeof value.isJson === "boolean" ? value.isJson : undefined
        }
      case "scavengePoint":
        return {
          op: "scavengePoint",
          effectiveNowMicros: Number(value.effectiveNowMicros),
          threshold: Number(value.threshold)
        }
      default:
        return undefined
    }
  } catch {
    return undefined
  }
}

const ForwardedError = Schema.Union(
  WrongExpectedVersion,
  StreamDeleted,
  InvalidRequest,
  StorageFailed,
  StorageCorrupt,
  WriteTimeout,
  NotLeader,
  CommitTimeout,
  DiskError
)

export type Answer =
  { readonly ok: true; readonly result: ForwardedResult } | { readonly ok: false; readonly error: AppendError }

export const encodeAnswer = (answer: Answer): Uint8Array =>
  textEncoder.encode(
    JSON.stringify(answer.ok ? answer : { ok: false, error: Schema.encodeUnknownSync(ForwardedError)(answer.error) })
  )

/** The answer; an answer that cannot be read leaves the write's outcome unknown. */
export const decodeAnswer = (bytes: Uint8Array): Answer => {
  try {
    const value = JSON.parse(textDecoder.decode(bytes)) as { ok?: unknown; result?: unknown; error?: unknown }
    if (value.ok === true && typeof (value.result as { position?: unknown })?.position === "number")
      return { ok: true, result: value.result as ForwardedResult }
    return { ok: false, error: Schema.decodeUnknownSync(ForwardedError)(value.error) as AppendError }
  } catch {
    return {
      ok: false,
      error: new CommitTimeout({ message: "the leader's answer to a forwarded write could not be read" })
    }
  }
}
