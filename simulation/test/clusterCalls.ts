// Requests to the members of a simulated cluster, each answered by the member's own handler on the simulated
// clock, for tests that drive a service through the HTTP API of chosen members (the leader, a follower).
import { Exit } from "effect"
import type { Reply } from "@vellum/http"
import type { ClusterWorld } from "../src/cluster/clusterWorld.js"

export const Admin = `Basic ${Buffer.from("admin:changeit").toString("base64")}`

export interface Answer {
  readonly status: number
  readonly text: string
}

export type MemberCall = (
  name: string,
  method: string,
  url: string,
  headers?: Record<string, string>,
  body?: string
) => Answer

/** One request to a member's own handler, run on the simulated clock until it is answered (as admin). */
export const memberCall =
  (cluster: ClusterWorld): MemberCall =>
  (name, method, url, headers = {}, body) => {
    const member = cluster.member(name)
    const handler = cluster.open(name)!.handler
    const fiber = cluster.world.fork(
      name,
      handler({
        method,
        url,
        headers: { host: member.http, authorization: Admin, ...headers },
        body: body === undefined ? undefined : new TextEncoder().encode(body)
      })
    )
    cluster.world.run({ until: () => fiber.unsafePoll() !== null, maxSimMs: 30_000 })
    const exit = fiber.unsafePoll()
    if (exit === null || !Exit.isSuccess(exit)) throw new Error(`${method} ${url} on ${name} was not answered`)
    const reply = (exit as Exit.Success<Reply, unknown>).value
    const text =
      reply.body === undefined
        ? ""
        : typeof reply.body === "string"
          ? reply.body
          : new TextDecoder().decode(reply.body as Uint8Array)
    return { status: reply.status, text }
  }

/**
 * Asks again (after half a simulated second) until the answer passes `check`: a member that just became leader
 * loads its services first, and the default admin reaches a follower some time after it starts.
 */
export const callUntil = (
  cluster: ClusterWorld,
  call: MemberCall,
  check: (answer: Answer) => boolean,
  tries: number,
  name: () => string,
  method: string,
  url: string,
  headers?: Record<string, string>,
  body?: string
): Answer => {
  let last: Answer = { status: 0, text: "" }
  for (let i = 0; i < tries; i++) {
    const answer = call(name(), method, url, headers, body)
    if (check(answer)) return answer
    last = answer
    cluster.world.run({ until: () => false, maxSimMs: 500 })
  }
  throw new Error(`${method} ${url} never answered as expected: last ${last.status} ${last.text}`)
}
