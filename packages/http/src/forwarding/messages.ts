/**
 * The messages of leader forwarding on the members' internal channel: a follower sends the leader one HTTP
 * request (`ForwardedRequest`) and gets back the leader's finished reply (`ForwardedReply`), as one request and
 * one answer. Framing, as replication's messages: u32 length of a JSON header | the header | the body's bytes
 * as they are. Bytes that do not decode are a defect of the sender: the receiver treats them as no message.
 */
import type { Reply } from "../Reply.js"

/** An HTTP request as the follower passes it on (its headers already rewritten for the leader). */
export interface ForwardedRequest {
  readonly method: string
  /** Origin-form: the raw path and query the client sent. */
  readonly url: string
  /** Lower-cased names, repeated values joined (as the pipeline normalizes them). */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array | undefined
  /** The scheme the client used. */
  readonly scheme: "http" | "https"
  /** The client's address, for the leader's logs. */
  readonly remote: string | undefined
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const frame = (header: Record<string, unknown>, body: Uint8Array | undefined): Uint8Array => {
  const json = encoder.encode(JSON.stringify({ ...header, hasBody: body !== undefined }))
  const payload = body ?? new Uint8Array(0)
  const out = new Uint8Array(4 + json.length + payload.length)
  new DataView(out.buffer).setUint32(0, json.length, true)
  out.set(json, 4)
  out.set(payload, 4 + json.length)
  return out
}

const unframe = (
  bytes: Uint8Array
): { readonly header: Record<string, unknown>; readonly body: Uint8Array | undefined } | undefined => {
  if (bytes.length < 4) return undefined
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true)
  if (4 + length > bytes.length) return undefined
  let header: unknown
  try {
    header = JSON.parse(decoder.decode(bytes.subarray(4, 4 + length)))
  } catch {
    return undefined
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) return undefined
  const record = header as Record<string, unknown>
  return { header: record, body: record["hasBody"] === true ? bytes.slice(4 + length) : undefined }
}

const isStringRecord = (value: unknown): value is Record<string, string> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((v) => typeof v === "string")

/** Header values as a reply carries them: a string, or an array of strings for a repeated header. */
const isReplyHeaders = (value: unknown): value is Record<string, string | ReadonlyArray<string>> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every(
    (v) => typeof v === "string" || (Array.isArray(v) && v.every((item) => typeof item === "string"))
  )

export const encodeRequest = (request: ForwardedRequest): Uint8Array =>
  frame(
    {
      method: request.method,
      url: request.url,
      headers: request.headers,
      scheme: request.scheme,
      ...(request.remote !== undefined ? { remote: request.remote } : {})
    },
    request.body
  )

export const decodeRequest = (bytes: Uint8Array): ForwardedRequest | undefined => {
  const framed = unframe(bytes)
  if (framed === undefined) return undefined
  const { method, url, headers, scheme, remote } = framed.header
  if (typeof method !== "string" || typeof url !== "string" || !isStringRecord(headers)) return undefined
  if (scheme !== "http" && scheme !== "https") return undefined
  if (remote !== undefined && typeof remote !== "string") return undefined
  return { method, url, headers, body: framed.body, scheme, remote }
}

/** The leader's reply as it went out of its pipeline: status, reason, headers and body byte for byte. */
export const encodeReply = (reply: Reply): Uint8Array =>
  frame(
    {
      status: reply.status,
      ...(reply.reason !== undefined ? { reason: reply.reason } : {}),
      headers: reply.headers,
      ...(reply.bare === true ? { bare: true } : {})
    },
    typeof reply.body === "string" ? encoder.encode(reply.body) : reply.body
  )

export const decodeReply = (bytes: Uint8Array): Reply | undefined => {
  const framed = unframe(bytes)
  if (framed === undefined) return undefined
  const { status, reason, headers, bare } = framed.header
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 999) return undefined
  if ((reason !== undefined && typeof reason !== "string") || !isReplyHeaders(headers)) return undefined
  return {
    status,
    ...(reason !== undefined ? { reason } : {}),
    headers,
    ...(framed.body !== undefined ? { body: framed.body } : {}),
    ...(bare === true ? { bare: true } : {})
  }
}
