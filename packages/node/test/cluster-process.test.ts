/**
 * A real 3-node cluster: three node processes on this machine (compiled node, free ports, temporary data
 * directories, one cluster secret), talking over real sockets. It proves, end to end and outside the simulator:
 * - the three elect one leader and two followers, as /info shows;
 * - an append through the leader is written there; one through a follower is answered with a 307 to the
 *   leader's absolute URL, and a client that sends it again there (credentials and body) gets it written;
 * - the leader SIGKILLed while concurrent writers append: the other two elect a new leader, which accepts
 *   writes; the killed node, restarted on its directory, rejoins as a follower;
 * - nothing acknowledged is lost: every event a writer got a 201 for is, once the nodes catch up, on all three
 *   nodes, and the three hold each stream identically.
 * Timings are the defaults'; every wait is a generous bound, and nothing is timed.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  appendEvent,
  readEventIds,
  sleep,
  startProcessCluster,
  waitForRoles,
  waitUntil,
  type Member,
  type ProcessCluster
} from "./clusterProcessSupport.js"

/** Bounds, not expectations: on a loaded 2-core machine an election or a catch-up may take a while. */
const ELECTION_MS = 30_000
const CATCH_UP_MS = 30_000
const WRITERS = 4

let cluster: ProcessCluster
beforeAll(async () => {
  cluster = await startProcessCluster(3)
}, 120_000)
afterAll(() => cluster?.dispose(), 30_000)

/** What the writers got a 201 for: event id -> stream. */
const acknowledged = new Map<string, string>()
const streamsWritten = new Set<string>()

const event = () => ({ eventId: randomUUID(), eventType: "written", data: { at: acknowledged.size } })

/** Appends through `member` until it is written (the default users appear on a new cluster shortly after its leader). */
const appendUntilWritten = (member: Member, stream: string) =>
  waitUntil(cluster, `an append through ${member.name}`, ELECTION_MS, async () => {
    const sent = event()
    const result = await appendEvent(member.url, stream, sent).catch(() => undefined)
    if (result?.status !== 201) return undefined
    acknowledged.set(sent.eventId, stream)
    streamsWritten.add(stream)
    return result
  })

/**
 * A writer: appends single events with fresh ids to its own stream, each through the next member in turn
 * (following 307s), and records every one acknowledged; a refused or failed append is not retried (its outcome
 * is unknown) and the writer pauses a moment before the next.
 */
const runWriter = async (writer: number, members: ReadonlyArray<Member>, stop: () => boolean) => {
  const stream = `load-${writer}`
  streamsWritten.add(stream)
  for (let turn = writer; !stop(); turn++) {
    const sent = event()
    const result = await appendEvent(members[turn % members.length]!.url, stream, sent).catch(() => undefined)
    if (result?.status === 201) acknowledged.set(sent.eventId, stream)
    else await sleep(100)
  }
}

describe("a cluster of three node processes", () => {
  // The steps run in order on the one cluster; each later step starts from the roles the first one saw.
  let firstRoles: { readonly leader: Member; readonly followers: ReadonlyArray<Member> } | undefined
  const roles = () => {
    if (firstRoles === undefined) throw new Error("no leader was elected (see the first step)")
    return firstRoles
  }

  it("elects one leader and two followers", async () => {
    firstRoles = await waitForRoles(cluster, cluster.members, ELECTION_MS)
    expect(firstRoles.followers).toHaveLength(2)
  }, 60_000)

  it("writes an append through the leader, and one through a follower after its 307 to the leader", async () => {
    const { leader, followers } = roles()
    const direct = await appendUntilWritten(leader, "direct")
    expect(direct.redirects).toEqual([])
    expect(direct.location).toMatch(new RegExp(`^${leader.url}/streams/direct/\\d+$`))

    const follower = followers[0]!
    const redirected = await appendUntilWritten(follower, "redirected")
    expect(redirected.redirects).toEqual([`${leader.url}/streams/redirected`])
    expect(redirected.location).toMatch(new RegExp(`^${leader.url}/streams/redirected/\\d+$`))
  }, 60_000)

  it("elects a new leader that takes writes when the leader is SIGKILLed under load", async () => {
    const { leader } = roles()
    let stopped = false
    const writers = Array.from({ length: WRITERS }, (_, writer) => runWriter(writer, cluster.members, () => stopped))
    try {
      const beforeKill = acknowledged.size
      await waitUntil(cluster, "writes acknowledged before the kill", CATCH_UP_MS, async () =>
        acknowledged.size >= beforeKill + 40 ? true : undefined
      )
      await cluster.kill(leader)
      const afterKill = acknowledged.size
      const survivors = cluster.members.filter((member) => member !== leader)
      const next = await waitForRoles(cluster, survivors, ELECTION_MS)
      // The writers go on through the new leader.
      await waitUntil(cluster, "writes acknowledged after the kill", CATCH_UP_MS, async () =>
        acknowledged.size >= afterKill + 40 ? true : undefined
      )
      const direct = await appendUntilWritten(next.leader, "after-failover")
      expect(direct.location).toMatch(new RegExp(`^${next.leader.url}/streams/after-failover/\\d+$`))
    } finally {
      stopped = true
      await Promise.all(writers)
    }
  }, 90_000)

  it("restarts the killed node on its directory, and it rejoins as a follower", async () => {
    const killed = roles().leader
    cluster.restart(killed)
    const after = await waitForRoles(cluster, cluster.members, ELECTION_MS)
    expect(after.followers).toContain(killed)
  }, 60_000)

  it("has every acknowledged event on all three nodes, each stream the same on each", async () => {
    expect(acknowledged.size).toBeGreaterThan(80)
    const streams = [...streamsWritten].sort()
    const holdings = await waitUntil(cluster, "every node holding every acknowledged event", CATCH_UP_MS, async () => {
      const byNode = await Promise.all(
        cluster.members.map(async (member) => {
          const read = await Promise.all(streams.map((stream) => readEventIds(member.url, stream)))
          return read.every((ids) => ids !== undefined) ? (read as ReadonlyArray<ReadonlyArray<string>>) : undefined
        })
      )
      if (byNode.some((read) => read === undefined)) return undefined
      const caughtUp = byNode.every((read) => {
        const held = new Set(read!.flat())
        return [...acknowledged.keys()].every((id) => held.has(id))
      })
      const agree = byNode.every((read) => JSON.stringify(read) === JSON.stringify(byNode[0]))
      return caughtUp && agree ? byNode : undefined
    })
    // Said again as assertions, for the record of what was checked.
    for (const read of holdings) {
      const held = new Set(read!.flat())
      expect([...acknowledged.keys()].filter((id) => !held.has(id))).toEqual([])
      expect(read).toEqual(holdings[0])
    }
  }, 60_000)
})
