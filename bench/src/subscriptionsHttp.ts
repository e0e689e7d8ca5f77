/**
 * What the parts of `npm run bench:subscriptions` share: the persistent subscription calls they make over HTTP
 * (create a group, read its `/info`), the bodies of the parked-link fill, and a client of the node's V8
 * inspector (full collections and the used heap, for the idle-group memory figures).
 */
import { WebSocket } from "undici"
import { eventId } from "./httpPlan.js"
import { expectStatus } from "./httpPrefill.js"

/** The competing feed in JSON (the reference's media type). */
export const COMPETING_JSON = "application/vnd.eventstore.competingatom+json"

/** `/subscriptions/{s}/{g}`, both escaped. */
export const groupPath = (stream: string, group: string) =>
  `/subscriptions/${encodeURIComponent(stream)}/${encodeURIComponent(group)}`

/** Creates a group on `stream` with `settings` (the rest at their defaults); fails unless 201. */
export const createGroup = async (
  origin: string,
  authorization: string,
  stream: string,
  group: string,
  settings: Readonly<Record<string, number | string | boolean>>
) => {
  const response = await fetch(origin + groupPath(stream, group), {
    method: "PUT",
    headers: { authorization, "content-type": "application/json" },
    body: JSON.stringify(settings)
  })
  await expectStatus(response, 201, `create ${stream}::${group}`)
  await response.arrayBuffer()
}

export interface GroupInfoFigures {
  readonly status: string
  readonly totalItemsProcessed: number
  readonly parkedMessageCount: number
}

/** GET `/subscriptions/{s}/{g}/info`: its figures and how long the answer took, in ms. */
export const readGroupInfo = async (
  origin: string,
  authorization: string,
  stream: string,
  group: string
): Promise<{ readonly info: GroupInfoFigures; readonly ms: number }> => {
  const started = performance.now()
  const response = await fetch(`${origin}${groupPath(stream, group)}/info`, {
    headers: { authorization, accept: "application/json" }
  })
  await expectStatus(response, 200, `info ${stream}::${group}`)
  const info = (await response.json()) as GroupInfoFigures
  return { info, ms: performance.now() - started }
}

/** The stream a group's parked messages are written to. */
export const parkedStreamOf = (stream: string, group: string) => `$persistentsubscription-${stream}::${group}-parked`

/**
 * One append of `count` parked-message links, numbered from `first`: each a `$>` event whose data points at
 * event `n mod targetEvents` of `target`, with the metadata a park writes (when, why, the event's number).
 */
export const parkedLinksBody = (
  salt: string,
  first: number,
  count: number,
  target: string,
  targetEvents: number
): string => {
  const events = new Array<string>(count)
  for (let i = 0; i < count; i++) {
    const n = first + i
    const number = n % targetEvents
    events[i] =
      `{"eventId":"${eventId(salt, n)}","eventType":"$>","data":"${number}@${target}",` +
      `"metadata":{"added":"2026-01-01T00:00:00Z","reason":"bench fill","subscriptionEventNumber":${number}}}`
  }
  return `[${events.join(",")}]`
}

export interface Inspector {
  /** A full, compacting collection of the node's heap. */
  readonly collectGarbage: () => Promise<void>
  /** V8's used and total heap, in bytes. */
  readonly heapUsage: () => Promise<{ readonly usedSize: number; readonly totalSize: number }>
  /** The node's `process.memoryUsage()` (resident, heap, external and array-buffer bytes). */
  readonly memoryUsage: () => Promise<NodeJS.MemoryUsage>
  readonly close: () => void
}

/** Connects to the inspector of a node started with `--inspect=127.0.0.1:{port}` (its first target). */
export const openInspector = async (port: number): Promise<Inspector> => {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    readonly webSocketDebuggerUrl: string
  }>
  const url = targets[0]?.webSocketDebuggerUrl
  if (url === undefined) throw new Error(`no inspector target on port ${port}`)
  const socket = new WebSocket(url)
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve()
    socket.onerror = () => reject(new Error(`the inspector at ${url} refused the connection`))
  })
  const pending = new Map<number, (result: unknown) => void>()
  let nextId = 1
  socket.onmessage = (message) => {
    const reply = JSON.parse(String(message.data)) as { readonly id?: number; readonly result?: unknown }
    if (reply.id === undefined) return
    pending.get(reply.id)?.(reply.result)
    pending.delete(reply.id)
  }
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++
      pending.set(id, resolve)
      socket.send(JSON.stringify({ id, method, params }))
    })
  return {
    collectGarbage: async () => {
      await call("HeapProfiler.collectGarbage")
    },
    heapUsage: async () => (await call("Runtime.getHeapUsage")) as { usedSize: number; totalSize: number },
    memoryUsage: async () => {
      const answer = (await call("Runtime.evaluate", {
        expression: "process.memoryUsage()",
        returnByValue: true
      })) as { readonly result: { readonly value: NodeJS.MemoryUsage } }
      return answer.result.value
    },
    close: () => socket.close()
  }
}
