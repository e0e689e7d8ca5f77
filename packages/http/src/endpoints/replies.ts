/**
 * Reply shapes shared by the node endpoints: documents in the negotiated type (text
 * replies carry `; charset=utf-8`), the status-only 404 of a read, the `SendBadRequest` 400 (message in the
 * body, `text/plain` without charset), and which of JSON/XML/text a negotiated type stands for.
 */
import { reply, type Reply } from "../Reply.js"

export type DocumentFormat = "json" | "xml" | "text"

/** `text/xml` and `application/xml` render XML, `text/plain` text, every other type JSON. */
export const formatOf = (responseType: string): DocumentFormat => {
  const type = responseType.toLowerCase()
  if (type === "text/xml" || type === "application/xml") return "xml"
  if (type === "text/plain") return "text"
  return "json"
}

export const contentType = (responseType: string): string => `${responseType}; charset=utf-8`

/** 200 with a document body labelled with the negotiated type. */
export const documentReply = (responseType: string, body: string, headers: Record<string, string> = {}): Reply =>
  reply(200, { reason: "OK", headers: { "Content-Type": contentType(responseType), ...headers }, body })

export const notFoundReply = (headers: Record<string, string> = {}): Reply =>
  reply(404, { reason: "Not Found", headers: { "Content-Type": "text/plain; charset=utf-8", ...headers } })

export const badRequestReply = (message: string): Reply =>
  reply(400, { reason: "Bad Request", headers: { "Content-Type": "text/plain" }, body: message })

/** Newtonsoft's indented output: two spaces, `\n`, `"name": value`. */
export const indentedJson = (value: unknown): string => JSON.stringify(value, null, 2)
