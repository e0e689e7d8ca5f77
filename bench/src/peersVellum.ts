/**
 * Vellum in `npm run bench:peers`, driven over HTTP as a client of the EventStoreDB interface would: appends
 * POST a JSON array of events (expected version any), reads GET forward pages with embed=body as Atom JSON,
 * as admin with basic auth, one keep-alive connection per client. The node itself is started by
 * httpProcesses.ts, as bench:http starts it.
 */
import { Client } from "undici"
import { allPagePaths, expectStatus } from "./httpPrefill.js"
import { ATOM_JSON, EVENTS_CONTENT_TYPE } from "./httpPlan.js"
import { GLOBAL_PAGE, benchEvents, fullPage, readStreamName, type PeerClient, type PeerTarget } from "./peersPlan.js"

type VellumTarget = Extract<PeerTarget, { peer: "vellum" }>

const appendHeaders = (authorization: string) => ({
  authorization,
  "content-type": EVENTS_CONTENT_TYPE,
  "es-expectedversion": "-2"
})

/** Writes the read data: `eventsPerStream` events to each of `streams` streams, in one append each, 16 at a time. */
export const prefillVellum = async (
  origin: string,
  authorization: string,
  streams: number,
  eventsPerStream: number
) => {
  let next = 0
  const appender = async () => {
    for (let k = next++; k < streams; k = next++) {
      const response = await fetch(`${origin}/streams/${readStreamName(k)}`, {
        method: "POST",
        headers: appendHeaders(authorization),
        body: JSON.stringify(benchEvents(eventsPerStream))
      })
      await expectStatus(response, 201, "prefill append")
      await response.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 16 }, appender))
}

/** The `$all` positions of the first `pages` full pages of GLOBAL_PAGE events from the start of the log. */
export const globalStarts = async (origin: string, authorization: string, pages: number): Promise<Array<string>> => {
  const paths = await allPagePaths(origin, authorization, pages, GLOBAL_PAGE)
  // A page's path is /streams/$all/{position}/forward/{count}.
  return paths.map((path) => path.split("/")[3]!)
}

const entriesOf = (body: string): number => (JSON.parse(body) as { entries: ReadonlyArray<unknown> }).entries.length

export const connectVellum = async (target: VellumTarget): Promise<PeerClient> => {
  const client = new Client(target.origin, {
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 30_000,
    bodyTimeout: 30_000
  })
  const postHeaders = appendHeaders(target.authorization)
  const getHeaders = { authorization: target.authorization, accept: ATOM_JSON }
  const page = async (path: string, count: number) => {
    const response = await client.request({ method: "GET", path, headers: getHeaders })
    const body = await response.body.text()
    if (response.statusCode !== 200) throw new Error(`GET ${path}: ${response.statusCode}`)
    return fullPage(entriesOf(body), count)
  }
  return {
    append: async (stream, events) => {
      const response = await client.request({
        method: "POST",
        path: `/streams/${stream}`,
        headers: postHeaders,
        body: JSON.stringify(events)
      })
      await response.body.dump()
      if (response.statusCode !== 201) throw new Error(`POST /streams/${stream}: ${response.statusCode}`)
      return events.length
    },
    readStream: (stream, from, count) => page(`/streams/${stream}/${from}/forward/${count}?embed=body`, count),
    readGlobal: (index, count) =>
      page(`/streams/$all/${target.globalStarts[index]}/forward/${count}?embed=body`, count),
    close: () => client.close().catch(() => client.destroy())
  }
}
