/**
 * Reading a node's log over HTTP as the projection tests need it: `$all` and single streams, every page, in
 * order, with links resolved so that each record says what it points at (`n@stream`).
 */
const Page = 4096
const atomJson = "application/vnd.eventstore.atom+json"

export type Client = (
  path: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string }
) => Promise<Response>

/** One record: its own stream and number, its type (a link's target's), and what it is or points at. */
export interface Rec {
  readonly stream: string
  readonly number: number
  readonly type: string
  readonly isLink: boolean
  /** `n@stream` of the event itself, or of a link's target. */
  readonly target: string
  readonly data: unknown
}

interface Entry {
  readonly eventType: string
  readonly eventNumber: number
  readonly streamId: string
  readonly positionEventNumber: number
  readonly positionStreamId: string
  readonly data?: unknown
}

interface Feed {
  readonly entries: ReadonlyArray<Entry>
  readonly links: ReadonlyArray<{ readonly uri: string; readonly relation: string }>
}

const parsed = (data: unknown) => {
  if (typeof data !== "string") return data
  try {
    return JSON.parse(data) as unknown
  } catch {
    return data
  }
}

const toRec = (e: Entry): Rec => ({
  stream: e.positionStreamId,
  number: e.positionEventNumber,
  type: e.eventType,
  isLink: e.positionStreamId !== e.streamId || e.positionEventNumber !== e.eventNumber,
  target: `${e.eventNumber}@${e.streamId}`,
  data: parsed(e.data)
})

const readFeed = async (client: Client, path: string): Promise<Feed | undefined> => {
  const r = await client(path, { headers: { Accept: atomJson, "ES-ResolveLinkTos": "true" } })
  if (r.status === 404) return undefined
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`)
  return (await r.json()) as Feed
}

/** Every record of `$all`, oldest first (a feed page lists its entries newest first). */
export const allRecords = async (client: Client): Promise<ReadonlyArray<Rec>> => {
  const records: Array<Rec> = []
  let path = `/streams/%24all/${"0".repeat(32)}/forward/${Page}?embed=body`
  for (;;) {
    const feed = await readFeed(client, path)
    if (feed === undefined || feed.entries.length === 0) return records
    records.push(...[...feed.entries].reverse().map(toRec))
    const previous = feed.links.find((l) => l.relation === "previous")
    if (previous === undefined) return records
    path = new URL(previous.uri).pathname + "?embed=body"
  }
}

/** Every event of `stream` by number (none when it does not exist). */
export const readStream = async (client: Client, stream: string): Promise<ReadonlyArray<Rec>> => {
  const records: Array<Rec> = []
  for (let from = 0; ; from += Page) {
    const feed = await readFeed(client, `/streams/${encodeURIComponent(stream)}/${from}/forward/${Page}?embed=body`)
    if (feed === undefined) return records
    const page = [...feed.entries].sort((a, b) => a.positionEventNumber - b.positionEventNumber)
    records.push(...page.map(toRec))
    if (page.length < Page) return records
  }
}

/** A stream's category as `$by_category` sees it by default: what precedes the first `-`; none for `$` streams. */
export const categoryOf = (stream: string): string | undefined => {
  if (stream.startsWith("$")) return undefined
  const at = stream.indexOf("-")
  return at > 0 ? stream.slice(0, at) : undefined
}
