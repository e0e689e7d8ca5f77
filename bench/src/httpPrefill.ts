/**
 * The setup of `npm run bench:http`, done over HTTP against the running node: the streams the read
 * scenarios page through, the list of full `$all` pages (walked through the feed's own links), and the
 * replies the bare server will send (captured from the node, so both servers send the same bytes).
 */
import * as crypto from "node:crypto"
import {
  ALL_PAGE_SIZE,
  ALL_START,
  ATOM_JSON,
  EVENTS_CONTENT_TYPE,
  PAGE_SIZE,
  appendBody,
  type CannedReply
} from "./httpPlan.js"

const APPEND_SIZE = 100

export const appendHeaders = (authorization: string) => ({
  authorization,
  "content-type": EVENTS_CONTENT_TYPE,
  "kurrent-expectedversion": "-2"
})

export const expectStatus = async (response: Response, status: number, what: string) => {
  if (response.status !== status) {
    throw new Error(
      `${what}: expected ${status}, got ${response.status} ${response.statusText} ${await response.text()}`
    )
  }
  return response
}

export const readStreamName = (k: number) => `bench-read-${k}`

/** Writes `eventsPerStream` events (a multiple of 100) to each of `streams` streams, 100 per append, 16 at a time. */
export const prefillStreams = async (
  origin: string,
  authorization: string,
  streams: number,
  eventsPerStream: number
) => {
  const salt = crypto.randomBytes(4).toString("hex")
  const appendsPerStream = Math.ceil(eventsPerStream / APPEND_SIZE)
  const total = streams * appendsPerStream
  let next = 0
  const appender = async () => {
    while (true) {
      const k = next++
      if (k >= total) return
      const response = await fetch(`${origin}/streams/${readStreamName(k % streams)}`, {
        method: "POST",
        headers: appendHeaders(authorization),
        body: appendBody(salt, k * APPEND_SIZE, APPEND_SIZE)
      })
      await expectStatus(response, 201, "prefill append")
      await response.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 16 }, appender))
}

/**
 * Every full 20-event forward page of the prefilled streams, with embed=body. Page-major order, so requests
 * that follow each other go to different streams.
 */
export const streamPagePaths = (streams: number, eventsPerStream: number): Array<string> => {
  const paths: Array<string> = []
  for (let from = 0; from + PAGE_SIZE <= eventsPerStream; from += PAGE_SIZE) {
    for (let k = 0; k < streams; k++)
      paths.push(`/streams/${readStreamName(k)}/${from}/forward/${PAGE_SIZE}?embed=body`)
  }
  return paths
}

interface Feed {
  readonly entries: ReadonlyArray<unknown>
  readonly links: ReadonlyArray<{ readonly uri: string; readonly relation: string }>
}

const readFeed = async (origin: string, authorization: string, path: string): Promise<Feed> => {
  const response = await fetch(origin + path, { headers: { authorization, accept: ATOM_JSON } })
  await expectStatus(response, 200, `GET ${path}`)
  return (await response.json()) as Feed
}

/**
 * Paths of up to `maxPages` full forward pages of `pageSize` events of `$all` from the start of the log, found
 * by following each page's `previous` link (the next page forward).
 */
export const allPagePaths = async (
  origin: string,
  authorization: string,
  maxPages: number,
  pageSize: number = ALL_PAGE_SIZE
): Promise<Array<string>> => {
  const paths: Array<string> = []
  let path = `/streams/$all/${ALL_START}/forward/${pageSize}`
  while (paths.length < maxPages) {
    const feed = await readFeed(origin, authorization, path)
    if (feed.entries.length < pageSize) break
    paths.push(path)
    const previous = feed.links.find((link) => link.relation === "previous")
    if (previous === undefined) break
    const url = new URL(previous.uri)
    path = url.pathname + url.search
  }
  return paths
}

/** Headers node:http writes by itself (or from the body) on every reply, so the bare server must not copy them. */
const PER_CONNECTION_HEADERS = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"])

/** Sends one request to the node and keeps its reply for the bare server. */
export const captureReply = async (url: string, init: RequestInit, expected: number): Promise<CannedReply> => {
  const response = await expectStatus(
    await fetch(url, { ...init, redirect: "manual" }),
    expected,
    `${init.method ?? "GET"} ${url}`
  )
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!PER_CONNECTION_HEADERS.has(name)) headers[name] = value
  })
  const body = Buffer.from(await response.arrayBuffer())
  return { status: response.status, reason: response.statusText, headers, bodyBase64: body.toString("base64") }
}

export const captureAppendReply = (origin: string, authorization: string, stream: string) =>
  captureReply(
    `${origin}/streams/${stream}`,
    {
      method: "POST",
      headers: appendHeaders(authorization),
      body: appendBody(crypto.randomBytes(4).toString("hex"), 0, 1)
    },
    201
  )

export const captureReadReply = (origin: string, authorization: string, path: string) =>
  captureReply(origin + path, { headers: { authorization, accept: ATOM_JSON } }, 200)
